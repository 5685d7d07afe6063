package fsm

import (
	"math"
	"reflect"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// opsFixture opens sess1 and builds:
//
//	/p                open; children /p/c (version 0), /p/v (version 2)
//	/nd               no DELETE for the world; child /nd/c
//	/nw /na /nr       no WRITE / ADMIN / READ for the world
//	/locked           alice only
//	/e                ephemeral of sess1
//	/cont             container, never had children
//	/used             container whose only child was deleted
//	/full             container with a child
//	/ttl              TTL 1000 ms
func opsFixture(t *testing.T) *harness {
	h := newHarness(t, Options{ExtendedTypes: true})
	h.openSession(sess1)
	alice := []proto.ID{aliceID}
	h.must(sess1, nil, create("/p", "p", 0))
	h.must(sess1, nil, create("/p/c", "c", 0))
	h.must(sess1, nil, create("/p/v", "v", 0))
	h.must(sess1, nil, setData("/p/v", "v1", 0))
	h.must(sess1, nil, setData("/p/v", "v2", 1))
	h.must(sess1, nil, createACL("/nd", noDelete, 0))
	h.must(sess1, nil, create("/nd/c", "", 0))
	h.must(sess1, nil, createACL("/nw", noWrite, 0))
	h.must(sess1, nil, createACL("/na", noAdmin, 0))
	h.must(sess1, nil, createACL("/nr", noRead, 0))
	h.must(sess1, alice, createACL("/locked", aliceACL, 0))
	h.must(sess1, nil, create("/e", "", proto.FlagEphemeral))
	h.must(sess1, nil, container("/cont"))
	h.must(sess1, nil, container("/used"))
	h.must(sess1, nil, create("/used/x", "", 0))
	h.must(sess1, nil, del("/used/x", -1))
	h.must(sess1, nil, container("/full"))
	h.must(sess1, nil, create("/full/x", "", 0))
	h.must(sess1, nil, createTTL("/ttl", proto.FlagPersistentWithTTL, 1000))
	return h
}

type opCase struct {
	name    string
	session int64
	auth    []proto.ID
	op      Op
	want    proto.ErrCode
}

// runOpCases applies each case to a fresh fixture and checks the code, that
// a failure changes nothing, and that a success leaves a consistent state.
func runOpCases(t *testing.T, cases []opCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := opsFixture(t)
			before := dumpMachine(h.m)
			res, r := h.one(tc.session, tc.auth, tc.op)
			if res.Err != tc.want {
				t.Fatalf("got %v, want %v", res.Err, tc.want)
			}
			if tc.want != proto.ErrOK {
				if res.Op != proto.OpError || len(r.Changes) != 0 {
					t.Fatalf("failure result %+v changes %v", res, r.Changes)
				}
				after := dumpMachine(h.m)
				before.Applied, before.LastZxid = after.Applied, after.LastZxid
				if d := diffState(before, after); d != "" {
					t.Fatalf("failed op changed the state:\n%s", d)
				}
				return
			}
			if res.Op != tc.op.Op {
				t.Fatalf("result op %v, want %v", res.Op, tc.op.Op)
			}
			checkState(t, h.m)
		})
	}
}

