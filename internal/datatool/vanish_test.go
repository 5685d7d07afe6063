package datatool

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/paddockhq/paddock/internal/fsm"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/storage"
	"github.com/paddockhq/paddock/internal/tree"
)

// A running server deletes the snapshots and WAL segments it no longer
// needs (storage's removeInSteps): it renames the file to <name>.drop, then
// shrinks it under any reader that has it open, then unlinks it. A tool
// that listed the file before reads it short, or not at all. These tests
// make that happen at a chosen moment and check that the tools say the file
// disappeared (docs/data-tools.md: "run it again") instead of calling the
// data damaged.

// release does to path what the server's removal does to a file a reader
// has open: rename it out of the way, and cut it.
func release(t *testing.T, path string, keep int64) {
	t.Helper()
	drop := path + ".drop"
	if err := os.Rename(path, drop); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(drop, keep); err != nil {
		t.Fatal(err)
	}
}

// bigSnapshot writes to dir a snapshot whose body is well over the
// scanner's read buffer, and returns it.
func bigSnapshot(t *testing.T, dir string) storage.SnapshotInfo {
	t.Helper()
	m := fsm.New(fsm.Options{})
	m.ApplyEmpty(1)
	index := uint64(1)
	data := bytes.Repeat([]byte("d"), 64)
	for i := range 6000 {
		index++
		e := &fsm.Entry{Type: fsm.EntryTxn, Session: 0, Ops: []fsm.Op{{Op: proto.OpCreate, Path: fmt.Sprintf("/n%05d", i), Data: data, ACL: tree.OpenACL}}}
		m.Apply(index, e.Encode(nil))
	}
	body := m.AppendSnapshot(nil)
	if len(body) < 2*scanBufferBytes {
		t.Fatalf("snapshot body of %d bytes: want more than %d", len(body), 2*scanBufferBytes)
	}
	meta := raftpb.SnapshotMetadata{Index: index, Term: 2, ConfState: raftpb.ConfState{Voters: []uint64{1}}}
	path, err := storage.SaveSnapshot(dir, meta, func(w io.Writer) error { _, err := w.Write(body); return err })
	if err != nil {
		t.Fatal(err)
	}
	info, err := storage.SnapshotInfoFromPath(path)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// onWrite is a Writer that runs fn before its first write.
type onWrite struct {
	fn   func()
	done bool
	buf  bytes.Buffer
}

func (w *onWrite) Write(p []byte) (int, error) {
	if !w.done {
		w.done = true
		w.fn()
	}
	return w.buf.Write(p)
}

func TestDumpSnapshotRemovedWhileRead(t *testing.T) {
	info := bigSnapshot(t, t.TempDir())
	out := &onWrite{fn: func() { release(t, info.Path, 4096) }}
	err := DumpSnapshot(out, info, DumpOptions{})
	if err == nil {
		t.Fatal("dump of a snapshot cut while being read succeeded")
	}
	if errors.Is(err, ErrBadSnapshot) || !strings.Contains(err.Error(), "disappeared while being read") {
		t.Errorf("dump of a snapshot removed while being read: %v; want a disappeared error, not a malformed snapshot", err)
	}
}

func TestInspectSnapshotRemovedBeforeRead(t *testing.T) {
	info := bigSnapshot(t, t.TempDir())
	release(t, info.Path, 0) // between ResolveSnapshot and InspectSnapshot
	sum, err := InspectSnapshot(info, InspectOptions{})
	if err == nil || !strings.Contains(err.Error(), "disappeared while being read") {
		t.Errorf("inspect of a snapshot removed meanwhile: %v; want a disappeared error", err)
	}
	var text strings.Builder
	if err := sum.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "FAILED") || !sum.Vanished {
		t.Errorf("inspect of a snapshot removed meanwhile reports it damaged (vanished %v):\n%s", sum.Vanished, text.String())
	}
}

// withHooks replaces listSnapshots and scanWAL for one test.
func withHooks(t *testing.T, list func(string) ([]storage.SnapshotInfo, error),
	scan func(string, func(*storage.WALRecord) error) ([]storage.WALSegment, *storage.TornTail, error)) {
	t.Helper()
	oldList, oldScan := listSnapshots, scanWAL
	t.Cleanup(func() { listSnapshots, scanWAL = oldList, oldScan })
	if list != nil {
		listSnapshots = list
	}
	if scan != nil {
		scanWAL = scan
	}
}

