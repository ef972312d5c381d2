//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes a BSD lock (flock) on f without waiting: shared for a
// server, exclusive for a restore. It reports errLocked when the other
// kind is held. flock is independent of the POSIX locks SQLite itself uses,
// so the two never interfere.
func lockFile(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errLocked
		default:
			return err
		}
	}
}
