package proxy

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// StorageProvider keeps the last upstream payload so that a restarted
// proxy can serve it while upstream is down. Get returns nil data and no
// error when nothing is stored under key.
type StorageProvider interface {
	Get(ctx context.Context, key string) ([]byte, error)
	Set(ctx context.Context, key string, data []byte) error
}

// FileStorage is the default StorageProvider: one JSON file per key in
// Dir (the system temporary directory when empty).
type FileStorage struct {
	Dir string
}

func (f FileStorage) path(key string) string {
	dir := f.Dir
	if dir == "" {
		dir = os.TempDir()
	}
	safe := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r < ' ' {
			return '_'
		}
		return r
	}, key)
	return filepath.Join(dir, "bunting-proxy-backup-"+safe+".json")
}

// Get reads the file of key.
func (f FileStorage) Get(_ context.Context, key string) ([]byte, error) {
	data, err := os.ReadFile(f.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// Set replaces the file of key atomically.
func (f FileStorage) Set(_ context.Context, key string, data []byte) error {
	p := f.path(key)
	tmp, err := os.CreateTemp(filepath.Dir(p), filepath.Base(p)+".*.tmp")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), p)
}
