//go:build !linux

package storage

import "os"

// fileRangeSyncer returns nil: only Linux has sync_file_range(2), and the
// final fsync alone makes the file durable.
func fileRangeSyncer(*os.File) rangeSyncer { return nil }