func TestDelete(t *testing.T) {
	alice := []proto.ID{aliceID}
	runOpCases(t, []opCase{
		// getParentPathAndValidate.
		{"empty", sess1, nil, del("", -1), proto.ErrBadArguments},
		{"relative", sess1, nil, del("p", -1), proto.ErrBadArguments},
		{"NUL", sess1, nil, del("/p/c\x00", -1), proto.ErrBadArguments},
		{"root", sess1, nil, del("/", -1), proto.ErrBadArguments},
		{"/zookeeper", sess1, nil, del("/zookeeper", -1), proto.ErrBadArguments},
		{"/zookeeper/quota", sess1, []proto.ID{superID}, del("/zookeeper/quota", -1), proto.ErrBadArguments},
		{"/zookeeper/config", sess1, nil, del("/zookeeper/config", -1), proto.ErrBadArguments},
		// The parent record, then DELETE on it.
		{"missing parent", sess1, nil, del("/none/x", -1), proto.ErrNoNode},
		{"no DELETE on parent", sess1, nil, del("/nd/c", -1), proto.ErrNoAuth},
		{"NoAuth beats NoNode", sess1, nil, del("/nd/none", -1), proto.ErrNoAuth},
		{"NoAuth beats BadVersion", sess1, nil, del("/nd/c", 9), proto.ErrNoAuth},
		{"super ignores ACLs", sess1, []proto.ID{superID}, del("/nd/c", -1), proto.ErrOK},
		// The node.
		{"missing", sess1, nil, del("/p/none", -1), proto.ErrNoNode},
		{"dot is just missing", sess1, nil, del("/p/.", -1), proto.ErrNoNode},
		{"trailing slash is missing", sess1, nil, del("/p/", -1), proto.ErrNoNode},
		{"bad version", sess1, nil, del("/p/v", 1), proto.ErrBadVersion},
		{"right version", sess1, nil, del("/p/v", 2), proto.ErrOK},
		{"any version", sess1, nil, del("/p/v", -1), proto.ErrOK},
		{"BadVersion beats NotEmpty", sess1, nil, del("/p", 5), proto.ErrBadVersion},
		{"not empty", sess1, nil, del("/p", -1), proto.ErrNotEmpty},
		{"not empty at version", sess1, nil, del("/p", 0), proto.ErrNotEmpty},
		{"node ACL does not matter", sess1, nil, del("/locked", -1), proto.ErrOK},
		{"alice ok", sess1, alice, del("/locked", -1), proto.ErrOK},
		{"ephemeral", sess1, nil, del("/e", -1), proto.ErrOK},
		{"container", sess1, nil, del("/cont", -1), proto.ErrOK},
		{"TTL", sess1, nil, del("/ttl", -1), proto.ErrOK},
		{"reserved child ok", sess1, nil, del("/p/c", 0), proto.ErrOK},
	})
}

func TestDeleteEffects(t *testing.T) {
	h := opsFixture(t)
	p := h.node("/p")
	before := p.Stat()
	nodeACL := h.m.Tree().ACL(h.node("/p/c"))
	res, r := h.one(sess1, nil, del("/p/c", -1))
	if res.Err != proto.ErrOK || res.Op != proto.OpDelete || res.Stat != (proto.Stat{}) || res.Path != "" {
		t.Fatalf("result %+v", res)
	}
	if h.m.Tree().Get("/p/c") != nil {
		t.Fatal("node still there")
	}
	after := p.Stat()
	if after.Pzxid != int64(h.index) || after.Cversion != before.Cversion+1 || after.NumChildren != before.NumChildren-1 || after.Mzxid != before.Mzxid {
		t.Fatalf("parent before %+v after %+v", before, after)
	}
	want := []Change{
		{Type: proto.EventNodeDeleted, Path: "/p/c", ACL: nodeACL},
		{Type: proto.EventNodeChildrenChanged, Path: "/p", ACL: h.m.Tree().ACL(p)},
	}
	if !reflect.DeepEqual(r.Changes, want) {
		t.Fatalf("changes %+v", r.Changes)
	}
	// A top-level node's parent is "/".
	_, r = h.one(sess1, nil, del("/cont", -1))
	if r.Changes[1].Path != "/" {
		t.Fatalf("changes %+v", r.Changes)
	}
	checkState(t, h.m)
}

