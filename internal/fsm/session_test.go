package fsm

import (
	"reflect"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/tree"
)

func TestSessions(t *testing.T) {
	h := newHarness(t, Options{})
	r := h.apply(&Entry{Type: EntryCreateSession, ReqID: 42, Session: sess2, Timeout: 4000, Passwd: []byte("pw2")})
	if r.Err != proto.ErrOK || r.ReqID != 42 || len(r.Ops) != 0 || len(r.Changes) != 0 {
		t.Fatalf("create session result %+v", r)
	}
	h.apply(&Entry{Type: EntryCreateSession, Session: sess1, Timeout: 6000, Passwd: []byte("pw1")})
	// A second create for an open session changes nothing.
	h.apply(&Entry{Type: EntryCreateSession, Session: sess1, Timeout: 9, Passwd: []byte("other")})
	want := []Session{{ID: sess1, Timeout: 6000, Passwd: []byte("pw1")}, {ID: sess2, Timeout: 4000, Passwd: []byte("pw2")}}
	var got []Session
	for _, s := range h.m.Sessions() {
		got = append(got, *s)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Sessions = %+v\nwant %+v", got, want)
	}
	if h.m.Session(sess1).Timeout != 6000 || h.m.Session(0x99) != nil {
		t.Fatal("Session lookup")
	}

	// Ephemerals of both sessions, under "/" and under /p.
	h.must(sess1, nil, create("/p", "", 0))
	h.must(sess1, nil, create("/p/e1", "", proto.FlagEphemeral))
	h.must(sess1, nil, createACL("/a-e", readACL, proto.FlagEphemeral))
	h.must(sess1, nil, create("/p/s-", "", proto.FlagEphemeralSequential))
	h.must(sess2, nil, create("/p/e2", "", proto.FlagEphemeral))
	h.must(sess1, nil, container("/c")) // not ephemeral: survives
	p := h.node("/p")
	before := p.Stat()

	r = h.apply(&Entry{Type: EntryCloseSession, Session: sess1})
	if r.Err != proto.ErrOK || len(r.Ops) != 0 {
		t.Fatalf("close: %+v", r)
	}
	wantCh := []Change{
		{Type: proto.EventNodeDeleted, Path: "/a-e", ACL: readACL},
		{Type: proto.EventNodeChildrenChanged, Path: "/", ACL: openACL},
		{Type: proto.EventNodeDeleted, Path: "/p/e1", ACL: openACL},
		{Type: proto.EventNodeChildrenChanged, Path: "/p", ACL: openACL},
		{Type: proto.EventNodeDeleted, Path: "/p/s-0000000001", ACL: openACL},
		{Type: proto.EventNodeChildrenChanged, Path: "/p", ACL: openACL},
	}
	if !reflect.DeepEqual(r.Changes, wantCh) {
		t.Fatalf("close changes %+v\nwant %+v", r.Changes, wantCh)
	}
	for _, gone := range []string{"/a-e", "/p/e1", "/p/s-0000000001"} {
		if h.m.Tree().Get(gone) != nil {
			t.Fatalf("%s survived its session", gone)
		}
	}
	if h.m.Tree().Get("/p/e2") == nil || h.m.Tree().Get("/c") == nil {
		t.Fatal("close removed nodes it does not own")
	}
	after := p.Stat()
	if after.Pzxid != int64(h.index) || after.Cversion != before.Cversion+2 || after.NumChildren != 1 {
		t.Fatalf("/p before %+v after %+v", before, after)
	}
	if h.m.Session(sess1) != nil || len(h.m.Tree().Ephemerals(sess1)) != 0 {
		t.Fatal("session still open")
	}

	// A closed or unknown session gets SessionExpired and changes nothing.
	state := dumpMachine(h.m)
	for _, e := range []*Entry{
		{Type: EntryCloseSession, Session: sess1},
		{Type: EntryCloseSession, Session: 0x77},
		{Type: EntryTxn, Session: sess1, Ops: []Op{create("/x", "", 0)}},
		{Type: EntryTxn, Session: 0x77, Multi: true, Ops: []Op{create("/x", "", 0)}},
	} {
		r := h.apply(e)
		if r.Err != proto.ErrSessionExpired || len(r.Ops) != 0 || len(r.Changes) != 0 {
			t.Fatalf("%+v: %+v", e, r)
		}
	}
	now := dumpMachine(h.m)
	state.Applied, state.LastZxid = now.Applied, now.LastZxid
	if d := diffState(state, now); d != "" {
		t.Fatalf("expired-session entries changed the state:\n%s", d)
	}
	// A session without ephemerals closes without changes.
	h.apply(&Entry{Type: EntryCreateSession, Session: 0x55, Timeout: 1})
	if r := h.apply(&Entry{Type: EntryCloseSession, Session: 0x55}); r.Err != proto.ErrOK || len(r.Changes) != 0 {
		t.Fatalf("close without ephemerals: %+v", r)
	}
	checkState(t, h.m)
}

