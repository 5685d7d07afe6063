package storage_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/paddockhq/paddock/internal/storage"
)

// ents returns entries lo..hi (inclusive) of term, with data naming both.
func ents(lo, hi, term uint64) []raftpb.Entry {
	var es []raftpb.Entry
	for i := lo; i <= hi; i++ {
		es = append(es, raftpb.Entry{Index: i, Term: term, Data: []byte(fmt.Sprintf("entry-%d-term-%d", i, term))})
	}
	return es
}

type batch struct {
	hs   raftpb.HardState
	ents []raftpb.Entry
}

func openWAL(t testing.TB, dir string, segmentBytes int64) *storage.WAL {
	t.Helper()
	w, err := storage.OpenWAL(dir, storage.WALOptions{SegmentBytes: segmentBytes, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("OpenWAL(%s): %v", dir, err)
	}
	return w
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func save(t testing.TB, w *storage.WAL, bs ...batch) {
	t.Helper()
	for _, b := range bs {
		if err := w.Save(b.hs, b.ents); err != nil {
			t.Fatalf("Save: %v", err)
		}
	}
}

func readAll(t testing.TB, w *storage.WAL, after uint64) (raftpb.HardState, []raftpb.Entry, storage.SnapshotMarker) {
	t.Helper()
	hs, es, m, err := w.ReadAll(after)
	if err != nil {
		t.Fatalf("ReadAll(%d): %v", after, err)
	}
	return hs, es, m
}

func sameEntries(t testing.TB, got, want []raftpb.Entry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d (got %v)", len(got), len(want), describe(got))
	}
	for i := range got {
		if got[i].Index != want[i].Index || got[i].Term != want[i].Term || !bytes.Equal(got[i].Data, want[i].Data) {
			t.Fatalf("entry %d: got %d/%d %q, want %d/%d %q", i, got[i].Index, got[i].Term, got[i].Data,
				want[i].Index, want[i].Term, want[i].Data)
		}
	}
}

func describe(es []raftpb.Entry) string {
	var parts []string
	for _, e := range es {
		parts = append(parts, fmt.Sprintf("%d/%d", e.Index, e.Term))
	}
	return strings.Join(parts, " ")
}

func concat(ss ...[]raftpb.Entry) []raftpb.Entry {
	var out []raftpb.Entry
	for _, s := range ss {
		out = append(out, s...)
	}
	return out
}

func TestWALReadAll(t *testing.T) {
	hs1 := raftpb.HardState{Term: 1, Vote: 1, Commit: 3}
	hs2 := raftpb.HardState{Term: 2, Vote: 2, Commit: 5}
	tests := []struct {
		name    string
		batches []batch
		after   uint64
		wantHS  raftpb.HardState
		want    []raftpb.Entry
		wantErr bool
	}{
		{name: "empty"},
		{name: "hard state only", batches: []batch{{hs: hs1}}, wantHS: hs1},
		{
			name:    "appends",
			batches: []batch{{ents: ents(1, 3, 1)}, {hs: hs1, ents: ents(4, 6, 1)}},
			wantHS:  hs1,
			want:    ents(1, 6, 1),
		},
		{
			name:    "new leader overwrites a suffix",
			batches: []batch{{hs: hs1, ents: ents(1, 6, 1)}, {hs: hs2, ents: ents(4, 5, 2)}},
			wantHS:  hs2,
			want:    concat(ents(1, 3, 1), ents(4, 5, 2)),
		},
		{
			name:    "overwrite then append",
			batches: []batch{{ents: ents(1, 6, 1)}, {ents: ents(2, 2, 2)}, {ents: ents(3, 4, 3)}},
			want:    concat(ents(1, 1, 1), ents(2, 2, 2), ents(3, 4, 3)),
		},
		{
			name:    "after a snapshot index",
			batches: []batch{{ents: ents(1, 10, 1)}},
			after:   7,
			want:    ents(8, 10, 1),
		},
		{
			name:    "overwrite at or below the snapshot index drops later ones",
			batches: []batch{{ents: ents(1, 10, 1)}, {ents: ents(6, 6, 2)}},
			after:   7,
		},
		{
			name:    "entries start above the snapshot index",
			batches: []batch{{ents: ents(5, 10, 1)}},
			after:   2,
			wantErr: true,
		},
		{
			name:    "snapshot index after every entry",
			batches: []batch{{hs: hs1, ents: ents(1, 3, 1)}},
			after:   20,
			wantHS:  hs1,
		},
		{
			name:    "hole in the log",
			batches: []batch{{ents: ents(1, 3, 1)}, {ents: ents(5, 6, 1)}},
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			w := openWAL(t, dir, 0)
			save(t, w, tt.batches...)
			check := func(w *storage.WAL) {
				hs, es, _, err := w.ReadAll(tt.after)
				if tt.wantErr {
					if !errors.Is(err, storage.ErrCorrupt) {
						t.Fatalf("ReadAll(%d) err = %v, want corruption", tt.after, err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if hs != tt.wantHS {
					t.Fatalf("hard state %+v, want %+v", hs, tt.wantHS)
				}
				sameEntries(t, es, tt.want)
			}
			check(w)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			w = openWAL(t, dir, 0)
			defer w.Close()
			check(w)
		})
	}
}

func TestWALReopenAndAppend(t *testing.T) {
	dir := t.TempDir()
	w := openWAL(t, dir, 0)
	save(t, w, batch{hs: raftpb.HardState{Term: 1, Commit: 2}, ents: ents(1, 3, 1)})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("second Close = %v, want ErrClosed", err)
	}
	if err := w.Save(raftpb.HardState{}, ents(4, 4, 1)); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("Save after Close = %v, want ErrClosed", err)
	}
	w = openWAL(t, dir, 0)
	if got := w.LastIndex(); got != 3 {
		t.Fatalf("LastIndex after reopen = %d, want 3", got)
	}
	save(t, w, batch{hs: raftpb.HardState{Term: 1, Commit: 5}, ents: ents(4, 5, 1)})
	w.Close()
	w = openWAL(t, dir, 0)
	defer w.Close()
	hs, es, _ := readAll(t, w, 0)
	sameEntries(t, es, ents(1, 5, 1))
	if hs.Commit != 5 {
		t.Fatalf("commit %d, want 5", hs.Commit)
	}
}

func TestWALLocksDirectory(t *testing.T) {
	dir := t.TempDir()
	w := openWAL(t, dir, 0)
	if _, err := storage.OpenWAL(dir, storage.WALOptions{}); err == nil || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("second OpenWAL = %v, want a lock error", err)
	}
	w.Close()
	w2 := openWAL(t, dir, 0)
	w2.Close()
}