// TestDeleteContainerFromClient follows PrepRequestProcessor's
// deleteContainer case: no ACL or version check; ephemerals are refused with
// BadVersion, everything else that is empty goes.
func TestDeleteContainerFromClient(t *testing.T) {
	runOpCases(t, []opCase{
		{"relative", sess1, nil, delContainer("cont"), proto.ErrBadArguments},
		{"root", sess1, nil, delContainer("/"), proto.ErrBadArguments},
		{"reserved", sess1, nil, delContainer("/zookeeper/quota"), proto.ErrBadArguments},
		{"missing", sess1, nil, delContainer("/none"), proto.ErrNoNode},
		{"missing parent", sess1, nil, delContainer("/none/x"), proto.ErrNoNode},
		{"not empty", sess1, nil, delContainer("/full"), proto.ErrNotEmpty},
		{"persistent not empty", sess1, nil, delContainer("/p"), proto.ErrNotEmpty},
		{"ephemeral", sess1, nil, delContainer("/e"), proto.ErrBadVersion},
		{"never-used container", sess1, nil, delContainer("/cont"), proto.ErrOK},
		{"used container", sess1, nil, delContainer("/used"), proto.ErrOK},
		{"TTL not yet due", sess1, nil, delContainer("/ttl"), proto.ErrOK},
		{"persistent", sess1, nil, delContainer("/p/c"), proto.ErrOK},
		{"no ACL check", sess1, nil, delContainer("/nd/c"), proto.ErrOK},
		{"no ACL check on the node", sess1, nil, delContainer("/locked"), proto.ErrOK},
	})
}

// TestDeleteContainerFromReaper: entries without a session come from the
// server's reaper and re-check ContainerManager's conditions with the
// entry's time.
func TestDeleteContainerFromReaper(t *testing.T) {
	runOpCases(t, []opCase{
		{"used container", 0, nil, delContainer("/used"), proto.ErrOK},
		{"never-used container", 0, nil, delContainer("/cont"), proto.ErrBadVersion},
		{"container with child", 0, nil, delContainer("/full"), proto.ErrNotEmpty},
		{"persistent", 0, nil, delContainer("/p/c"), proto.ErrBadVersion},
		{"ephemeral", 0, nil, delContainer("/e"), proto.ErrBadVersion},
		{"TTL not due", 0, nil, delContainer("/ttl"), proto.ErrBadVersion},
		{"missing", 0, nil, delContainer("/none"), proto.ErrNoNode},
	})
	// TTL expiry is now - mtime > ttl, by the entry's time.
	for _, tc := range []struct {
		after int64
		want  proto.ErrCode
	}{{999, proto.ErrBadVersion}, {1000, proto.ErrBadVersion}, {1001, proto.ErrOK}} {
		h := opsFixture(t)
		mtime := h.node("/ttl").Mtime
		r := h.apply(&Entry{Type: EntryTxn, Time: mtime + tc.after, Ops: []Op{delContainer("/ttl")}})
		if r.Err != tc.want {
			t.Errorf("TTL 1000, %d ms after mtime: %v, want %v", tc.after, r.Err, tc.want)
		}
	}
	// setData moves mtime, and so the expiry.
	h := opsFixture(t)
	mtime := h.node("/ttl").Mtime
	h.apply(&Entry{Type: EntryTxn, Session: sess1, Time: mtime + 900, Ops: []Op{setData("/ttl", "x", -1)}})
	r := h.apply(&Entry{Type: EntryTxn, Time: mtime + 1500, Ops: []Op{delContainer("/ttl")}})
	if r.Err != proto.ErrBadVersion {
		t.Fatalf("TTL touched by setData reaped: %v", r.Err)
	}
	r = h.apply(&Entry{Type: EntryTxn, Time: mtime + 1901, Ops: []Op{delContainer("/ttl")}})
	if r.Err != proto.ErrOK || len(r.Changes) != 2 || r.Changes[0].Path != "/ttl" {
		t.Fatalf("due TTL: %v %+v", r.Err, r.Changes)
	}
	checkState(t, h.m)
}

