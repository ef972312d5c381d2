package cli

import (
	"context"
	"errors"
	"io"
)

// runProxy runs the client proxy. Filled in by the proxy work.
func runProxy(ctx context.Context, args []string, env LookupEnv, stdout, stderr io.Writer) error {
	return errors.New("the proxy command is not available in this build yet")
}
