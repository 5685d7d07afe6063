package storage_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/paddockhq/paddock/internal/storage"
)

// waitSpare waits (bounded) until w has a filled spare segment.
func waitSpare(t *testing.T, w *storage.WAL) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !w.SpareReady() {
		if time.Now().After(deadline) {
			t.Fatal("the spare segment was not filled within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestWALPreallocatedSegments checks the preallocated segment life cycle:
// once PreallocateAfter bytes are written a zero-filled spare is prepared,
// the WAL moves to it at once and then writes over its zeros (the file's
// length does not change, which is what spares fsyncs the inode), a full
// preallocated segment gives back its unused end when the WAL moves on, and
// reopening — after a clean close or a crash — reads the zeros as the end of
// the log, logging no torn tail.
func TestWALPreallocatedSegments(t *testing.T) {
	const segBytes = 64 << 10
	dir := t.TempDir()
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	open := func() *storage.WAL {
		w, err := storage.OpenWAL(dir, storage.WALOptions{SegmentBytes: segBytes, PreallocateAfter: 1, Logger: logger})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	w := open()
	save(t, w, batch{ents: ents(1, 1, 1)})
	first := w.SegmentPaths()[0]
	waitSpare(t, w)
	if _, err := os.Stat(filepath.Join(dir, storage.SpareName)); err != nil {
		t.Fatalf("spare file: %v", err)
	}

	// The next save goes to the spare, renamed into place as segment 1.
	save(t, w, batch{ents: ents(2, 2, 1)})
	segs := w.SegmentPaths()
	if len(segs) != 2 {
		t.Fatalf("after the spare was ready: %d segments, want 2", len(segs))
	}
	cur := segs[1]
	if got := fileSize(t, cur); got != segBytes {
		t.Fatalf("preallocated segment is %d bytes, want %d", got, segBytes)
	}
	// Writes go over the zeros: the file keeps its length.
	var all []raftpb.Entry
	all = append(all, ents(1, 2, 1)...)
	for i := uint64(3); i <= 20; i++ {
		save(t, w, batch{ents: ents(i, i, 1)})
		all = append(all, ents(i, i, 1)...)
	}
	if got := fileSize(t, cur); got != segBytes {
		t.Fatalf("after 18 more saves the preallocated segment is %d bytes, want %d", got, segBytes)
	}
	if got := fileSize(t, first); got >= segBytes {
		t.Fatalf("the first, not preallocated, segment is %d bytes", got)
	}

	// A crash now: the directory as it is, zeros and all, recovers every
	// entry without calling anything torn.
	crashed := t.TempDir()
	copyDir(t, dir, crashed)
	_ = os.Remove(filepath.Join(crashed, storage.SpareName)) // OpenWAL would remove it too
	cw, err := storage.OpenWAL(crashed, storage.WALOptions{SegmentBytes: segBytes, PreallocateAfter: -1, Logger: logger})
	if err != nil {
		t.Fatalf("reopening a copy of the running WAL: %v", err)
	}
	_, es, _ := readAll(t, cw, 0)
	sameEntries(t, es, all)
	save(t, cw, batch{ents: ents(21, 21, 1)})
	_, es, _ = readAll(t, cw, 0)
	sameEntries(t, es, concat(all, ents(21, 21, 1)))
	cw.Close()

	// Fill segment 1 and more: each full preallocated segment is cut to its
	// records when the WAL moves on, and the next one is a spare again.
	big := make([]byte, 10<<10)
	for i := uint64(21); len(w.SegmentPaths()) < 5; i++ {
		if i > 200 {
			t.Fatal("no fifth segment after 200 saves of 10 KiB")
		}
		waitSpare(t, w) // so that every roll takes a spare
		e := raftpb.Entry{Index: i, Term: 1, Data: big}
		save(t, w, batch{ents: []raftpb.Entry{e}})
		all = append(all, e)
	}
	segs = w.SegmentPaths()
	for _, p := range segs[1 : len(segs)-1] {
		if got := fileSize(t, p); got >= segBytes || got < segBytes-(11<<10) {
			t.Fatalf("full segment %s is %d bytes, want its records only (just under %d)", filepath.Base(p), got, segBytes)
		}
	}
	if got := fileSize(t, segs[len(segs)-1]); got != segBytes {
		t.Fatalf("current segment is %d bytes, want %d (preallocated)", got, segBytes)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, storage.SpareName)); !os.IsNotExist(err) {
		t.Fatalf("spare file after Close: %v", err)
	}

	w = open()
	defer w.Close()
	_, es, _ = readAll(t, w, 0)
	sameEntries(t, es, all)
	n := uint64(len(all)) + 1
	save(t, w, batch{ents: ents(n, n, 2)})
	_, es, _ = readAll(t, w, 0)
	sameEntries(t, es, concat(all, ents(n, n, 2)))
	if bytes.Contains(logs.Bytes(), []byte("torn")) {
		t.Fatalf("a preallocated segment was taken for a torn tail:\n%s", logs.String())
	}
}

// TestWALPreallocateOff checks that a negative PreallocateAfter never fills
// a spare, and that the default waits for DefaultPreallocateAfter bytes.
func TestWALPreallocateOff(t *testing.T) {
	for _, tt := range []struct {
		name  string
		after int64
	}{{"never", -1}, {"default", 0}} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := storage.OpenWAL(dir, storage.WALOptions{SegmentBytes: 64 << 10, PreallocateAfter: tt.after})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			for i := uint64(1); i <= 50; i++ {
				save(t, w, batch{ents: ents(i, i, 1)})
			}
			time.Sleep(20 * time.Millisecond)
			if _, err := os.Stat(filepath.Join(dir, storage.SpareName)); !os.IsNotExist(err) {
				t.Fatalf("a spare exists after 50 small saves: %v", err)
			}
			if w.SpareReady() {
				t.Fatal("spare ready")
			}
		})
	}
}

// TestWALSpareSizes checks that spares start at 4 MiB and grow with what
// the WAL has written, up to the segment size.
func TestWALSpareSizes(t *testing.T) {
	const segBytes = 16 << 20
	dir := t.TempDir()
	w, err := storage.OpenWAL(dir, storage.WALOptions{SegmentBytes: segBytes, PreallocateAfter: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	data := make([]byte, 1<<20)
	save(t, w, batch{ents: []raftpb.Entry{{Index: 1, Term: 1, Data: data}}})
	var sizes []int64
	for i := uint64(2); len(sizes) < 4; i++ {
		if i > 64 {
			t.Fatalf("only %d preallocated segments after 64 MiB: %v", len(sizes), sizes)
		}
		waitSpare(t, w)
		before := len(w.SegmentPaths())
		save(t, w, batch{ents: []raftpb.Entry{{Index: i, Term: 1, Data: data}}})
		if segs := w.SegmentPaths(); len(segs) > before {
			sizes = append(sizes, fileSize(t, segs[len(segs)-1]))
		}
	}
	// Written when each spare was started: 1 MiB (the first save), then
	// just after each roll: about 2, 6 and 10 MiB.
	want := []int64{4 << 20, 4 << 20, 8<<20 + 2<<20, segBytes}
	for i := range want {
		if sizes[i] < want[i] || sizes[i] > segBytes {
			t.Fatalf("preallocated segment sizes %v, want at least %v and at most %d", sizes, want, segBytes)
		}
	}
	t.Logf("preallocated segment sizes: %v", sizes)
	if sizes[3] != segBytes {
		t.Fatalf("the fourth preallocated segment is %d bytes, want the segment size %d (sizes %v)", sizes[3], segBytes, sizes)
	}
}
