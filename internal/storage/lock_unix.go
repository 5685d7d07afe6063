//go:build unix

package storage

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile opens path and takes an exclusive flock(2) on it without waiting.
// The lock goes away when the file is closed or the process dies. kind
// names what the directory holds, for the error when the lock is taken.
func lockFile(path, kind string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("storage: opening lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &lockedError{path: path, kind: kind} // errors.Is(err, ErrLocked)
		}
		return nil, fmt.Errorf("storage: locking %s: %w", path, err)
	}
	return f, nil
}
