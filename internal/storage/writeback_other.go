//go:build !linux

package storage

import "os"

// fileRangeSyncer returns nil: only Linux has sync_file_range(2), and the
// final fsync alone makes the file durable.
func fileRangeSyncer(*os.File) rangeSyncer { return nil }

// datasync makes f's data durable; without fdatasync(2) that is fsync.
func datasync(f *os.File) error { return f.Sync() }
