package storage

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
)

// TestReadAllSeesStagedHardState checks that ReadAll returns the last hard
// state saved, as documented, also when it is a commit-only change that
// direct appends keep staged until the next synced append.
func TestReadAllSeesStagedHardState(t *testing.T) {
	dir := t.TempDir()
	w, next := moveToSpare(t, dir, 16<<20, false)
	defer w.Close()
	if w.dt == nil {
		t.Skip("no direct appends on this system")
	}
	want := raftpb.HardState{Term: 1, Commit: next - 1}
	if err := w.Save(want, nil); err != nil {
		t.Fatal(err)
	}
	hs, ents, _, err := w.ReadAll(0)
	if err != nil {
		t.Fatal(err)
	}
	if hs != want || uint64(len(ents)) != next-1 {
		t.Fatalf("ReadAll after a commit-only Save: hard state %+v and %d entries, want %+v and %d", hs, len(ents), want, next-1)
	}
}

// TestCloseAfterFailedRollClosesPreviousSegment checks that a WAL whose
// first write into a spare segment failed (the roll's background part,
// which closes the previous segment, never started) still closes every
// file it holds when it is closed.
func TestCloseAfterFailedRollClosesPreviousSegment(t *testing.T) {
	if setDirect == nil {
		t.Skip("no direct appends on this system")
	}
	dir := t.TempDir()
	w, err := OpenWAL(dir, WALOptions{PreallocateAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Save(raftpb.HardState{Term: 1}, []raftpb.Entry{{Index: 1, Term: 1, Data: []byte("one")}}); err != nil {
		t.Fatal(err)
	}
	// A ready spare whose file refuses writes: the roll's first write fails.
	path := filepath.Join(dir, spareName)
	if err := os.WriteFile(path, make([]byte, 64<<10), 0o640); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	close(done)
	w.spare = &spareSegment{path: path, size: 64 << 10, done: done, quit: make(chan struct{}), f: f}
	old := w.f
	if err := w.Save(raftpb.HardState{Term: 1}, []raftpb.Entry{{Index: 2, Term: 1, Data: []byte("two")}}); err == nil {
		t.Fatal("Save into a spare that refuses writes succeeded")
	}
	_ = w.Close()
	if err := old.Close(); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("the previous segment is still open after Close (closing it again: %v)", err)
	}
	if err := f.Close(); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("the spare segment is still open after Close (closing it again: %v)", err)
	}
}
