package datatool

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/paddockhq/paddock/internal/fsm"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/storage"
	"github.com/paddockhq/paddock/internal/tree"
)

// sid255 is a session id a server with myid 255 makes (myid<<56 | time
// bits): its top byte is 0xff, like a TTL node's ephemeralOwner.
const sid255 int64 = -1<<56 | 0x30f66780001 // 0xff00030f66780001

// saveMachineSnapshot applies es to a fresh machine with opts and writes
// its snapshot into dir, as bigSnapshot does.
func saveMachineSnapshot(t *testing.T, dir string, opts fsm.Options, es []*fsm.Entry) (storage.SnapshotInfo, *fsm.Machine) {
	t.Helper()
	m := fsm.New(opts)
	m.ApplyEmpty(1)
	index := uint64(1)
	for _, e := range es {
		index++
		e.ReqID, e.Time = index, 1_700_000_000_000+int64(index)
		m.Apply(index, e.Encode(nil))
	}
	body := m.AppendSnapshot(nil)
	meta := raftpb.SnapshotMetadata{Index: index, Term: 2, ConfState: raftpb.ConfState{Voters: []uint64{255}}}
	path, err := storage.SaveSnapshot(dir, meta, func(w io.Writer) error { _, err := w.Write(body); return err })
	if err != nil {
		t.Fatal(err)
	}
	info, err := storage.SnapshotInfoFromPath(path)
	if err != nil {
		t.Fatal(err)
	}
	return info, m
}

// TestSnapshotToolsServer255Ephemeral: a server with myid 255 runs
// without extended types (ZooKeeper refuses them above myid 254), and its
// sessions' ephemerals have owners with top byte 0xff. Read, as ZooKeeper's
// EphemeralType and SnapshotFormatter do by default, with extended types
// off, they are ephemerals of their session, not TTL nodes.
func TestSnapshotToolsServer255Ephemeral(t *testing.T) {
	create := func(path string, flags int32) fsm.Op {
		return fsm.Op{Op: proto.OpCreate2, Path: path, Data: []byte("d"), ACL: tree.OpenACL, Flags: flags}
	}
	info, m := saveMachineSnapshot(t, t.TempDir(), fsm.Options{}, []*fsm.Entry{
		{Type: fsm.EntryCreateSession, Session: sid255, Timeout: 30000, Passwd: []byte("pw")},
		{Type: fsm.EntryTxn, Session: sid255, Ops: []fsm.Op{create("/app", proto.FlagPersistent)}},
		{Type: fsm.EntryTxn, Session: sid255, Ops: []fsm.Op{create("/app/eph", proto.FlagEphemeral)}},
	})
	tr := m.Tree()
	if n := tr.Get("/app/eph"); n == nil || tr.Kind(n) != tree.Ephemeral || n.EphemeralOwner != sid255 {
		t.Fatalf("the server's tree: /app/eph %+v", n)
	}
	owner := hexID(sid255)

	sum, err := InspectSnapshot(info, InspectOptions{})
	if err != nil || sum.Body == nil {
		t.Fatalf("inspect: %v %+v", err, sum)
	}
	if b := sum.Body; b.Ephemeral != int64(tr.EphemeralCount()) || b.Ephemeral != 1 || b.TTL != 0 || b.EphemeralOwners != 1 || b.ExtendedTypes {
		t.Errorf("inspect: %+v, want 1 ephemeral of 1 session, no TTL node", *b)
	}

	var out bytes.Buffer
	if err := DumpSnapshot(&out, info, DumpOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\n/app/eph\n", "  ephemeralOwner = " + owner + "\n", "  type = ephemeral (owner " + owner + ")\n",
		"session " + owner + " timeout 30000 ms, 1 ephemerals\n  /app/eph\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dump lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	if err := DumpSnapshot(&out, info, DumpOptions{JSON: true}); err != nil {
		t.Fatal(err)
	}
	var gotNode, gotSession bool
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var l struct {
			Type, Path, Kind, ID string
			TTL                  int64
			Stat                 struct{ EphemeralOwner string }
			Ephemerals           []string
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		switch {
		case l.Type == "znode" && l.Path == "/app/eph":
			gotNode = true
			if l.Kind != "ephemeral" || l.TTL != 0 || l.Stat.EphemeralOwner != owner {
				t.Errorf("dump --json: %s", line)
			}
		case l.Type == "session":
			gotSession = true
			if l.ID != owner || len(l.Ephemerals) != 1 || l.Ephemerals[0] != "/app/eph" {
				t.Errorf("dump --json: %s", line)
			}
		}
	}
	if !gotNode || !gotSession {
		t.Errorf("dump --json lacks the znode or the session:\n%s", out.String())
	}
}

// TestSnapshotToolsTTLParentWithoutExtendedTypes: a snapshot of a server
// with extended types holding a TTL node with a child cannot be read with
// them off (the TTL node is then an ephemeral), and the error says why.
func TestSnapshotToolsTTLParentWithoutExtendedTypes(t *testing.T) {
	ttl := fsm.Op{Op: proto.OpCreateTTL, Path: "/t", ACL: tree.OpenACL, Flags: proto.FlagPersistentWithTTL, TTL: 60000}
	child := fsm.Op{Op: proto.OpCreate2, Path: "/t/c", ACL: tree.OpenACL, Flags: proto.FlagPersistent}
	info, m := saveMachineSnapshot(t, t.TempDir(), fsm.Options{ExtendedTypes: true}, []*fsm.Entry{
		{Type: fsm.EntryTxn, Ops: []fsm.Op{ttl}}, {Type: fsm.EntryTxn, Ops: []fsm.Op{child}},
	})
	if m.Tree().Get("/t/c") == nil {
		t.Fatal("/t/c not created")
	}
	if sum, err := InspectSnapshot(info, InspectOptions{ExtendedTypes: true}); err != nil || sum.Body.TTL != 1 {
		t.Fatalf("inspect with extended types: %v %+v", err, sum.Body)
	}
	_, err := InspectSnapshot(info, InspectOptions{})
	if !errors.Is(err, ErrBadSnapshot) || !strings.Contains(err.Error(), `"/t", a TTL node with extended types on`) {
		t.Errorf("inspect without extended types: %v", err)
	}
	err = DumpSnapshot(io.Discard, info, DumpOptions{})
	if !errors.Is(err, ErrBadSnapshot) || !strings.Contains(err.Error(), `"/t", a TTL node with extended types on`) {
		t.Errorf("dump without extended types: %v", err)
	}
}
