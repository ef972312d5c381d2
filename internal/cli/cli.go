// Package cli dispatches the bunting subcommands. Each subcommand parses its
// own typed configuration once (environment, then command-line flags, which
// win) and runs until its context is cancelled.
package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/bunting-flags/bunting/internal/buildinfo"
)

// LookupEnv reads an environment variable; os.LookupEnv in production, a map
// in tests.
type LookupEnv func(string) (string, bool)

// Run executes the subcommand named by args[0] and returns the exit code.
func Run(ctx context.Context, args []string, env LookupEnv, stdout, stderr io.Writer) int {
	cmd, rest := "", args
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, rest = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "":
		err = runAll(ctx, rest, env, stdout, stderr)
	case "server":
		err = runServer(ctx, rest, env, stdout, stderr)
	case "proxy":
		err = runProxy(ctx, rest, env, stdout, stderr)
	case "backup":
		err = runBackup(ctx, rest, env, stdout, stderr)
	case "restore":
		err = runRestore(ctx, rest, env, stdout, stderr)
	case "flags":
		return runFlags(ctx, rest, env, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "bunting", buildinfo.Get())
		return 0
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "bunting: unknown command %q\n\n", cmd)
		usage(stderr)
		return 2
	}
	if err != nil {
		if err == errUsage {
			return 2
		}
		fmt.Fprintln(stderr, "bunting:", err)
		return 1
	}
	return 0
}

// errUsage means the command already printed a usage message.
var errUsage = fmt.Errorf("usage")

func usage(w io.Writer) {
	fmt.Fprint(w, `Usage: bunting [command] [flags]

Commands:
  (none)    run the flag server and the client proxy in one process (for trying it out)
  server    run the flag server: admin API, client API, frontend API, signal endpoints
  proxy     run the stateless client proxy in front of an upstream flag server
  backup    copy the SQLite database to a new file (-to FILE) while servers run
  restore   replace the SQLite database with a backup (-from FILE); stop the servers first
  flags     keep flags in a file (git): export, diff, apply (see "bunting flags")
  version   print the version, commit and build date
  help      print this help

Run "bunting <command> -h" for the flags of a command. Every flag can also be
set by its environment variable; flags win.
`)
}

// versionString is the version the proxy reports upstream.
func versionString() string { return buildinfo.Get().Version }
