//go:build !linux

package storage

import (
	"errors"
	"os"
)

// fileRangeSyncer returns nil: only Linux has sync_file_range(2), and the
// final fsync alone makes the file durable.
func fileRangeSyncer(*os.File) rangeSyncer { return nil }

// datasync makes f's data durable; without fdatasync(2) that is fsync.
func datasync(f *os.File) error { return f.Sync() }

// errInvalid is unused without direct I/O.
var errInvalid = errors.New("storage: invalid argument")

// setDirect is nil: direct I/O is used on Linux only.
var setDirect func(f *os.File, on bool) error

// mapMemory is nil: readWhole's buffers come from the Go heap.
var mapMemory func(n int) ([]byte, func(), error)
