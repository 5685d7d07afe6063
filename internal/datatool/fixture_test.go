package datatool

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/fsm"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/raftnode"
	"github.com/paddockhq/paddock/internal/storage"
	"github.com/paddockhq/paddock/internal/tree"
)

// update rewrites the golden outputs; updateFixture first regenerates
// testdata/fixture, a data directory written by the real raftnode and
// storage code from fixed entries (its snapshot points depend on timing, so
// the golden outputs must be rewritten with it).
var (
	update        = flag.Bool("update", false, "rewrite testdata/golden")
	updateFixture = flag.Bool("update-fixture", false, "regenerate testdata/fixture and testdata/golden")
)

const fixtureDir = "testdata/fixture"

// fsmSM drives an fsm.Machine from raftnode as internal/server does.
type fsmSM struct {
	mu      sync.Mutex
	m       *fsm.Machine
	applied chan uint64 // index of each applied entry with data
}

func newFSMSM() *fsmSM {
	return &fsmSM{m: fsm.New(fsm.Options{ExtendedTypes: true}), applied: make(chan uint64, 1024)}
}

func (s *fsmSM) Apply(index, term uint64, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case len(data) == 0:
		s.m.ApplyEmpty(index)
		return
	case fsm.PeekTerm(data) != 0 && fsm.PeekTerm(data) != term:
		s.m.ApplyEmpty(index)
	default:
		s.m.Apply(index, data)
	}
	select {
	case s.applied <- index:
	default:
	}
}

func (s *fsmSM) Snapshot() (func(io.Writer) error, error) {
	s.mu.Lock()
	b := s.m.AppendSnapshot(nil)
	s.mu.Unlock()
	return func(w io.Writer) error { _, err := w.Write(b); return err }, nil
}

func (s *fsmSM) Restore(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m.Restore(b)
}

// fixtureEntries is a fixed history: two sessions, znodes of every kind,
// a committed and a failed multi, ACL and data changes, a delete, a write
// proposed in an old term (dropped), a session close, then filler writes.
func fixtureEntries(term uint64) []*fsm.Entry {
	const s1, s2 = 0x1000000000001, 0x1000000000002
	open := tree.OpenACL
	rw := []proto.ACL{{Perms: proto.PermRead | proto.PermWrite, ID: proto.ID{Scheme: "world", ID: "anyone"}}}
	ip := []proto.ID{{Scheme: "ip", ID: "127.0.0.1"}}
	txn := func(s int64, ops ...fsm.Op) *fsm.Entry {
		return &fsm.Entry{Type: fsm.EntryTxn, Session: s, Auth: ip, Multi: len(ops) > 1, Ops: ops}
	}
	create := func(path string, data []byte, flags int32) fsm.Op {
		return fsm.Op{Op: proto.OpCreate2, Path: path, Data: data, ACL: open, Flags: flags}
	}
	long := strings.Repeat("0123456789", 10)
	es := []*fsm.Entry{
		{Type: fsm.EntryCreateSession, Session: s1, Timeout: 30000, Passwd: []byte("secret-1")},
		{Type: fsm.EntryCreateSession, Session: s2, Timeout: 10000, Passwd: []byte("secret-2")},
		txn(s1, create("/app", []byte("hello"), proto.FlagPersistent)),
		txn(s1, create("/app/seq-", []byte{}, proto.FlagPersistentSequential)),
		txn(s1, create("/app/seq-", []byte{}, proto.FlagPersistentSequential)),
		txn(s1, create("/app/eph", []byte("e1"), proto.FlagEphemeral)),
		txn(s2, create("/app/lock-", nil, proto.FlagEphemeralSequential)),
		txn(s1, create("/m", nil, proto.FlagPersistent), create("/m/bin", []byte{0xff, 0x00, 0xfe}, proto.FlagPersistent),
			fsm.Op{Op: proto.OpSetData, Path: "/app", Data: []byte("world"), Version: 0}),
		txn(s1, fsm.Op{Op: proto.OpDelete, Path: "/m/bin", Version: -1}, fsm.Op{Op: proto.OpCheck, Path: "/m", Version: 7}),
		txn(s1, fsm.Op{Op: proto.OpCreateContainer, Path: "/box", ACL: open, Flags: proto.FlagContainer}),
		txn(s1, create("/box/item", []byte("x"), proto.FlagPersistent)),
		txn(s1, fsm.Op{Op: proto.OpCreateTTL, Path: "/ttl", Data: []byte("t"), ACL: open, Flags: proto.FlagPersistentWithTTL, TTL: 60000}),
		txn(s1, fsm.Op{Op: proto.OpSetACL, Path: "/m", ACL: rw, Version: -1}),
		txn(s1, fsm.Op{Op: proto.OpDelete, Path: "/app/seq-0000000000", Version: -1}),
		txn(s1, fsm.Op{Op: proto.OpSetData, Path: "/app", Data: []byte(long), Version: -1}),
		{Type: fsm.EntryCloseSession, Session: s2},
		txn(s1, create("/f", nil, proto.FlagPersistent)),
	}
	stale := txn(s1, create("/stale", nil, proto.FlagPersistent))
	stale.Term = term - 1 // proposed in an earlier term: every member drops it
	current := txn(s1, create("/current", []byte("c"), proto.FlagPersistent))
	current.Term = term
	es = append(es, stale, current)
	for i := range 16 {
		es = append(es, txn(s1, fsm.Op{Op: proto.OpSetData, Path: "/f", Data: []byte{byte('a' + i)}, Version: -1}))
	}
	for i, e := range es {
		e.ReqID = uint64(i + 1)
		e.Time = 1_700_000_000_000 + int64(i)*10
	}
	return es
}

