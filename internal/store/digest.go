package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
)

// MigrationDigest is a hex SHA-256 of the embedded migrations of a dialect
// ("sqlite" or "postgres"): their file names and contents, in the order
// they run. Two builds with the same digest migrate a database to the same
// schema, so a migrated database can stand for any other with that digest
// (test databases are copied from such a template).
func MigrationDigest(dialect string) (string, error) {
	var dir string
	switch dialect {
	case sqliteDialect.Name:
		dir = sqliteDialect.dir
	case postgresDialect.Name:
		dir = postgresDialect.dir
	default:
		return "", fmt.Errorf("unknown dialect %q", dialect)
	}
	entries, err := fs.ReadDir(migrationFiles, dir) // sorted by name, the order goose runs them
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, e := range entries {
		b, err := fs.ReadFile(migrationFiles, dir+"/"+e.Name())
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", e.Name(), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
