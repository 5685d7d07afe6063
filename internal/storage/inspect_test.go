package storage_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/paddockhq/paddock/internal/storage"
)

func TestLockWALDir(t *testing.T) {
	dir := t.TempDir()
	w := openWAL(t, dir, 0)
	_, err := storage.LockWALDir(dir)
	if !errors.Is(err, storage.ErrLocked) || !strings.Contains(err.Error(), "is locked: another process") {
		t.Fatalf("LockWALDir on an open WAL = %v", err)
	}
	w.Close()
	release, err := storage.LockWALDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := storage.OpenWAL(dir, storage.WALOptions{}); !errors.Is(err, storage.ErrLocked) {
		t.Fatalf("OpenWAL while the tool holds the lock = %v", err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	openWAL(t, dir, 0).Close()
	if _, err := storage.LockWALDir(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("LockWALDir of a missing directory succeeded")
	}
}

// TestScanWAL: ScanWAL sees every record in order, reports a torn tail
// without changing the file, and reports damage in an earlier segment as
// corruption.
func TestScanWAL(t *testing.T) {
	dir := t.TempDir()
	w := openWAL(t, dir, 200)
	save(t, w, batch{raftpb.HardState{Term: 1, Commit: 3}, ents(1, 3, 1)})
	if err := w.SaveSnapshotMarker(storage.SnapshotMarker{Index: 2, Term: 1}); err != nil {
		t.Fatal(err)
	}
	save(t, w, batch{raftpb.HardState{Term: 2, Vote: 1, Commit: 8}, ents(4, 8, 2)})
	// The lock is held: ScanWAL must not need it.
	var kinds []string
	var idx []uint64
	segs, torn, err := storage.ScanWAL(dir, func(r *storage.WALRecord) error {
		kinds = append(kinds, r.Kind.String())
		if r.Kind == storage.RecordEntry {
			idx = append(idx, r.Entry.Index)
		}
		if r.Offset < 36 || r.Size <= 9 || r.Segment.Path == "" {
			t.Errorf("record %+v", r)
		}
		return nil
	})
	if err != nil || torn != nil {
		t.Fatalf("ScanWAL: %v, torn %+v", err, torn)
	}
	w.Close()
	if len(segs) < 2 || len(idx) != 8 || idx[0] != 1 || idx[7] != 8 || !strings.Contains(strings.Join(kinds, " "), "snapshot") {
		t.Fatalf("segments %d, entries %v, kinds %v", len(segs), idx, kinds)
	}
	listed, err := storage.ListWALSegments(dir)
	if err != nil || len(listed) != len(segs) || listed[len(listed)-1].Size != segs[len(segs)-1].Size {
		t.Fatalf("ListWALSegments = %v, %v; scanned %v", listed, err, segs)
	}

	// A torn last record: reported, file untouched.
	last := segs[len(segs)-1]
	if err := os.Truncate(last.Path, last.Size-2); err != nil {
		t.Fatal(err)
	}
	_, torn, err = storage.ScanWAL(dir, func(*storage.WALRecord) error { return nil })
	if err != nil || torn == nil || torn.Path != last.Path || torn.Offset+torn.Bytes != last.Size-2 {
		t.Fatalf("torn tail: %v %+v", err, torn)
	}
	if fi, _ := os.Stat(last.Path); fi.Size() != last.Size-2 {
		t.Fatal("ScanWAL changed the file")
	}

	// Damage in an earlier segment is corruption, with file and offset.
	b, _ := os.ReadFile(segs[0].Path)
	b[len(b)-3] ^= 0xff
	if err := os.WriteFile(segs[0].Path, b, 0o640); err != nil {
		t.Fatal(err)
	}
	_, _, err = storage.ScanWAL(dir, func(*storage.WALRecord) error { return nil })
	var ce *storage.CorruptError
	if !errors.As(err, &ce) || ce.Path != segs[0].Path || ce.Offset <= 0 {
		t.Fatalf("damaged first segment: %v", err)
	}

	// An error from visit stops the scan.
	stop := errors.New("stop")
	if _, _, err := storage.ScanWAL(dir, func(*storage.WALRecord) error { return stop }); err != stop {
		t.Fatalf("visit error: %v", err)
	}
}

func TestSnapshotInfoFromPathAndBody(t *testing.T) {
	dir := t.TempDir()
	meta := raftpb.SnapshotMetadata{Index: 42, Term: 3}
	path, err := storage.SaveSnapshot(dir, meta, func(w io.Writer) error { _, err := io.WriteString(w, "body"); return err })
	if err != nil {
		t.Fatal(err)
	}
	info, err := storage.SnapshotInfoFromPath(path)
	if err != nil || info.Index != 42 || info.Term != 3 || info.Path != path {
		t.Fatalf("SnapshotInfoFromPath = %+v, %v", info, err)
	}
	if _, err := storage.SnapshotInfoFromPath(filepath.Join(dir, "42.snap")); err == nil {
		t.Fatal("a badly named file was accepted")
	}
	sr, err := storage.OpenSnapshot(info)
	if err != nil {
		t.Fatal(err)
	}
	defer sr.Close()
	for range 2 { // independent readers
		b, err := io.ReadAll(sr.Body())
		if err != nil || string(b) != "body" {
			t.Fatalf("Body = %q, %v", b, err)
		}
	}
}

// TestScanWALLiveSpare checks that ScanWAL reads, as the last segment, a
// spare that a roll had begun appending to when the server stopped, before
// its rename reached the disk, as ListWALSegments lists it and OpenWAL
// adopts it.
func TestScanWALLiveSpare(t *testing.T) {
	dir, crashed := t.TempDir(), t.TempDir()
	w, err := storage.OpenWAL(dir, storage.WALOptions{SegmentBytes: 64 << 10, PreallocateAfter: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	save(t, w, batch{hs: raftpb.HardState{Term: 1, Vote: 1, Commit: 1}, ents: ents(1, 1, 1)})
	waitSpare(t, w)
	waitRoll, release := holdRoll(t, w)
	save(t, w, batch{ents: ents(2, 2, 1)}) // into the spare
	waitRoll()
	save(t, w, batch{ents: ents(3, 3, 1)})
	copyDir(t, dir, crashed) // the rename not done
	release()
	must(t, w.FinishRoll())

	var idx []uint64
	segs, torn, err := storage.ScanWAL(crashed, func(r *storage.WALRecord) error {
		if r.Kind == storage.RecordEntry {
			idx = append(idx, r.Entry.Index)
		}
		return nil
	})
	if err != nil || torn != nil {
		t.Fatalf("ScanWAL: %v, torn %+v", err, torn)
	}
	listed, err := storage.ListWALSegments(crashed)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) != 2 || len(listed) != 2 || segs[1].Path != listed[1].Path || segs[1].Seq != 1 ||
		filepath.Base(segs[1].Path) != storage.SpareName {
		t.Fatalf("ScanWAL read segments %+v; ListWALSegments lists %+v; want both with the spare as segment 1", segs, listed)
	}
	if len(idx) != 3 || idx[0] != 1 || idx[2] != 3 {
		t.Fatalf("ScanWAL saw entries %v, want 1 2 3", idx)
	}
}