func TestWALSyncsOncePerSave(t *testing.T) {
	dir := t.TempDir()
	w := openWAL(t, dir, 0)
	defer w.Close()
	save(t, w, batch{hs: raftpb.HardState{Term: 1, Vote: 1, Commit: 1}, ents: ents(1, 1, 1)})
	tests := []struct {
		name      string
		b         batch
		wantSyncs uint64
	}{
		{"many entries and a hard state", batch{hs: raftpb.HardState{Term: 1, Vote: 1, Commit: 2}, ents: ents(2, 100, 1)}, 1},
		{"one entry", batch{ents: ents(101, 101, 1)}, 1},
		{"commit only", batch{hs: raftpb.HardState{Term: 1, Vote: 1, Commit: 101}}, 0},
		{"new term", batch{hs: raftpb.HardState{Term: 2, Vote: 1, Commit: 101}}, 1},
		{"new vote", batch{hs: raftpb.HardState{Term: 2, Vote: 3, Commit: 101}}, 1},
		{"nothing", batch{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := w.Stats()
			save(t, w, tt.b)
			after := w.Stats()
			if got := after.Syncs - before.Syncs; got != tt.wantSyncs {
				t.Fatalf("Save did %d fsyncs, want %d", got, tt.wantSyncs)
			}
			if (len(tt.b.ents) > 0 || tt.b.hs != raftpb.HardState{}) && after.BytesWritten <= before.BytesWritten {
				t.Fatalf("Save wrote no bytes")
			}
		})
	}
}

