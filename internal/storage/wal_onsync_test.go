package storage_test

import (
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/paddockhq/paddock/internal/storage"
)

// TestWALOnSync checks that OnSync hears of every fsync Stats counts, with
// a positive duration.
func TestWALOnSync(t *testing.T) {
	var got []time.Duration
	w, err := storage.OpenWAL(t.TempDir(), storage.WALOptions{Logger: testLogger(t),
		OnSync: func(d time.Duration) { got = append(got, d) }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	before := w.Stats().Syncs
	for i := uint64(1); i <= 3; i++ {
		if err := w.Save(raftpb.HardState{Term: 1, Commit: i}, ents(i, i, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if syncs := w.Stats().Syncs - before; uint64(len(got)) != syncs || syncs < 3 {
		t.Fatalf("OnSync called %d times, Stats counts %d fsyncs (want at least 3)", len(got), syncs)
	}
	for i, d := range got {
		if d <= 0 {
			t.Errorf("fsync %d took %v", i, d)
		}
	}
}
