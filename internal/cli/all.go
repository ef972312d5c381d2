package cli

import (
	"context"
	"errors"
	"io"
)

// runAll runs the server and a proxy wired to it in one process.
func runAll(ctx context.Context, args []string, env LookupEnv, stdout, stderr io.Writer) error {
	return errors.New("the all-in-one mode is not available in this build yet: run 'bunting help'")
}