// walPastSnapshot opens a WAL in dir with 1 KiB segments and writes 200
// committed entries and a snapshot marker at index 120.
func walPastSnapshot(t *testing.T, dir string) *storage.WAL {
	t.Helper()
	w := openWAL(t, dir, 1024)
	for i := uint64(1); i <= 200; i++ {
		save(t, w, batch{hs: raftpb.HardState{Term: 1, Vote: 1, Commit: i}, ents: ents(i, i, 1)})
	}
	if err := w.SaveSnapshotMarker(storage.SnapshotMarker{Index: 120, Term: 1}); err != nil {
		t.Fatal(err)
	}
	return w
}

// reopenReleased closes w, opens the WAL in dir again and checks that it
// replays entries 121 to 210 after the marker at 120, with commit index
// commit; it returns the reopened WAL.
func reopenReleased(t *testing.T, w *storage.WAL, dir string, commit uint64) *storage.WAL {
	t.Helper()
	w.Close()
	w = openWAL(t, dir, 1024)
	hs, es, m := readAll(t, w, 120)
	sameEntries(t, es, ents(121, 210, 1))
	if hs.Commit != commit || m.Index != 120 {
		t.Fatalf("after release: hard state %+v marker %+v", hs, m)
	}
	return w
}

func TestWALRolloverAndRelease(t *testing.T) {
	dir := t.TempDir()
	w := walPastSnapshot(t, dir)
	save(t, w, batch{ents: ents(201, 210, 1)})
	segs := w.SegmentPaths()
	if len(segs) < 5 {
		t.Fatalf("only %d segments after 210 entries with 1 KiB segments", len(segs))
	}
	if got := w.Stats().Segments; got != int64(len(segs)) {
		t.Fatalf("Stats().Segments = %d, want %d", got, len(segs))
	}
	var prevFirst uint64
	for i, p := range segs {
		seq, first := parseSegName(t, p)
		if seq != uint64(i) || (i > 0 && first <= prevFirst) {
			t.Fatalf("segment %d is %s", i, filepath.Base(p))
		}
		if fi, err := os.Stat(p); err != nil || (i < len(segs)-1 && fi.Size() > 1024) {
			t.Fatalf("segment %s: size %v err %v, want at most 1024", p, fi.Size(), err)
		}
		prevFirst = first
	}
	_, es, m := readAll(t, w, 0)
	sameEntries(t, es, ents(1, 210, 1))
	if m != (storage.SnapshotMarker{Index: 120, Term: 1}) {
		t.Fatalf("marker %+v", m)
	}

	if err := w.ReleaseTo(120); err != nil {
		t.Fatal(err)
	}
	left := w.SegmentPaths()
	if len(left) >= len(segs) {
		t.Fatalf("ReleaseTo(120) removed nothing: %v", left)
	}
	if _, first := parseSegName(t, left[0]); first > 121 {
		t.Fatalf("first kept segment %s starts after 121", left[0])
	}
	w = reopenReleased(t, w, dir, 200)
	defer w.Close()
	if _, _, _, err := w.ReadAll(0); !errors.Is(err, storage.ErrCorrupt) {
		t.Fatalf("ReadAll(0) after release = %v, want an error about missing entries", err)
	}
	if err := w.ReleaseTo(1 << 40); err != nil {
		t.Fatal(err)
	}
	if got := len(w.SegmentPaths()); got != 1 {
		t.Fatalf("ReleaseTo(huge) left %d segments, want only the open one", got)
	}
	hs, _, m := readAll(t, w, 210)
	if hs.Commit != 200 || m.Index != 120 {
		t.Fatalf("the last segment lost state: hard state %+v marker %+v", hs, m)
	}
}

