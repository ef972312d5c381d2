// Command bunting is the Bunting feature-flag service: the flag server,
// the client proxy, or both in one process.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/bunting-flags/bunting/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
