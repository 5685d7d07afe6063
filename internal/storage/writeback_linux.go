//go:build linux

package storage

import (
	"os"

	"golang.org/x/sys/unix"
)

// fileRangeSyncer returns f's sync_file_range(2).
func fileRangeSyncer(f *os.File) rangeSyncer {
	raw, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	return func(off, n int64, flags int) error {
		var serr error
		if err := raw.Control(func(fd uintptr) { serr = unix.SyncFileRange(int(fd), off, n, flags) }); err != nil {
			return err
		}
		return serr
	}
}
