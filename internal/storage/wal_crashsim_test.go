package storage_test

import (
	"os"
	"path/filepath"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/paddockhq/paddock/internal/storage"
)

// TestWALCrashInRollEveryOffset simulates a crash in the middle of a roll
// into a spare segment, before its rename reached the disk, at every byte
// of the roll's write: the spare holds what the write got to (its bytes
// from k on read as the zeros they were). Every copy opens; the entries of
// the earlier segment and the hard state are all there, and the log is a
// prefix of what was written.
func TestWALCrashInRollEveryOffset(t *testing.T) {
	const segBytes = 64 << 10
	dir := t.TempDir()
	w, err := storage.OpenWAL(dir, storage.WALOptions{SegmentBytes: segBytes, PreallocateAfter: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	hs := raftpb.HardState{Term: 2, Vote: 1, Commit: 1}
	save(t, w, batch{hs: hs, ents: ents(1, 3, 2)})
	waitSpare(t, w)
	waitRoll, release := holdRoll(t, w)
	save(t, w, batch{ents: ents(4, 6, 2)}) // into the spare
	waitRoll()
	crashed := t.TempDir()
	copyDir(t, dir, crashed)
	release()
	spare, err := os.ReadFile(filepath.Join(crashed, storage.SpareName))
	if err != nil {
		t.Fatal(err)
	}
	end := len(spare)
	for end > 0 && spare[end-1] == 0 {
		end--
	}
	for k := 0; k <= end; k++ {
		d := t.TempDir()
		copyDir(t, crashed, d)
		b := append(append([]byte(nil), spare[:k]...), make([]byte, len(spare)-k)...)
		must(t, os.WriteFile(filepath.Join(d, storage.SpareName), b, 0o640))
		cw, err := storage.OpenWAL(d, storage.WALOptions{SegmentBytes: segBytes, PreallocateAfter: -1})
		if err != nil {
			t.Fatalf("crash at byte %d of the roll: %v", k, err)
		}
		gotHS, es, _, err := cw.ReadAll(0)
		must(t, cw.Close())
		if err != nil {
			t.Fatalf("crash at byte %d of the roll: %v", k, err)
		}
		if gotHS != hs || len(es) < 3 || len(es) > 6 {
			t.Fatalf("crash at byte %d of the roll: hard state %+v and %d entries, want %+v and 3..6", k, gotHS, len(es), hs)
		}
		sameEntries(t, es, ents(1, uint64(len(es)), 2))
		if k == end && len(es) != 6 {
			t.Fatalf("the whole roll written: %d entries, want 6", len(es))
		}
	}
}
