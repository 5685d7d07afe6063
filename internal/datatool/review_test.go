package datatool

import (
	"fmt"
	"io"
	"os"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/paddockhq/paddock/internal/fsm"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/storage"
	"github.com/paddockhq/paddock/internal/tree"
)

// followerData writes the data of an ensemble member that fell behind and
// caught up from the leader's snapshot: its WAL holds entries 1..3, a
// snapshot marker for its own snapshot at 3, the marker of the snapshot at
// 10 it received, and entries 11..12. Entries 4..10 were never in its log.
func followerData(t *testing.T) Dirs {
	t.Helper()
	dirs := DataDirs(t.TempDir(), "")
	if err := os.MkdirAll(dirs.Snap, 0o750); err != nil {
		t.Fatal(err)
	}
	m := fsm.New(fsm.Options{})
	var ents []raftpb.Entry
	snap := func() {
		body := m.AppendSnapshot(nil)
		meta := raftpb.SnapshotMetadata{Index: m.AppliedIndex(), Term: 2, ConfState: raftpb.ConfState{Voters: []uint64{1, 2, 3}}}
		if _, err := storage.SaveSnapshot(dirs.Snap, meta, func(w io.Writer) error { _, err := w.Write(body); return err }); err != nil {
			t.Fatal(err)
		}
	}
	for i := uint64(1); i <= 12; i++ {
		e := &fsm.Entry{Type: fsm.EntryTxn, Session: 0, ReqID: i, Time: 1_700_000_000_000 + int64(i),
			Ops: []fsm.Op{{Op: proto.OpCreate2, Path: fmt.Sprintf("/n%d", i), ACL: tree.OpenACL}}}
		if i == 1 {
			e = &fsm.Entry{Type: fsm.EntryCreateSession, Session: 0x1000000000001, Timeout: 30000, Passwd: []byte("pw"), Time: 1_700_000_000_000}
		}
		data := e.Encode(nil)
		m.Apply(i, data)
		ents = append(ents, raftpb.Entry{Index: i, Term: 2, Type: raftpb.EntryNormal, Data: data})
		if i == 3 || i == 10 {
			snap()
		}
	}
	w, err := storage.OpenWAL(dirs.WAL, storage.WALOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Save(raftpb.HardState{Term: 2, Vote: 1, Commit: 3}, ents[:3]); err != nil {
		t.Fatal(err)
	}
	if err := w.SaveSnapshotMarker(storage.SnapshotMarker{Index: 3, Term: 2}); err != nil {
		t.Fatal(err)
	}
	if err := w.SaveSnapshotMarker(storage.SnapshotMarker{Index: 10, Term: 2}); err != nil {
		t.Fatal(err)
	}
	if err := w.Save(raftpb.HardState{Term: 2, Vote: 1, Commit: 12}, ents[10:]); err != nil {
		t.Fatal(err)
	}
	return dirs
}

// TestVerifyReplayableAfterReceivedSnapshot: a snapshot older than a
// snapshot the member received from its leader is not replayable: the WAL
// lacks the entries between them.
func TestVerifyReplayableAfterReceivedSnapshot(t *testing.T) {
	dirs := followerData(t)
	rep, err := Verify(dirs, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Replay == nil || rep.Replay.SnapshotIndex != 10 || rep.Replay.LastZxid != 12 {
		t.Fatalf("problems %v replay %+v", rep.Problems, rep.Replay)
	}
	if len(rep.Snapshots) != 2 {
		t.Fatalf("snapshots %+v", rep.Snapshots)
	}
	if s := rep.Snapshots[0]; s.Index != 3 || s.Replayable {
		t.Errorf("snapshot at 3: %+v, want not replayable (the WAL lacks entries 4..10)", s)
	}
	if s := rep.Snapshots[1]; s.Index != 10 || !s.Replayable {
		t.Errorf("snapshot at 10: %+v, want replayable", s)
	}
}