func TestSetData(t *testing.T) {
	runOpCases(t, []opCase{
		{"relative", sess1, nil, setData("p", "x", -1), proto.ErrBadArguments},
		{"trailing slash", sess1, nil, setData("/p/", "x", -1), proto.ErrBadArguments},
		{"dot", sess1, nil, setData("/p/.", "x", -1), proto.ErrBadArguments},
		{"bad path beats NoNode", sess1, nil, setData("/none/", "x", -1), proto.ErrBadArguments},
		{"missing", sess1, nil, setData("/none", "x", -1), proto.ErrNoNode},
		{"no WRITE", sess1, nil, setData("/nw", "x", -1), proto.ErrNoAuth},
		{"NoAuth beats BadVersion", sess1, nil, setData("/nw", "x", 7), proto.ErrNoAuth},
		{"config is read-only", sess1, nil, setData("/zookeeper/config", "x", -1), proto.ErrNoAuth},
		{"super writes config", sess1, []proto.ID{superID}, setData("/zookeeper/config", "x", -1), proto.ErrOK},
		{"other user", sess1, []proto.ID{bobID}, setData("/locked", "x", -1), proto.ErrNoAuth},
		{"alice", sess1, []proto.ID{bobID, aliceID}, setData("/locked", "x", -1), proto.ErrOK},
		{"bad version", sess1, nil, setData("/p/v", "x", 1), proto.ErrBadVersion},
		{"right version", sess1, nil, setData("/p/v", "x", 2), proto.ErrOK},
		{"root", sess1, nil, setData("/", "x", 0), proto.ErrOK},
		{"ephemeral", sess1, nil, setData("/e", "x", 0), proto.ErrOK},
	})
}

func TestSetDataEffects(t *testing.T) {
	h := opsFixture(t)
	n := h.node("/p/v")
	before := n.Stat()
	size := h.m.Tree().DataSize()
	res, r := h.one(sess1, nil, setData("/p/v", "new data", 2))
	want := before
	want.Version, want.Mzxid, want.Mtime, want.DataLength = 3, int64(h.index), h.now, 8
	if res.Err != proto.ErrOK || res.Op != proto.OpSetData || res.Stat != want || n.Stat() != want {
		t.Fatalf("result %+v\nnode %+v\nwant %+v", res, n.Stat(), want)
	}
	if string(n.Data) != "new data" || h.m.Tree().DataSize() != size+6 {
		t.Fatalf("data %q size %d", n.Data, h.m.Tree().DataSize())
	}
	wantCh := []Change{{Type: proto.EventNodeDataChanged, Path: "/p/v", ACL: openACL}}
	if !reflect.DeepEqual(r.Changes, wantCh) {
		t.Fatalf("changes %+v", r.Changes)
	}
	// Null data stays null.
	h.must(sess1, nil, Op{Op: proto.OpSetData, Path: "/p/v", Version: -1})
	if n.Data != nil {
		t.Fatalf("null data stored as %#v", n.Data)
	}
	// 3.9's checkAndIncVersion wraps at MaxInt32 (ZOOKEEPER-4743 came later).
	n.Version = math.MaxInt32
	if res := h.must(sess1, nil, setData("/p/v", "", math.MaxInt32)); res.Stat.Version != math.MinInt32 {
		t.Fatalf("version after MaxInt32: %d", res.Stat.Version)
	}
	checkState(t, h.m)
}