func TestVerifySnapshotPurgedWhileChecked(t *testing.T) {
	dirs := DataDirs(copyDir(t, fixtureDir), "")
	var purged string
	withHooks(t, func(dir string) ([]storage.SnapshotInfo, error) {
		infos, err := storage.ListSnapshots(dir)
		if err == nil && len(infos) > 3 {
			purged = infos[0].Path
			release(t, purged, 0)
		}
		return infos, err
	}, nil)
	rep, err := Verify(dirs, VerifyOptions{FSM: fsm.Options{ExtendedTypes: true}})
	if err != nil {
		t.Fatal(err)
	}
	if purged == "" {
		t.Fatal("the fixture has too few snapshots")
	}
	if !rep.OK() {
		t.Errorf("verify reports a snapshot purged while it ran as a problem: %v", rep.Problems)
	}
	if !strings.Contains(strings.Join(rep.Warnings, "\n"), purged) {
		t.Errorf("warnings %q do not mention the purged %s", rep.Warnings, purged)
	}
	for _, s := range rep.Snapshots {
		if s.Path == purged {
			t.Errorf("the purged snapshot is listed: %+v", s)
		}
	}
}

// scanReleasing returns a scanWAL that reads the WAL with its oldest
// segment cut mid-record, as a reader does that opened the segment just
// before the server released it, and renames the segment away before
// returning, as the server had.
func scanReleasing(t *testing.T, walDir string) (string, func(string, func(*storage.WALRecord) error) ([]storage.WALSegment, *storage.TornTail, error)) {
	t.Helper()
	segs, err := storage.ListWALSegments(walDir)
	if err != nil || len(segs) < 2 {
		t.Fatalf("segments %v: %v", segs, err)
	}
	first := segs[0]
	return first.Path, func(dir string, visit func(*storage.WALRecord) error) ([]storage.WALSegment, *storage.TornTail, error) {
		if err := os.Truncate(first.Path, first.Size-5); err != nil {
			t.Fatal(err)
		}
		s, torn, err := storage.ScanWAL(dir, visit)
		release(t, first.Path, 0)
		return s, torn, err
	}
}

func TestWALDumpSegmentReleasedWhileRead(t *testing.T) {
	walDir := filepath.Join(copyDir(t, fixtureDir), WALSubdir)
	released, scan := scanReleasing(t, walDir)
	withHooks(t, nil, scan)
	_, err := DumpWAL(io.Discard, walDir, WALDumpOptions{})
	if err == nil {
		t.Fatal("dump of a WAL whose segment was cut while being read succeeded")
	}
	if errors.Is(err, storage.ErrCorrupt) || !strings.Contains(err.Error(), "disappeared while being read") || !strings.Contains(err.Error(), released) {
		t.Errorf("dump of a WAL segment released while being read: %v; want a disappeared error naming %s, not corruption", err, released)
	}
}

func TestVerifySegmentReleasedWhileRead(t *testing.T) {
	dirs := DataDirs(copyDir(t, fixtureDir), "")
	released, scan := scanReleasing(t, dirs.WAL)
	withHooks(t, nil, scan)
	rep, err := Verify(dirs, VerifyOptions{FSM: fsm.Options{ExtendedTypes: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 {
		t.Fatalf("problems %v; want one", rep.Problems)
	}
	if p := rep.Problems[0]; p.File != released || !strings.Contains(p.Message, "disappeared while being read") {
		t.Errorf("problem %q; want %s disappeared while being read, not corruption", p, released)
	}
}

// TestWALDumpNoSegments: a directory without WAL segments (a dataDir whose
// dataLogDir is elsewhere, a wrong path) is an error, not an empty dump.
func TestWALDumpNoSegments(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	_, err := DumpWAL(&out, dir, WALDumpOptions{})
	if err == nil || !strings.Contains(err.Error(), "no WAL segments") {
		t.Errorf("dump of %s, which holds no WAL: err %v, output %q; want a no WAL segments error", dir, err, out.String())
	}
}
