package storage

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
)

// TestWALWaitsForFillingSpare checks that a full segment goes on past its
// size limit and its preallocation while the next spare is still being
// filled, instead of rolling into a segment that is not preallocated (and
// rolling again as soon as the spare is ready), up to twice the segment
// size; then it rolls into a new file after all. The log reads back whole.
func TestWALWaitsForFillingSpare(t *testing.T) {
	const segBytes = 64 << 10
	dir := t.TempDir()
	w, next := moveToSpare(t, dir, segBytes, false)
	if w.spare != nil {
		w.spare.discard()
	}
	stalled := &spareSegment{path: filepath.Join(dir, "never"), done: make(chan struct{}), quit: make(chan struct{})}
	w.spare = stalled
	data := func(i uint64) []byte { return bytes.Repeat([]byte{byte(i)}, 1000) }
	save := func() {
		t.Helper()
		e := raftpb.Entry{Index: next, Term: 1, Data: data(next)}
		if err := w.Save(raftpb.HardState{Term: 1, Commit: next - 1}, []raftpb.Entry{e}); err != nil {
			t.Fatal(err)
		}
		next++
	}
	prealloc := w.prealloc
	for w.size+1100 <= 2*segBytes {
		save()
		if len(w.segs) != 2 {
			t.Fatalf("the WAL rolled at %d bytes (limit %d) while the spare was being filled", w.size, segBytes)
		}
	}
	fi, err := os.Stat(w.segs[1].path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() <= prealloc {
		t.Fatalf("segment is %d bytes, want more than its preallocation (%d)", fi.Size(), prealloc)
	}
	for i := 0; len(w.segs) < 3; i++ {
		if i > 10 {
			t.Fatalf("no roll past twice the segment size: %d bytes", w.size)
		}
		save()
	}
	stalled.err = errSpareStopped
	close(stalled.done)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	checkLog(t, dir, next-1, next-2, data)
}