// TestWALReleaseDeletesLater checks Release: the segments leave the WAL at
// once, appends go on, and their files are deleted only when the returned
// function runs (outside the WAL's lock, in the server).
func TestWALReleaseDeletesLater(t *testing.T) {
	dir := t.TempDir()
	w := walPastSnapshot(t, dir)
	before := w.SegmentPaths()
	remove, err := w.Release(120)
	if err != nil {
		t.Fatal(err)
	}
	kept := w.SegmentPaths()
	if len(kept) >= len(before) || w.Stats().Segments != int64(len(kept)) {
		t.Fatalf("Release(120): %d segments of %d left, Stats says %d", len(kept), len(before), w.Stats().Segments)
	}
	released := before[:len(before)-len(kept)]
	for _, p := range released {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("released segment %s deleted before remove ran: %v", p, err)
		}
	}
	save(t, w, batch{hs: raftpb.HardState{Term: 1, Vote: 1, Commit: 210}, ents: ents(201, 210, 1)})
	if err := remove(); err != nil {
		t.Fatal(err)
	}
	for _, p := range released {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("released segment %s still there after remove: %v", p, err)
		}
	}
	w = reopenReleased(t, w, dir, 210)
	w.Close()
}

// TestWALOpenAfterInterruptedRelease checks a crash in the middle of
// freeing released segments: one renamed out of the log and half freed,
// the others not yet touched. The WAL opens, deletes the half-freed file
// and replays from the snapshot marker as before.
func TestWALOpenAfterInterruptedRelease(t *testing.T) {
	dir := t.TempDir()
	w := walPastSnapshot(t, dir)
	before := w.SegmentPaths()
	if _, err := w.Release(120); err != nil {
		t.Fatal(err)
	}
	released := before[:len(before)-len(w.SegmentPaths())]
	if len(released) < 2 {
		t.Fatalf("Release(120) released %d segments, want several", len(released))
	}
	save(t, w, batch{hs: raftpb.HardState{Term: 1, Vote: 1, Commit: 210}, ents: ents(201, 210, 1)})
	// The oldest released segment was being freed when the crash came.
	drop := released[0] + storage.DropSuffix
	must(t, os.Rename(released[0], drop))
	must(t, os.Truncate(drop, 300))
	w = reopenReleased(t, w, dir, 210)
	defer w.Close()
	if _, err := os.Stat(drop); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("half-freed segment left after open: %v", err)
	}
	for _, p := range released[1:] {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("released segment %s not yet freed is gone: %v", p, err)
		}
	}
}

func TestWALRolloverWithoutEntries(t *testing.T) {
	dir := t.TempDir()
	w := openWAL(t, dir, 200)
	save(t, w, batch{hs: raftpb.HardState{Term: 1, Commit: 1}, ents: ents(1, 1, 1)})
	for round := range 3 {
		// Markers alone fill segments, so segments start with no entry in them.
		for i := range 20 {
			if err := w.SaveSnapshotMarker(storage.SnapshotMarker{Index: 1, Term: 1}); err != nil {
				t.Fatalf("round %d marker %d: %v", round, i, err)
			}
		}
		w.Close()
		w = openWAL(t, dir, 200)
	}
	defer w.Close()
	segs := w.SegmentPaths()
	if len(segs) < 4 {
		t.Fatalf("only %d segments", len(segs))
	}
	for _, p := range segs[1:] {
		if _, first := parseSegName(t, p); first != 2 {
			t.Fatalf("segment %s: first index %d, want 2", filepath.Base(p), first)
		}
	}
	save(t, w, batch{ents: ents(2, 3, 1)})
	_, es, m := readAll(t, w, 0)
	sameEntries(t, es, ents(1, 3, 1))
	if m.Index != 1 {
		t.Fatalf("marker %+v", m)
	}
}

