package storage_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/storage"
)

// TestLockSnapshotDir checks the snapshot directory's lock: one holder at
// a time, named in the error, released by release; and independent of the
// WAL's lock, so one process may hold both on a shared directory.
func TestLockSnapshotDir(t *testing.T) {
	dir := t.TempDir()
	release, err := storage.LockSnapshotDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = storage.LockSnapshotDir(dir)
	if !errors.Is(err, storage.ErrLocked) || !strings.Contains(err.Error(), dir) ||
		!strings.Contains(err.Error(), "snapshot directory") {
		t.Fatalf("LockSnapshotDir of a locked directory = %v", err)
	}
	w := openWAL(t, dir, 0) // the WAL in the same directory: its own lock
	if _, err := storage.LockWALDir(dir); !errors.Is(err, storage.ErrLocked) {
		t.Fatalf("LockWALDir on an open WAL = %v", err)
	}
	w.Close()
	if err := release(); err != nil {
		t.Fatal(err)
	}
	release, err = storage.LockSnapshotDir(dir)
	if err != nil {
		t.Fatalf("LockSnapshotDir after release: %v", err)
	}
	_ = release()
	if _, err := storage.LockSnapshotDir(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("LockSnapshotDir of a missing directory succeeded")
	}
}
