package storage_test

import (
	"bytes"
	"fmt"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/paddockhq/paddock/internal/storage"
)

// TestWALOverwriteAcrossRoll checks a new leader's entries replacing a
// follower's uncommitted tail (a Save whose first index is at or below the
// last one saved) followed by a roll before the log is back to where it
// was: the new segment then starts below the one before it. The WAL must
// open again and read back exactly the surviving entries, and releasing
// segments up to a snapshot index must keep every entry above it. Each run
// fills the segment a little more before the overwrite, so that some roll
// comes right after it; both roll paths (a new file, a ready spare) are
// covered.
func TestWALOverwriteAcrossRoll(t *testing.T) {
	tests := []struct {
		name     string
		segBytes int64
		prealloc int64 // WALOptions.PreallocateAfter
		dataLen  int   // payload bytes of each entry
		fills    int   // runs, each saving one more entry before the overwrite
	}{
		{name: "new files", segBytes: 400, prealloc: -1, dataLen: 20, fills: 12},
		{name: "spares", segBytes: 4096, prealloc: 1, dataLen: 300, fills: 14},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entry := func(i, term uint64) raftpb.Entry {
				d := bytes.Repeat([]byte{byte(i), byte(term)}, tt.dataLen/2)
				return raftpb.Entry{Index: i, Term: term, Data: d}
			}
			below := 0 // runs in which a segment started below its predecessor
			for fill := range tt.fills {
				t.Run(fmt.Sprintf("fill %d", fill), func(t *testing.T) {
					dir := t.TempDir()
					opts := storage.WALOptions{SegmentBytes: tt.segBytes, PreallocateAfter: tt.prealloc}
					w, err := storage.OpenWAL(dir, opts)
					if err != nil {
						t.Fatal(err)
					}
					var want []raftpb.Entry
					saveOne := func(e raftpb.Entry) {
						t.Helper()
						if tt.prealloc > 0 && len(want) > 0 { // the first save starts the first spare
							waitSpare(t, w) // so that every roll takes one
						}
						save(t, w, batch{hs: raftpb.HardState{Term: e.Term, Vote: 1}, ents: []raftpb.Entry{e}})
						if n := len(want); n > 0 && e.Index <= want[n-1].Index {
							want = want[:e.Index-want[0].Index]
						}
						want = append(want, e)
					}
					i := uint64(1)
					for ; len(w.SegmentPaths()) < 3; i++ {
						if i > 1000 {
							t.Fatal("fewer than 3 segments after 1000 entries")
						}
						saveOne(entry(i, 1))
					}
					for range fill {
						saveOne(entry(i, 1))
						i++
					}
					segs := w.SegmentPaths()
					_, first := parseSegName(t, segs[len(segs)-1])
					o := first - 2 // a few below the current segment's first index
					for j := o; len(w.SegmentPaths()) == len(segs); j++ {
						if j > o+1000 {
							t.Fatal("no roll after 1000 entries")
						}
						saveOne(entry(j, 2))
					}
					after := w.SegmentPaths()
					if got := fileSize(t, after[len(after)-1]); tt.prealloc > 0 && got != tt.segBytes {
						t.Fatalf("the roll did not take a spare: the new segment is %d bytes, want %d", got, tt.segBytes)
					}
					_, prev := parseSegName(t, after[len(after)-2])
					if _, cur := parseSegName(t, after[len(after)-1]); cur < prev {
						below++
					}
					if err := w.Close(); err != nil {
						t.Fatal(err)
					}

					w, err = storage.OpenWAL(dir, opts)
					if err != nil {
						t.Fatalf("reopening after entries %d.. were overwritten and the WAL rolled: %v", o, err)
					}
					_, es := readEntries(t, w, 0)
					sameEntries(t, es, want)
					last := want[len(want)-1].Index
					if got := w.LastIndex(); got != last {
						t.Fatalf("LastIndex after reopening = %d, want %d", got, last)
					}
					// A snapshot at o-1 (below the overwrite, so
					// committed): the released segments held nothing
					// that survives above it.
					n := len(w.SegmentPaths())
					if err := w.ReleaseTo(o - 1); err != nil {
						t.Fatal(err)
					}
					if len(w.SegmentPaths()) == n {
						t.Fatalf("ReleaseTo(%d) released none of %d segments", o-1, n)
					}
					if err := w.Close(); err != nil {
						t.Fatal(err)
					}
					w, err = storage.OpenWAL(dir, opts)
					if err != nil {
						t.Fatalf("reopening after ReleaseTo(%d): %v", o-1, err)
					}
					defer w.Close()
					_, es = readEntries(t, w, o-1)
					sameEntries(t, es, want[o-1:])
					if got := w.LastIndex(); got != last {
						t.Fatalf("LastIndex after ReleaseTo(%d) = %d, want %d", o-1, got, last)
					}
				})
			}
			if below == 0 && !t.Failed() {
				t.Fatalf("no run rolled before the overwritten tail was rewritten: the test no longer covers the case")
			}
			t.Logf("%d of %d runs started a segment below its predecessor", below, tt.fills)
		})
	}
}

// readEntries is readAll without the snapshot marker.
func readEntries(t testing.TB, w *storage.WAL, after uint64) (raftpb.HardState, []raftpb.Entry) {
	t.Helper()
	hs, es, _ := readAll(t, w, after)
	return hs, es
}