// fixtureConfig is the raftnode configuration of the fixture: small WAL
// segments and frequent snapshots, all kept.
func fixtureConfig(dir string) raftnode.Config {
	return raftnode.Config{ID: 1, DataDir: filepath.Join(dir, SnapSubdir), LogDir: filepath.Join(dir, WALSubdir),
		TickInterval: 10 * time.Millisecond, SnapCount: 5, SnapRetainCount: 10, WALSegmentBytes: 600}
}

// buildFixture writes the fixture data directory into dir.
func buildFixture(t *testing.T, dir string) {
	t.Helper()
	sm := newFSMSM()
	n, err := raftnode.Start(fixtureConfig(dir), sm)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := n.WaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	for _, e := range fixtureEntries(n.Status().Term) {
		if err := n.Propose(ctx, e.Encode(nil), func(err error) { t.Errorf("proposal dropped: %v", err) }); err != nil {
			t.Fatal(err)
		}
		select {
		case <-sm.applied:
		case <-ctx.Done():
			t.Fatal("entry not applied")
		}
	}
	// Wait for the snapshot of the last multiple of SnapCount to be durable.
	deadline := time.Now().Add(10 * time.Second)
	for n.Status().SnapshotIndex+5 <= n.AppliedIndex() {
		if time.Now().After(deadline) {
			t.Fatal("no final snapshot")
		}
		time.Sleep(5 * time.Millisecond) // polling: no event to wait on
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	// Leave only the files a stopped server leaves that matter.
	_ = os.Remove(filepath.Join(dir, WALSubdir, "wal.lock"))
	_ = os.Remove(filepath.Join(dir, SnapSubdir, "snap.lock"))
}

// goldenRun is one tool run compared with testdata/golden/<name>.txt.
type goldenRun struct {
	name string
	run  func(w io.Writer, dir string) error
}

func goldenRuns() []goldenRun {
	dirs := func(dir string) Dirs { return DataDirs(dir, "") }
	snap := func(dir string) storage.SnapshotInfo {
		info, err := ResolveSnapshot(dir)
		if err != nil {
			panic(err)
		}
		return info
	}
	return []goldenRun{
		{"inspect", func(w io.Writer, dir string) error {
			s, err := InspectSnapshot(snap(dir), InspectOptions{ExtendedTypes: true})
			if err != nil {
				return err
			}
			return s.WriteText(w)
		}},
		{"dump", func(w io.Writer, dir string) error {
			return DumpSnapshot(w, snap(dir), DumpOptions{Data: true, ExtendedTypes: true})
		}},
		{"dump-json", func(w io.Writer, dir string) error {
			return DumpSnapshot(w, snap(dir), DumpOptions{JSON: true, Data: true, ExtendedTypes: true})
		}},
		{"wal", func(w io.Writer, dir string) error { _, err := DumpWAL(w, dirs(dir).WAL, WALDumpOptions{}); return err }},
		{"wal-json", func(w io.Writer, dir string) error {
			_, err := DumpWAL(w, dirs(dir).WAL, WALDumpOptions{JSON: true, From: 9, Limit: 4})
			return err
		}},
		{"verify", func(w io.Writer, dir string) error {
			r, err := Verify(dirs(dir), VerifyOptions{FSM: fsm.Options{ExtendedTypes: true}})
			if err != nil {
				return err
			}
			return r.WriteText(w)
		}},
		{"purge-dry-run", func(w io.Writer, dir string) error {
			_, err := Purge(w, dirs(dir), PurgeOptions{Retain: 3, DryRun: true})
			return err
		}},
	}
}

// TestGolden runs every tool on the committed fixture (a copy of it, so
// that nothing writes into testdata) and compares the output, with the
// directory's path replaced by "<dir>", with testdata/golden.
func TestGolden(t *testing.T) {
	if *updateFixture {
		*update = true
		if err := os.RemoveAll(fixtureDir); err != nil {
			t.Fatal(err)
		}
		buildFixture(t, fixtureDir)
	}
	dir := copyDir(t, fixtureDir)
	for _, g := range goldenRuns() {
		t.Run(g.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := g.run(&out, dir); err != nil {
				t.Fatal(err)
			}
			got := strings.ReplaceAll(out.String(), dir, "<dir>")
			path := filepath.Join("testdata", "golden", g.name+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o640); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("output differs from %s (go test -run TestGolden -update rewrites it):\n%s", path, got)
			}
		})
	}
}