func TestSetACL(t *testing.T) {
	alice := []proto.ID{aliceID}
	runOpCases(t, []opCase{
		{"relative", sess1, nil, setACL("p", openACL, -1), proto.ErrBadArguments},
		{"bad path beats a bad ACL", sess1, nil, setACL("/p/", nil, -1), proto.ErrBadArguments},
		{"empty ACL", sess1, nil, setACL("/p", nil, -1), proto.ErrInvalidACL},
		{"bad ACL beats NoNode", sess1, nil, setACL("/none", badDigest, -1), proto.ErrInvalidACL},
		{"auth without identity", sess1, nil, setACL("/p", authACL, -1), proto.ErrInvalidACL},
		{"missing", sess1, nil, setACL("/none", openACL, -1), proto.ErrNoNode},
		{"no ADMIN", sess1, nil, setACL("/na", openACL, -1), proto.ErrNoAuth},
		{"NoAuth beats BadVersion", sess1, nil, setACL("/na", openACL, 5), proto.ErrNoAuth},
		{"config needs ADMIN", sess1, nil, setACL("/zookeeper/config", openACL, -1), proto.ErrNoAuth},
		{"config aversion is -1", sess1, []proto.ID{superID}, setACL("/zookeeper/config", openACL, 0), proto.ErrBadVersion},
		{"config at -1 means any", sess1, []proto.ID{superID}, setACL("/zookeeper/config", openACL, -1), proto.ErrOK},
		{"bad aversion", sess1, nil, setACL("/p", openACL, 1), proto.ErrBadVersion},
		{"right aversion", sess1, nil, setACL("/p", readACL, 0), proto.ErrOK},
		{"auth expands", sess1, alice, setACL("/p", authACL, -1), proto.ErrOK},
		{"alice", sess1, alice, setACL("/locked", openACL, 0), proto.ErrOK},
	})
}

func TestSetACLEffects(t *testing.T) {
	h := opsFixture(t)
	n := h.node("/p")
	before := n.Stat()
	res, r := h.one(sess1, []proto.ID{aliceID}, setACL("/p", authACL, 0))
	want := before
	want.Aversion = 1
	if res.Err != proto.ErrOK || res.Op != proto.OpSetACL || res.Stat != want || n.Stat() != want {
		t.Fatalf("result %+v\nwant %+v", res, want)
	}
	if got := h.m.Tree().ACL(n); !reflect.DeepEqual(got, aliceACL) {
		t.Fatalf("ACL %v", got)
	}
	if len(r.Changes) != 0 {
		t.Fatalf("setACL fired %v", r.Changes)
	}
	// The new ACL applies from the next op.
	if res, _ := h.one(sess1, nil, setData("/p", "x", -1)); res.Err != proto.ErrNoAuth {
		t.Fatalf("setData after setACL: %v", res.Err)
	}
	// Config's aversion goes -1 -> 0.
	res = h.must(sess1, []proto.ID{superID}, setACL("/zookeeper/config", readACL, -1))
	if res.Stat.Aversion != 0 {
		t.Fatalf("config aversion %d", res.Stat.Aversion)
	}
	checkState(t, h.m)
}

func TestCheck(t *testing.T) {
	runOpCases(t, []opCase{
		{"relative", sess1, nil, check("p", -1), proto.ErrBadArguments},
		{"dot", sess1, nil, check("/p/.", -1), proto.ErrBadArguments},
		{"missing", sess1, nil, check("/none", -1), proto.ErrNoNode},
		{"no READ", sess1, nil, check("/nr", -1), proto.ErrNoAuth},
		{"NoAuth beats BadVersion", sess1, nil, check("/nr", 3), proto.ErrNoAuth},
		{"bad version", sess1, nil, check("/p/v", 0), proto.ErrBadVersion},
		{"right version", sess1, nil, check("/p/v", 2), proto.ErrOK},
		{"any version", sess1, nil, check("/p/v", -1), proto.ErrOK},
		{"root", sess1, nil, check("/", 0), proto.ErrOK},
	})
	h := opsFixture(t)
	res, r := h.one(sess1, nil, check("/p", 0))
	if res.Op != proto.OpCheck || len(r.Changes) != 0 || h.node("/p").Stat().Version != 0 {
		t.Fatalf("check: %+v %v", res, r.Changes)
	}
}

func TestUnknownOp(t *testing.T) {
	h := opsFixture(t)
	r := h.m.ApplyEntry(h.index+1, &Entry{Type: EntryTxn, Session: sess1, Ops: []Op{{Op: proto.OpGetData, Path: "/p"}}})
	if r.Err != proto.ErrUnimplemented {
		t.Fatalf("getData as a write: %v", r.Err)
	}
}
