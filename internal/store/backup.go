package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// errLocked is what lockFile reports when another process holds the lock.
var errLocked = errors.New("locked")

// holdSQLite takes the shared lock a running server keeps on its SQLite
// file, which tells `bunting restore` (it needs the lock exclusively) that
// the database is in use. Any number of servers and backups share it.
func holdSQLite(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f, false); err != nil {
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, fmt.Errorf("the database %s is being restored (bunting restore holds it); start Bunting once the restore has finished", path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}

// DatabaseInUseError refuses a restore while a Bunting process has the
// SQLite database open.
type DatabaseInUseError struct{ Path string }

func (e *DatabaseInUseError) Error() string {
	return fmt.Sprintf("the database %s is in use by a running Bunting: stop it (every server using this file) before restoring", e.Path)
}

// BackupInfo describes a backup file.
type BackupInfo struct {
	// Bytes is the file's size.
	Bytes int64
	// SchemaVersion is the highest migration applied in it.
	SchemaVersion int64
	// Flags and Events count its flags (archived ones too) and events.
	Flags, Events int64
}

// BackupSQLite writes a consistent copy of the SQLite database at path to
// the new file to, while servers keep reading and writing it: VACUUM INTO
// copies what one read transaction sees (in WAL mode, writers go on), so
// every change is in the copy with its event, or neither is. The copy is
// written under a temporary name beside to and renamed when complete and
// checked, so a file named to is always a whole backup. It does not run
// migrations and does not create a database that is not there.
func BackupSQLite(ctx context.Context, path, to string) (BackupInfo, error) {
	if _, err := os.Stat(path); err != nil {
		return BackupInfo{}, fmt.Errorf("no SQLite database to back up: %w", err)
	}
	to, err := filepath.Abs(to)
	if err != nil {
		return BackupInfo{}, err
	}
	if _, err := os.Lstat(to); err == nil {
		return BackupInfo{}, fmt.Errorf("%s exists: back up to a new file", to)
	}
	tmp, err := tempName(to)
	if err != nil {
		return BackupInfo{}, err
	}
	defer os.Remove(tmp)
	db, err := openSQLite(path)
	if err != nil {
		return BackupInfo{}, err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO $1`, tmp); err != nil {
		return BackupInfo{}, fmt.Errorf("copy %s: %w", path, err)
	}
	info, err := InspectBackup(ctx, tmp)
	if err != nil {
		return BackupInfo{}, fmt.Errorf("the copy does not check out: %w", err)
	}
	if err := syncFile(tmp); err != nil {
		return BackupInfo{}, err
	}
	// Link, not rename: a file created at to meanwhile is not replaced.
	if err := os.Link(tmp, to); err != nil {
		return BackupInfo{}, err
	}
	return info, syncDir(filepath.Dir(to))
}

// InspectBackup checks that file is a whole Bunting SQLite database that
// this binary can run on (not written by a newer Bunting) and describes it.
func InspectBackup(ctx context.Context, file string) (BackupInfo, error) {
	st, err := os.Stat(file)
	if err != nil {
		return BackupInfo{}, err
	}
	if !st.Mode().IsRegular() {
		return BackupInfo{}, fmt.Errorf("%s is not a file", file)
	}
	db, err := sql.Open("sqlite", "file:"+sqliteURIPath.Replace(file)+"?mode=ro")
	if err != nil {
		return BackupInfo{}, err
	}
	defer db.Close()
	var check string
	if err := db.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&check); err != nil {
		return BackupInfo{}, fmt.Errorf("%s is not an SQLite database: %w", file, err)
	}
	if check != "ok" {
		return BackupInfo{}, fmt.Errorf("%s is damaged: %s", file, check)
	}
	versions, err := appliedVersions(ctx, db, sqliteDialect)
	if err != nil || len(versions) == 0 {
		return BackupInfo{}, fmt.Errorf("%s is not a Bunting database (no schema version)", file)
	}
	if err := checkSchemaKnown(ctx, db, sqliteDialect); err != nil {
		return BackupInfo{}, err
	}
	info := BackupInfo{Bytes: st.Size(), SchemaVersion: versions[len(versions)-1]}
	if err := db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM features), (SELECT COUNT(*) FROM events)`).Scan(&info.Flags, &info.Events); err != nil {
		return BackupInfo{}, fmt.Errorf("%s is not a Bunting database: %w", file, err)
	}
	return info, nil
}

// RestoreSQLite replaces the SQLite database at path with the backup from,
// and refuses (DatabaseInUseError) while a Bunting process has path open.
// The backup is checked first (InspectBackup), copied beside path and
// renamed over it, so path is the old database or the whole backup, never
// a mix; the old database's WAL files go with it. A backup from an older
// Bunting is migrated when the server next starts.
func RestoreSQLite(ctx context.Context, from, path string) (BackupInfo, error) {
	info, err := InspectBackup(ctx, from)
	if err != nil {
		return BackupInfo{}, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return BackupInfo{}, err
	}
	// The exclusive lock is held until the new file is in place; a server
	// starting meanwhile finds it taken and stops.
	target, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return BackupInfo{}, err
	}
	defer target.Close()
	if err := lockFile(target, true); err != nil {
		if errors.Is(err, errLocked) {
			return BackupInfo{}, &DatabaseInUseError{Path: path}
		}
		return BackupInfo{}, fmt.Errorf("lock %s: %w", path, err)
	}
	tmp, err := tempName(path)
	if err != nil {
		return BackupInfo{}, err
	}
	defer os.Remove(tmp)
	if err := copyFile(from, tmp); err != nil {
		return BackupInfo{}, err
	}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return BackupInfo{}, err
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return BackupInfo{}, err
	}
	return info, syncDir(filepath.Dir(path))
}

// tempName is an unused name beside path.
func tempName(path string) (string, error) {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return path + ".partial-" + hex.EncodeToString(b), nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// syncDir makes a rename or a link in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
