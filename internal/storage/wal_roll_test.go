package storage_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/paddockhq/paddock/internal/storage"
)

// TestWALRollToSpare checks a roll into a ready spare segment: the new
// segment's header and first batch take one fsync; the rename happens in the
// background, and a crash before it reaches the disk loses nothing: OpenWAL
// adopts the spare that holds a valid header of the next segment, removes
// one whose header was never written, and refuses one whose header names
// another segment. The next spare is not filled (under the same name) until
// the rename is done.
func TestWALRollToSpare(t *testing.T) {
	const segBytes = 64 << 10
	dir := t.TempDir()
	// Only the reopened copies log to logs, from the test's goroutine.
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	w, err := storage.OpenWAL(dir, storage.WALOptions{SegmentBytes: segBytes, PreallocateAfter: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	hs := raftpb.HardState{Term: 1, Vote: 1, Commit: 1}
	save(t, w, batch{hs: hs, ents: ents(1, 1, 1)})
	waitSpare(t, w)

	waitRoll, release := holdRoll(t, w)
	syncs := w.Stats().Syncs
	save(t, w, batch{ents: ents(2, 2, 1)}) // into the spare
	if got := w.Stats().Syncs - syncs; got != 1 {
		t.Fatalf("the roll into the spare and its first batch took %d fsyncs, want 1", got)
	}
	waitRoll()
	segs := w.SegmentPathsNow()
	if len(segs) != 2 {
		t.Fatalf("%d segments after the roll, want 2", len(segs))
	}
	next := segs[1]
	if _, err := os.Stat(next); !os.IsNotExist(err) {
		t.Fatalf("segment %s exists before its rename: %v", filepath.Base(next), err)
	}
	// This save starts the next spare, whose filling must wait for the
	// rename: the spare's name is still the live segment's.
	save(t, w, batch{ents: ents(3, 3, 1)})
	time.Sleep(20 * time.Millisecond) // a filling that did not wait would have truncated it by now
	crashed, blank, wrong := t.TempDir(), t.TempDir(), t.TempDir()
	for _, d := range []string{crashed, blank, wrong} {
		copyDir(t, dir, d)
	}
	release()
	if err := w.FinishRoll(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(next); err != nil {
		t.Fatalf("segment after the rename: %v", err)
	}

	reopen := func(d string) (*storage.WAL, error) {
		return storage.OpenWAL(d, storage.WALOptions{SegmentBytes: segBytes, PreallocateAfter: -1, Logger: logger})
	}
	// A crash before the rename reached the disk: the spare is listed as
	// the last segment and adopted.
	listed, err := storage.ListWALSegments(crashed)
	if err != nil || len(listed) != 2 || filepath.Base(listed[1].Path) != storage.SpareName || listed[1].Seq != 1 {
		t.Fatalf("ListWALSegments of the crashed copy = %+v, %v; want 2 segments, the spare as segment 1", listed, err)
	}
	cw, err := reopen(crashed)
	if err != nil {
		t.Fatalf("reopening with the new segment under the spare's name: %v", err)
	}
	gotHS, es, _ := readAll(t, cw, 0)
	sameEntries(t, es, ents(1, 3, 1))
	if gotHS != hs {
		t.Fatalf("hard state %+v, want %+v", gotHS, hs)
	}
	cw.Close()
	if _, err := os.Stat(filepath.Join(crashed, filepath.Base(next))); err != nil {
		t.Fatalf("adopted segment: %v", err)
	}
	if _, err := os.Stat(filepath.Join(crashed, storage.SpareName)); !os.IsNotExist(err) {
		t.Fatalf("spare file after adoption: %v", err)
	}
	if !strings.Contains(logs.String(), "adopted a WAL segment") {
		t.Fatalf("no log line for the adoption:\n%s", logs.String())
	}

	// A crash before the roll's fsync: no valid header, nothing
	// acknowledged in the spare; it is removed and the log ends before it.
	f, err := os.OpenFile(filepath.Join(blank, storage.SpareName), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 36), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	bw, err := reopen(blank)
	if err != nil {
		t.Fatalf("reopening with an unwritten spare: %v", err)
	}
	_, es, _ = readAll(t, bw, 0)
	sameEntries(t, es, ents(1, 1, 1))
	bw.Close()
	if _, err := os.Stat(filepath.Join(blank, storage.SpareName)); !os.IsNotExist(err) {
		t.Fatalf("unwritten spare after open: %v", err)
	}

	// A valid header that does not follow the last segment is damage.
	if err := os.WriteFile(filepath.Join(wrong, filepath.Base(next)), []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	_, err = reopen(wrong)
	var ce *storage.CorruptError
	if !errors.As(err, &ce) || filepath.Base(ce.Path) != storage.SpareName {
		t.Fatalf("reopening with a spare that names segment 1 after segment 1: %v, want a CorruptError naming the spare", err)
	}
	if _, err := os.Stat(filepath.Join(wrong, storage.SpareName)); err != nil {
		t.Fatalf("the spare was not kept: %v", err)
	}
}

// BenchmarkWALRollToSpare measures the Save that moves the WAL into a ready
// spare segment, with its batch: what a roll costs the append path
// (µs/roll). Each iteration (ns/op) fills a 1 MiB segment with batches of
// 16 KiB, waits for the spare, and makes the Save that rolls.
func BenchmarkWALRollToSpare(b *testing.B) {
	const segBytes = 1 << 20
	w, err := storage.OpenWAL(b.TempDir(), storage.WALOptions{SegmentBytes: segBytes, PreallocateAfter: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	data := bytes.Repeat([]byte("x"), 16<<10)
	index := uint64(0)
	saveOne := func() {
		index++
		e := raftpb.Entry{Term: 1, Index: index, Data: data}
		if err := w.Save(raftpb.HardState{Term: 1, Vote: 1, Commit: index}, []raftpb.Entry{e}); err != nil {
			b.Fatal(err)
		}
	}
	var rolls time.Duration
	n := 0
	for b.Loop() {
		segs := len(w.SegmentPaths())
		for range segBytes/len(data) - 2 {
			saveOne()
		}
		deadline := time.Now().Add(10 * time.Second)
		for !w.SpareReady() {
			if time.Now().After(deadline) {
				b.Fatal("the spare segment was not filled within 10 s")
			}
			time.Sleep(time.Millisecond)
		}
		for len(w.SegmentPathsNow()) == segs {
			t0 := time.Now()
			saveOne()
			if len(w.SegmentPathsNow()) > segs {
				rolls += time.Since(t0)
				n++
			}
		}
	}
	if n > 0 {
		b.ReportMetric(float64(rolls.Microseconds())/float64(n), "µs/roll")
	}
}

// holdRoll makes w's next rolls stop in their background part until the
// returned release is called (also at the test's end). wait waits, up to
// 10 s, for a roll to get there.
func holdRoll(t *testing.T, w *storage.WAL) (wait, release func()) {
	t.Helper()
	reached := make(chan struct{}, 1)
	released := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(released) }) }
	t.Cleanup(release)
	w.SetRollHook(func() {
		reached <- struct{}{}
		<-released
	})
	wait = func() {
		t.Helper()
		select {
		case <-reached:
		case <-time.After(10 * time.Second):
			t.Fatal("the roll's background part did not start within 10 s")
		}
	}
	return wait, release
}
