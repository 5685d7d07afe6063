package storage

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

type syncCall struct {
	off, n int64
	flags  int
}

// TestWritebackWriterRanges checks the writeback hints: every chunk is
// handed to writeback once, in order, right after it is written, and waited
// for one chunk later, so at most two chunks are ever dirty and unwaited.
func TestWritebackWriterRanges(t *testing.T) {
	var calls []syncCall
	var out bytes.Buffer
	w := &writebackWriter{w: &out, sync: func(off, n int64, flags int) error {
		calls = append(calls, syncCall{off, n, flags})
		return nil
	}}
	piece := bytes.Repeat([]byte{7}, 3<<18) // 0.75 MiB, not a divisor of the chunk
	const pieces = 12                       // 9 MiB: six chunks of 1.5 MiB (two pieces each)
	for range pieces {
		if n, err := w.Write(piece); n != len(piece) || err != nil {
			t.Fatalf("write: %d %v", n, err)
		}
	}
	if out.Len() != pieces*len(piece) || !bytes.Equal(out.Bytes()[:len(piece)], piece) {
		t.Fatalf("wrote %d bytes", out.Len())
	}
	var started, waited int64
	var nStart, nWait int
	for _, c := range calls {
		switch c.flags {
		case rangeWrite:
			if c.off != started || c.n < writebackChunk {
				t.Fatalf("writeback of [%d,+%d) after %d started: %v", c.off, c.n, started, calls)
			}
			started = c.off + c.n
			nStart++
		case rangeWaitBefore | rangeWrite | rangeWaitAfter:
			if c.off != waited || c.off+c.n > started {
				t.Fatalf("wait for [%d,+%d): waited up to %d, started up to %d", c.off, c.n, waited, started)
			}
			waited = c.off + c.n
			nWait++
		default:
			t.Fatalf("flags %d", c.flags)
		}
	}
	if nStart != 6 || nWait != 5 || int64(out.Len())-waited > 2*writebackChunk+int64(len(piece)) {
		t.Fatalf("%d writebacks started, %d waited, %d of %d bytes waited for: %v", nStart, nWait, waited, out.Len(), calls)
	}
}

// TestWritebackWriterFailureTurnsHintsOff checks that a file system without
// sync_file_range costs nothing but the hints.
func TestWritebackWriterFailureTurnsHintsOff(t *testing.T) {
	var out bytes.Buffer
	n := 0
	w := &writebackWriter{w: &out, sync: func(int64, int64, int) error { n++; return errors.New("ENOSYS") }}
	for range 5 {
		if _, err := w.Write(make([]byte, writebackChunk)); err != nil {
			t.Fatal(err)
		}
	}
	if n != 1 || out.Len() != 5*writebackChunk {
		t.Fatalf("%d calls after the failure, %d bytes", n, out.Len())
	}
}

// TestSaveSnapshotLarge writes a snapshot of several chunks through the
// real file and reads it back intact.
func TestSaveSnapshotLarge(t *testing.T) {
	dir := t.TempDir()
	body := bytes.Repeat([]byte("0123456789abcdef"), (3*writebackChunk)/16+5)
	path, err := SaveSnapshot(dir, raftpb.SnapshotMetadata{Index: 7, Term: 2}, func(w io.Writer) error { _, err := w.Write(body); return err })
	if err != nil {
		t.Fatal(err)
	}
	infos, err := ListSnapshots(dir)
	if err != nil || len(infos) != 1 || filepath.Base(infos[0].Path) != filepath.Base(path) {
		t.Fatal(infos, err)
	}
	r, err := OpenSnapshot(infos[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got bytes.Buffer
	if _, err := got.ReadFrom(r); err != nil || !bytes.Equal(got.Bytes(), body) {
		t.Fatalf("read back %d bytes of %d: %v", got.Len(), len(body), err)
	}
}

// TestFileRangeSyncer calls the real sync_file_range on a written file.
func TestFileRangeSyncer(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	sync := fileRangeSyncer(f)
	if runtime.GOOS != "linux" {
		if sync != nil {
			t.Fatal("a range syncer off Linux")
		}
		return
	}
	if sync == nil {
		t.Fatal("no range syncer on Linux")
	}
	if err := sync(0, 1<<20, rangeWrite); err != nil {
		t.Fatal(err)
	}
	if err := sync(0, 1<<20, rangeWaitBefore|rangeWrite|rangeWaitAfter); err != nil {
		t.Fatal(err)
	}
	if err := sync(-1, 1, rangeWrite); err == nil {
		t.Fatal("no error for a negative offset: the syncer does not reach the system call")
	}
}

// TestWritebackWriterPauses checks the pacing: after a wait for the disk the
// writer pauses writebackPause times as long as the wait took, and not after
// a quick one.
func TestWritebackWriterPauses(t *testing.T) {
	var slept []time.Duration
	waits := []time.Duration{30 * time.Millisecond, 0, 20 * time.Millisecond}
	w := &writebackWriter{w: io.Discard, sleep: func(d time.Duration) { slept = append(slept, d) },
		sync: func(_, _ int64, flags int) error {
			if flags&rangeWaitAfter != 0 {
				time.Sleep(waits[0])
				waits = waits[1:]
			}
			return nil
		}}
	for range 4 {
		if _, err := w.Write(make([]byte, writebackChunk)); err != nil {
			t.Fatal(err)
		}
	}
	if len(waits) != 0 || len(slept) != 2 || slept[0] < writebackPause*30*time.Millisecond || slept[1] < writebackPause*20*time.Millisecond {
		t.Fatalf("paused %v (waits left %v)", slept, waits)
	}
}

// TestDatasync checks the WAL's sync primitive: it succeeds on an open file
// and reports a closed one by name.
func TestDatasync(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "seg"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("record")); err != nil {
		t.Fatal(err)
	}
	if err := datasync(f); err != nil {
		t.Fatalf("datasync of an open file: %v", err)
	}
	f.Close()
	err = datasync(f)
	if err == nil || !strings.Contains(err.Error(), "seg") {
		t.Fatalf("datasync of a closed file = %v, want an error naming it", err)
	}
}
