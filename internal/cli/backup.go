package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/bunting-flags/bunting/internal/config"
	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/store"
)

// databaseFileConfig is the configuration of backup and restore: the
// server's database options, and the backup file.
type databaseFileConfig struct {
	DatabaseURL, DatabasePath string
	File                      string
}

func (c *databaseFileConfig) options(fileFlag, usage string) []config.Option {
	return append(server.DatabaseOptions(&c.DatabaseURL, &c.DatabasePath),
		config.Option{Name: fileFlag, Flag: fileFlag, Shown: "— (required)", Usage: usage, Value: config.NonEmpty(&c.File)})
}

// parse reads the environment and the flags; the file flag is required.
func (c *databaseFileConfig) parse(name, fileFlag, usage string, args []string, env LookupEnv, stderr io.Writer) error {
	opts := c.options(fileFlag, usage)
	config.Defaults(opts)
	if err := config.Load(name, opts, env, args, stderr); err != nil {
		return err
	}
	if c.File == "" {
		return fmt.Errorf("%s needs -%s FILE", name, fileFlag)
	}
	if store.IsPostgresURL(c.DatabaseURL) {
		return fmt.Errorf("%s works on the SQLite file; for PostgreSQL use pg_dump and pg_restore (see docs/operations.md#backups)", name)
	}
	if c.DatabaseURL != "" {
		return fmt.Errorf("DATABASE_URL must be a postgres:// URL or empty")
	}
	return nil
}

// runBackup copies the SQLite database to a new file while servers run.
func runBackup(ctx context.Context, args []string, env LookupEnv, stdout, stderr io.Writer) error {
	var c databaseFileConfig
	if err := c.parse("bunting backup", "to", "the backup file to write (must not exist)", args, env, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	info, err := store.BackupSQLite(ctx, c.DatabasePath, c.File)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Backed up %s to %s: %s.\n", c.DatabasePath, c.File, describeBackup(info))
	return nil
}

// runRestore replaces the SQLite database with a backup; no server may run
// on it.
func runRestore(ctx context.Context, args []string, env LookupEnv, stdout, stderr io.Writer) error {
	var c databaseFileConfig
	if err := c.parse("bunting restore", "from", "the backup file to restore", args, env, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	info, err := store.RestoreSQLite(ctx, c.File, c.DatabasePath)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Restored %s into %s: %s. Start Bunting on it.\n", c.File, c.DatabasePath, describeBackup(info))
	return nil
}

func describeBackup(i store.BackupInfo) string {
	return fmt.Sprintf("%d flags, %d events, schema version %05d, %d bytes", i.Flags, i.Events, i.SchemaVersion, i.Bytes)
}