func parseSegName(t testing.TB, p string) (seq, first uint64) {
	t.Helper()
	base := strings.TrimSuffix(filepath.Base(p), ".wal")
	a, b, ok := strings.Cut(base, "-")
	s, err1 := strconv.ParseUint(a, 16, 64)
	f, err2 := strconv.ParseUint(b, 16, 64)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("bad segment name %s", p)
	}
	return s, f
}

// buildTail writes entries 1..5 and then entry 6 alone, so that entry 6 is
// the last record. It returns the last segment and where entry 6 starts and
// ends.
func buildTail(t *testing.T, dir string) (path string, start, end int64) {
	t.Helper()
	w := openWAL(t, dir, 0)
	save(t, w, batch{hs: raftpb.HardState{Term: 1, Vote: 1, Commit: 5}, ents: ents(1, 5, 1)})
	path = w.SegmentPaths()[0]
	start = fileSize(t, path)
	save(t, w, batch{ents: ents(6, 6, 1)})
	end = fileSize(t, path)
	w.Close()
	return path, start, end
}

func fileSize(t testing.TB, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func copyDir(t testing.TB, from, to string) {
	t.Helper()
	des, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		b, err := os.ReadFile(filepath.Join(from, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, de.Name()), b, 0o640); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWALTornTailEveryLength(t *testing.T) {
	orig := t.TempDir()
	path, start, end := buildTail(t, orig)
	for cut := start; cut < end; cut++ {
		dir := t.TempDir()
		copyDir(t, orig, dir)
		p := filepath.Join(dir, filepath.Base(path))
		if err := os.Truncate(p, cut); err != nil {
			t.Fatal(err)
		}
		w, err := storage.OpenWAL(dir, storage.WALOptions{})
		if err != nil {
			t.Fatalf("cut at %d of record %d..%d: OpenWAL: %v", cut, start, end, err)
		}
		hs, es, _ := readAll(t, w, 0)
		sameEntries(t, es, ents(1, 5, 1))
		if hs.Commit != 5 {
			t.Fatalf("cut at %d: commit %d", cut, hs.Commit)
		}
		// A torn tail is cut off, unless it is all zeros: that reads as
		// the unused end of a preallocated segment and is written over.
		want := start
		if zerosFrom(t, filepath.Join(orig, filepath.Base(path)), start, cut) {
			want = cut
		}
		if got := fileSize(t, p); got != want {
			t.Fatalf("cut at %d: file is %d bytes after recovery, want %d", cut, got, want)
		}
		// The log goes on where the torn record was.
		save(t, w, batch{ents: ents(6, 6, 2)})
		_, es, _ = readAll(t, w, 0)
		sameEntries(t, es, concat(ents(1, 5, 1), ents(6, 6, 2)))
		w.Close()
	}
}

func TestWALTornTailGarbage(t *testing.T) {
	tests := []struct {
		name      string
		damage    func(b []byte, start int64) []byte
		keepLast  bool // the last record is intact
		keepZeros bool // the damage is zeros to the end, which stay (as a preallocated segment's)
	}{
		{"last record checksum", func(b []byte, start int64) []byte { b[start+5] ^= 1; return b }, false, false},
		{"last record payload", func(b []byte, _ int64) []byte { b[len(b)-1] ^= 0x80; return b }, false, false},
		{"last record length", func(b []byte, start int64) []byte { b[start] = 0x7f; return b }, false, false},
		{"last record type", func(b []byte, start int64) []byte { b[start+8] = 9; return b }, false, false},
		{"zeroed last record", func(b []byte, start int64) []byte { clear(b[start:]); return b }, false, true},
		{"zeros after the last record", func(b []byte, _ int64) []byte { return append(b, make([]byte, 4096)...) }, true, true},
		{"half a header after the last record", func(b []byte, start int64) []byte { return append(b, b[start:start+5]...) }, true, false},
		{"random bytes after the last record", func(b []byte, _ int64) []byte {
			r := rand.New(rand.NewPCG(1, 2))
			for range 256 << 10 {
				b = append(b, byte(r.Uint32()))
			}
			return b
		}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path, start, end := buildTail(t, dir)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			damaged := tt.damage(b, start)
			if err := os.WriteFile(path, damaged, 0o640); err != nil {
				t.Fatal(err)
			}
			w := openWAL(t, dir, 0)
			defer w.Close()
			want, wantSize := ents(1, 5, 1), start
			if tt.keepLast {
				want, wantSize = ents(1, 6, 1), end
			}
			if tt.keepZeros {
				wantSize = int64(len(damaged))
			}
			_, es, _ := readAll(t, w, 0)
			sameEntries(t, es, want)
			if got := fileSize(t, path); got != wantSize {
				t.Fatalf("file is %d bytes after recovery, want %d", got, wantSize)
			}
			// The log goes on after the last good record, over any zeros.
			next := uint64(len(want)) + 1
			save(t, w, batch{ents: ents(next, next, 2)})
			_, es, _ = readAll(t, w, 0)
			sameEntries(t, es, concat(want, ents(next, next, 2)))
		})
	}
}

// buildRecords writes entries 1..n, one per Save and no hard state, and
// returns where each entry record starts, per segment.
func buildRecords(t *testing.T, dir string, segmentBytes int64, n uint64) (offsets map[string][]int64) {
	t.Helper()
	const segmentHeaderLen = 36 // a segment without hard state or marker holds only its header
	w := openWAL(t, dir, segmentBytes)
	offsets = map[string][]int64{}
	for i := uint64(1); i <= n; i++ {
		before := w.SegmentPaths()
		last := before[len(before)-1]
		size := fileSize(t, last)
		save(t, w, batch{ents: ents(i, i, 1)})
		after := w.SegmentPaths()
		if cur := after[len(after)-1]; cur != last {
			offsets[cur] = append(offsets[cur], segmentHeaderLen)
			continue
		}
		offsets[last] = append(offsets[last], size)
	}
	w.Close()
	return offsets
}

func TestWALCorruption(t *testing.T) {
	tests := []struct {
		name         string
		segmentBytes int64
		pick         func(segs []string) string // the segment to damage
		recordIdx    func(n int) int            // which of its records
	}{
		{"middle of the last segment", 0, func(s []string) string { return s[len(s)-1] }, func(n int) int { return n / 2 }},
		{"first record of the last segment", 0, func(s []string) string { return s[len(s)-1] }, func(int) int { return 0 }},
		{"last record of an earlier segment", 400, func(s []string) string { return s[0] }, func(n int) int { return n - 1 }},
		{"middle of an earlier segment", 400, func(s []string) string { return s[1] }, func(n int) int { return n / 2 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			offsets := buildRecords(t, dir, tt.segmentBytes, 20)
			w := openWAL(t, dir, tt.segmentBytes)
			segs := w.SegmentPaths()
			w.Close()
			target := tt.pick(segs)
			offs := offsets[target]
			if len(offs) < 2 {
				t.Fatalf("segment %s has %d single-entry records; segments %v", target, len(offs), segs)
			}
			off := offs[tt.recordIdx(len(offs))]
			b, err := os.ReadFile(target)
			if err != nil {
				t.Fatal(err)
			}
			b[off+12] ^= 0x01 // a payload byte
			if err := os.WriteFile(target, b, 0o640); err != nil {
				t.Fatal(err)
			}
			_, err = storage.OpenWAL(dir, storage.WALOptions{SegmentBytes: tt.segmentBytes})
			var ce *storage.CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, storage.ErrCorrupt) {
				t.Fatalf("OpenWAL = %v, want a CorruptError", err)
			}
			if ce.Path != target || ce.Offset != off {
				t.Fatalf("error names %s offset %d, want %s offset %d", ce.Path, ce.Offset, target, off)
			}
			if msg := err.Error(); !strings.Contains(msg, target) || !strings.Contains(msg, strconv.FormatInt(off, 10)) {
				t.Fatalf("message %q does not name the file and offset", msg)
			}
			if got := fileSize(t, target); got != int64(len(b)) {
				t.Fatalf("a corrupt file was modified: %d bytes, was %d", got, len(b))
			}
		})
	}
}