// TestFixtureShape checks that the fixture exercises what the tools must
// handle: several snapshots and WAL segments, a dropped write.
func TestFixtureShape(t *testing.T) {
	snaps, err := storage.ListSnapshots(filepath.Join(fixtureDir, SnapSubdir))
	if err != nil || len(snaps) < 5 {
		t.Fatalf("%d snapshots: %v", len(snaps), err)
	}
	segs, err := storage.ListWALSegments(filepath.Join(fixtureDir, WALSubdir))
	if err != nil || len(segs) < 5 {
		t.Fatalf("%d segments: %v", len(segs), err)
	}
	r, err := Verify(DataDirs(fixtureDir, ""), VerifyOptions{FSM: fsm.Options{ExtendedTypes: true}})
	if err != nil || !r.OK() {
		t.Fatalf("verify: %v %+v", err, r.Problems)
	}
	var out bytes.Buffer
	if _, err := DumpWAL(&out, filepath.Join(fixtureDir, WALSubdir), WALDumpOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "(dropped on apply: committed in a later term)") {
		t.Fatal("the fixture's WAL has no dropped write")
	}
}

// TestFixturePurgeRestart purges a copy of the fixture and restarts a
// raft node on it: it must come back with exactly the state it had.
func TestFixturePurgeRestart(t *testing.T) {
	dir := copyDir(t, fixtureDir)
	dirs := DataDirs(dir, "")
	before, err := Verify(dirs, VerifyOptions{FSM: fsm.Options{ExtendedTypes: true}})
	if err != nil || !before.OK() {
		t.Fatalf("verify before: %v %+v", err, before.Problems)
	}
	snaps, _ := storage.ListSnapshots(dirs.Snap)
	segs, _ := storage.ListWALSegments(dirs.WAL)

	var out bytes.Buffer
	plan, err := Purge(&out, dirs, PurgeOptions{Retain: 3})
	if err != nil {
		t.Fatal(err)
	}
	keptSnaps, _ := storage.ListSnapshots(dirs.Snap)
	keptSegs, _ := storage.ListWALSegments(dirs.WAL)
	if !slices.Equal(keptSnaps, snaps[len(snaps)-3:]) {
		t.Fatalf("kept snapshots %v of %v", keptSnaps, snaps)
	}
	// Kept segments: from the one holding the entry after the oldest kept
	// snapshot on.
	oldest := keptSnaps[0].Index
	first := 0
	for i, s := range segs {
		if s.FirstIndex <= oldest+1 {
			first = i
		}
	}
	if len(keptSegs) != len(segs)-first || keptSegs[0].Path != segs[first].Path || first == 0 || len(plan.RemoveSegments) != first {
		t.Fatalf("kept segments %v of %v (oldest snapshot %d)\n%s", keptSegs, segs, oldest, out.String())
	}
	for _, s := range segs[:first] {
		if !strings.Contains(out.String(), "removed WAL segment "+s.Path+"\n") {
			t.Errorf("purge did not report removing %s:\n%s", s.Path, out.String())
		}
	}
	after, err := Verify(dirs, VerifyOptions{FSM: fsm.Options{ExtendedTypes: true}})
	if err != nil || !after.OK() || after.Replay.Digest != before.Replay.Digest {
		t.Fatalf("verify after purge: %v %+v %+v", err, after.Problems, after.Replay)
	}
	for _, s := range after.Snapshots {
		if !s.Replayable {
			t.Errorf("snapshot %s kept but not replayable", s.Path)
		}
	}

	// A raft node restarts on the purged directory with the same state.
	sm := newFSMSM()
	n, err := raftnode.Start(fixtureConfig(dir), sm)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.WaitApplied(ctx, before.Replay.LastZxid); err != nil {
		t.Fatal(err)
	}
	sm.mu.Lock()
	digest := stateDigest(sm.m)
	sm.mu.Unlock()
	if digest != before.Replay.Digest {
		t.Fatalf("state after restart %s, before purge %s", digest, before.Replay.Digest)
	}
}
