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

// datasync makes f's data durable with fdatasync(2): with the WAL's
// segments preallocated, an append changes only the file's data and
// timestamps, and fdatasync leaves the timestamps out (a growing file's
// length is still written, as reading the data back needs it).
func datasync(f *os.File) error {
	raw, err := f.SyscallConn()
	if err == nil {
		cerr := raw.Control(func(fd uintptr) {
			for err = unix.Fdatasync(int(fd)); err == unix.EINTR; err = unix.Fdatasync(int(fd)) {
			}
		})
		if cerr != nil {
			err = cerr
		}
	}
	if err != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
	}
	return nil
}

// errInvalid is the error a filesystem gives a direct write it cannot do.
var errInvalid error = unix.EINVAL

// setDirect turns direct I/O (O_DIRECT) on or off for f.
var setDirect = func(f *os.File, on bool) error {
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		flags, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		if err != nil {
			serr = err
			return
		}
		if on {
			flags |= unix.O_DIRECT
		} else {
			flags &^= unix.O_DIRECT
		}
		_, serr = unix.FcntlInt(fd, unix.F_SETFL, flags)
	}); err != nil {
		return err
	}
	return serr
}

// mapMemory maps n bytes of anonymous memory, page-aligned, outside the Go
// heap, and returns them with the function that unmaps them.
var mapMemory = func(n int) ([]byte, func(), error) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { _ = unix.Munmap(b) }, nil
}