func TestWALDamagedStructure(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, segs []string)
	}{
		{"missing middle segment", func(t *testing.T, segs []string) { must(t, os.Remove(segs[1])) }},
		{"damaged header of the last segment", func(t *testing.T, segs []string) { flipByte(t, segs[len(segs)-1], 20) }},
		{"damaged magic of the first segment", func(t *testing.T, segs []string) { flipByte(t, segs[0], 0) }},
		{"renamed segment", func(t *testing.T, segs []string) {
			must(t, os.Rename(segs[2], filepath.Join(filepath.Dir(segs[2]), "0000000000000002-0000000000000001.wal")))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			buildRecords(t, dir, 400, 30)
			w := openWAL(t, dir, 400)
			segs := w.SegmentPaths()
			w.Close()
			if len(segs) < 3 {
				t.Fatalf("want 3 segments or more, have %v", segs)
			}
			tt.damage(t, segs)
			if _, err := storage.OpenWAL(dir, storage.WALOptions{}); !errors.Is(err, storage.ErrCorrupt) {
				t.Fatalf("OpenWAL = %v, want corruption", err)
			}
		})
	}
}

func TestWALRemovesHalfCreatedSegment(t *testing.T) {
	dir := t.TempDir()
	w := openWAL(t, dir, 0)
	save(t, w, batch{ents: ents(1, 3, 1)})
	w.Close()
	tmp := filepath.Join(dir, "0000000000000001-0000000000000004.wal.tmp")
	must(t, os.WriteFile(tmp, []byte("PDCKWAL"), 0o640))
	w = openWAL(t, dir, 0)
	defer w.Close()
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("half-created segment still there: %v", err)
	}
	_, es, _ := readAll(t, w, 0)
	sameEntries(t, es, ents(1, 3, 1))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func flipByte(t testing.TB, path string, off int) {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	b[off] ^= 0xff
	must(t, os.WriteFile(path, b, 0o640))
}

