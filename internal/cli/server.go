package cli

import (
	"context"
	"errors"
	"io"
)

// runServer runs the flag server. Filled in by the server work.
func runServer(ctx context.Context, args []string, env LookupEnv, stdout, stderr io.Writer) error {
	return errors.New("the server command is not available in this build yet")
}