func TestApplyEmptyAndOrder(t *testing.T) {
	h := newHarness(t, Options{})
	h.m.ApplyEmpty(5)
	if h.m.AppliedIndex() != 5 || h.m.LastZxid() != 5 {
		t.Fatalf("after ApplyEmpty(5): %d %d", h.m.AppliedIndex(), h.m.LastZxid())
	}
	h.index = 5
	h.openSession(sess1)
	if h.m.LastZxid() != 6 {
		t.Fatalf("LastZxid %d", h.m.LastZxid())
	}
	// A failed txn still takes its zxid.
	res, _ := h.one(sess1, nil, create("/none/x", "", 0))
	if res.Err != proto.ErrNoNode || h.m.LastZxid() != 7 {
		t.Fatalf("failed txn: %v lastZxid %d", res.Err, h.m.LastZxid())
	}
	for _, idx := range []uint64{7, 3} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("applying index %d after 7 did not panic", idx)
				}
			}()
			h.m.ApplyEntry(idx, &Entry{Type: EntryCreateSession, Session: 9})
		}()
	}
}

// TestSessionTopByteFF: a server with myid 255 makes session ids whose top
// byte is 0xFF, the TTL marker of an ephemeralOwner. Without extended types
// (the only setting that allows myid 255) such a session's ephemerals are
// ephemerals: listed for the session, shown with it as owner, childless,
// and deleted when it closes, before and after a snapshot round trip. With
// extended types the marker still means TTL.
func TestSessionTopByteFF(t *testing.T) {
	const sess255 int64 = -0x100000000000000 | 0x1234567 // 0xFF00000001234567
	h := newHarness(t, Options{})
	h.openSession(sess255)
	h.must(sess255, nil, create("/p", "", 0))
	res := h.must(sess255, nil, create2("/p/e", proto.FlagEphemeral))
	if res.Stat.EphemeralOwner != sess255 {
		t.Errorf("create2 Stat ephemeralOwner %#x, want the session", uint64(res.Stat.EphemeralOwner))
	}
	for _, m := range []*Machine{h.m, restored(t, h.m)} {
		tr := m.Tree()
		if got := tr.Ephemerals(sess255); !reflect.DeepEqual(got, []string{"/p/e"}) {
			t.Errorf("Ephemerals = %v, want [/p/e]", got)
		}
		if n := tr.Get("/p/e"); tr.Kind(n) != tree.Ephemeral || tr.Stat(n).EphemeralOwner != sess255 || len(tr.TTLNodes()) != 0 {
			t.Errorf("/p/e: kind %v, owner %#x, TTL nodes %v", tr.Kind(n), uint64(tr.Stat(n).EphemeralOwner), tr.TTLNodes())
		}
	}
	if res, _ := h.one(sess255, nil, create("/p/e/c", "", 0)); res.Err != proto.ErrNoChildrenForEphemerals {
		t.Errorf("child of the ephemeral: %v, want NoChildrenForEphemerals", res.Err)
	}
	checkState(t, h.m)
	r := h.apply(&Entry{Type: EntryCloseSession, Session: sess255})
	if r.Err != proto.ErrOK || h.m.Tree().Get("/p/e") != nil || h.m.Tree().EphemeralCount() != 0 {
		t.Fatalf("close: %v; /p/e left: %v", r.Err, h.m.Tree().Get("/p/e") != nil)
	}

	// With extended types the same owner value is a TTL node.
	h = newHarness(t, Options{ExtendedTypes: true})
	h.openSession(sess1)
	h.must(sess1, nil, createTTL("/t", proto.FlagPersistentWithTTL, 0x1234567))
	tr := h.m.Tree()
	if n := h.node("/t"); n.EphemeralOwner != sess255 || tr.Kind(n) != tree.TTL || tr.Stat(n).EphemeralOwner != 0 ||
		!reflect.DeepEqual(tr.TTLNodes(), []string{"/t"}) || tr.EphemeralCount() != 0 {
		t.Errorf("/t: owner %#x kind %v, TTL nodes %v", uint64(n.EphemeralOwner), tr.Kind(n), tr.TTLNodes())
	}
	h.must(sess1, nil, create("/t/c", "", 0))
	checkState(t, h.m)
}

// restored is m's state restored from its snapshot into a machine with
// the same options.
func restored(t *testing.T, m *Machine) *Machine {
	t.Helper()
	back := New(m.opts)
	if err := back.Restore(m.AppendSnapshot(nil)); err != nil {
		t.Fatal(err)
	}
	return back
}