func BenchmarkWALSave(b *testing.B) {
	for _, n := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			w, err := storage.OpenWAL(b.TempDir(), storage.WALOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			data := bytes.Repeat([]byte("x"), 128)
			batch := make([]raftpb.Entry, n)
			index := uint64(0)
			b.SetBytes(int64(n * len(data)))
			for b.Loop() {
				for i := range batch {
					index++
					batch[i] = raftpb.Entry{Term: 1, Index: index, Data: data}
				}
				if err := w.Save(raftpb.HardState{Term: 1, Vote: 1, Commit: index}, batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(index)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}

// zerosFrom reports whether bytes from..to of the file at path are all zero.
func zerosFrom(t *testing.T, path string, from, to int64) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range b[from:to] {
		if c != 0 {
			return false
		}
	}
	return true
}

// TestOpenWALCreatesDirectories checks that OpenWAL creates the WAL
// directory and the parents it lacks.
func TestOpenWALCreatesDirectories(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "log")
	w := openWAL(t, dir, 0)
	save(t, w, batch{ents: ents(1, 1, 1)})
	must(t, w.Close())
	w = openWAL(t, dir, 0)
	defer w.Close()
	_, es, _ := readAll(t, w, 0)
	sameEntries(t, es, ents(1, 1, 1))
}
