package fsm

import (
	"math"
	"reflect"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/tree"
	"github.com/paddockhq/paddock/internal/zpath"
)

// createFixture opens sess1 and builds:
//
//	/p        persistent, open
//	/e        ephemeral of sess1
//	/locked   alice only, with child /locked/c
//	/nc       everything but CREATE for the world
//	/cont     container;  /ttl TTL (extended types only)
func createFixture(t *testing.T, ext bool) *harness {
	h := newHarness(t, Options{ExtendedTypes: ext})
	h.openSession(sess1)
	h.must(sess1, nil, create("/p", "p", proto.FlagPersistent))
	h.must(sess1, nil, create("/e", "e", proto.FlagEphemeral))
	h.must(sess1, []proto.ID{aliceID}, createACL("/locked", aliceACL, proto.FlagPersistent))
	h.must(sess1, []proto.ID{aliceID}, createACL("/locked/c", aliceACL, proto.FlagPersistent))
	h.must(sess1, nil, createACL("/nc", noCreate, proto.FlagPersistent))
	h.must(sess1, nil, container("/cont"))
	if ext {
		h.must(sess1, nil, createTTL("/ttl", proto.FlagPersistentWithTTL, 1000))
	}
	return h
}

// TestCreateErrors walks PrepRequestProcessor.pRequest2TxnCreate's checks in
// order; where two checks could fail, the earlier one must win.
func TestCreateErrors(t *testing.T) {
	alice := []proto.ID{aliceID}
	cases := []struct {
		name    string
		ext     bool
		session int64
		auth    []proto.ID
		op      Op
		want    proto.ErrCode
	}{
		// CreateMode.fromFlag.
		{"flag 7", true, sess1, nil, create("/x", "", 7), proto.ErrBadArguments},
		{"flag -1", true, sess1, nil, create("/x", "", -1), proto.ErrBadArguments},
		{"flag 7 beats a bad path", true, sess1, nil, create("x", "", 7), proto.ErrBadArguments},
		// validateCreateRequest: TTL mode needs extended types.
		{"TTL mode, extended off", false, sess1, nil, createTTL("/x", proto.FlagPersistentWithTTL, 100), proto.ErrUnimplemented},
		{"TTL seq mode, extended off", false, sess1, nil, createTTL("/x", proto.FlagPersistentSequentialWithTTL, 100), proto.ErrUnimplemented},
		{"TTL mode via create, extended off", false, sess1, nil, create("/x", "", proto.FlagPersistentWithTTL), proto.ErrUnimplemented},
		{"unimplemented beats a bad ttl and path", false, 0, nil, createTTL("x", proto.FlagPersistentWithTTL, -5), proto.ErrUnimplemented},
		// EphemeralType.validateTTL.
		{"createTTL non-TTL mode, extended off", false, sess1, nil, createTTL("/x", proto.FlagPersistent, 100), proto.ErrBadArguments},
		{"TTL mode via create (ttl -1)", true, sess1, nil, create("/x", "", proto.FlagPersistentWithTTL), proto.ErrBadArguments},
		{"TTL mode via create2", true, sess1, nil, create2("/x", proto.FlagPersistentSequentialWithTTL), proto.ErrBadArguments},
		{"ttl 0", true, sess1, nil, createTTL("/x", proto.FlagPersistentWithTTL, 0), proto.ErrBadArguments},
		{"ttl -1", true, sess1, nil, createTTL("/x", proto.FlagPersistentWithTTL, -1), proto.ErrBadArguments},
		{"ttl over max", true, sess1, nil, createTTL("/x", proto.FlagPersistentWithTTL, tree.MaxTTL+1), proto.ErrBadArguments},
		{"ttl with persistent mode", true, sess1, nil, createTTL("/x", proto.FlagPersistent, 100), proto.ErrBadArguments},
		{"ttl with ephemeral mode", true, sess1, nil, createTTL("/x", proto.FlagEphemeral, 100), proto.ErrBadArguments},
		{"ttl with container mode", true, sess1, nil, createTTL("/x", proto.FlagContainer, 100), proto.ErrBadArguments},
		// ZooKeeper passes this one through every check and then fails in
		// DataTree (the server stops); refusing it where ZooKeeper would
		// create the node is ours, and every other check comes first.
		{"createTTL non-TTL mode, negative ttl", true, sess1, nil, createTTL("/x", proto.FlagPersistent, -1), proto.ErrBadArguments},
		{"createTTL non-TTL mode, negative ttl, missing parent", true, sess1, nil, createTTL("/missing/x", proto.FlagPersistent, -5), proto.ErrNoNode},
		{"createTTL non-TTL mode, negative ttl, no CREATE", true, sess1, nil, createTTL("/nc/x", proto.FlagPersistent, -5), proto.ErrNoAuth},
		{"createTTL non-TTL mode, negative ttl, exists", true, sess1, nil, createTTL("/p", proto.FlagPersistent, -5), proto.ErrNodeExists},
		{"createTTL ephemeral mode, negative ttl, exists", true, sess1, nil, createTTL("/e", proto.FlagEphemeral, -5), proto.ErrNodeExists},
		{"createTTL non-TTL mode, negative ttl, ephemeral parent", true, sess1, nil, createTTL("/e/x", proto.FlagPersistent, -5), proto.ErrNoChildrenForEphemerals},
		{"bad ttl beats no session", true, 0, nil, createTTL("/x", proto.FlagEphemeral, 100), proto.ErrBadArguments},
		// Ephemerals need a session.
		{"ephemeral without session", true, 0, nil, create("/x", "", proto.FlagEphemeral), proto.ErrSessionExpired},
		{"ephemeral seq without session", true, 0, nil, create("/x", "", proto.FlagEphemeralSequential), proto.ErrSessionExpired},
		{"no session beats a bad path", true, 0, nil, create("x", "", proto.FlagEphemeral), proto.ErrSessionExpired},
		// validatePathForCreate.
		{"no slash", true, sess1, nil, create("x", "", 0), proto.ErrBadArguments},
		{"empty path", true, sess1, nil, create("", "", 0), proto.ErrBadArguments},
		{"NUL", true, sess1, nil, create("/x\x00", "", 0), proto.ErrBadArguments},
		{"bad path beats a bad ACL", true, sess1, nil, createACL("x", nil, 0), proto.ErrBadArguments},
		// fixupACL.
		{"empty ACL", true, sess1, nil, createACL("/x", nil, 0), proto.ErrInvalidACL},
		{"malformed digest", true, sess1, nil, createACL("/x", badDigest, 0), proto.ErrInvalidACL},
		{"auth without identity", true, sess1, nil, createACL("/x", authACL, 0), proto.ErrInvalidACL},
		{"bad ACL beats a missing parent", true, sess1, nil, createACL("/missing/x", nil, 0), proto.ErrInvalidACL},
		// The parent.
		{"missing parent", true, sess1, nil, create("/missing/x", "", 0), proto.ErrNoNode},
		{"relative parent", true, sess1, nil, create("p/x", "", 0), proto.ErrNoNode},
		{"parent with trailing slash", true, sess1, nil, create("/p//x", "", 0), proto.ErrNoNode},
		{"missing parent beats NoAuth and a bad name", true, sess1, nil, create("/locked/none/.", "", 0), proto.ErrNoNode},
		// checkACL(CREATE) on the parent.
		{"no CREATE on parent", true, sess1, nil, create("/nc/x", "", 0), proto.ErrNoAuth},
		{"digest parent, no auth", true, sess1, nil, create("/locked/x", "", 0), proto.ErrNoAuth},
		{"digest parent, other user", true, sess1, []proto.ID{bobID}, create("/locked/x", "", 0), proto.ErrNoAuth},
		{"NoAuth beats a bad name", true, sess1, nil, create("/locked/.", "", 0), proto.ErrNoAuth},
		{"NoAuth beats NodeExists", true, sess1, nil, create("/locked/c", "", 0), proto.ErrNoAuth},
		// validatePath on the final path.
		{"dot name", true, sess1, alice, create("/locked/.", "", 0), proto.ErrBadArguments},
		{"dotdot name", true, sess1, nil, create("/p/..", "", 0), proto.ErrBadArguments},
		{"trailing slash", true, sess1, nil, create("/p/", "", 0), proto.ErrBadArguments},
		{"double slash at root", true, sess1, nil, create("//x", "", 0), proto.ErrBadArguments},
		{"control char", true, sess1, nil, create("/p/a\x01", "", 0), proto.ErrBadArguments},
		{"invalid UTF-8", true, sess1, nil, create("/p/\xff", "", 0), proto.ErrBadArguments},
		{"bad name beats NoChildrenForEphemerals", true, sess1, nil, create("/e/.", "", 0), proto.ErrBadArguments},
		// NodeExists.
		{"exists", true, sess1, nil, create("/p", "", 0), proto.ErrNodeExists},
		{"root exists", true, sess1, nil, create("/", "", 0), proto.ErrNodeExists},
		{"reserved exists", true, sess1, nil, create("/zookeeper", "", 0), proto.ErrNodeExists},
		{"config exists", true, sess1, nil, create("/zookeeper/config", "", 0), proto.ErrNodeExists},
		{"exists as alice", true, sess1, alice, create("/locked/c", "", 0), proto.ErrNodeExists},
		{"ephemeral exists", true, sess1, nil, create("/e", "", proto.FlagEphemeral), proto.ErrNodeExists},
		// Ephemeral parents.
		{"child of ephemeral", true, sess1, nil, create("/e/x", "", 0), proto.ErrNoChildrenForEphemerals},
		{"ephemeral child of ephemeral", true, sess1, nil, create("/e/x", "", proto.FlagEphemeral), proto.ErrNoChildrenForEphemerals},
		{"sequential child of ephemeral", true, sess1, nil, create("/e/x", "", proto.FlagPersistentSequential), proto.ErrNoChildrenForEphemerals},
		{"container child of ephemeral", true, sess1, nil, container("/e/x"), proto.ErrNoChildrenForEphemerals},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := createFixture(t, tc.ext)
			before := h.m.AppendSnapshot(nil)
			res, r := h.one(tc.session, tc.auth, tc.op)
			if res.Err != tc.want || res.Op != proto.OpError {
				t.Fatalf("got %v (op %v), want %v", res.Err, res.Op, tc.want)
			}
			if len(r.Changes) != 0 || res.Path != "" {
				t.Fatalf("failed create reported path %q changes %v", res.Path, r.Changes)
			}
			// Nothing changed but the applied index.
			a, b := snapshotDump(t, h.m.opts, before), snapshotDump(t, h.m.opts, h.m.AppendSnapshot(nil))
			a.Applied, a.LastZxid = b.Applied, b.LastZxid
			if d := diffState(a, b); d != "" {
				t.Fatalf("failed create changed the state:\n%s", d)
			}
		})
	}
}

// TestCreateSuccess checks each kind of create: what is stored, what the
// client sees, the result and the changes.
func TestCreateSuccess(t *testing.T) {
	cases := []struct {
		name      string
		op        Op
		path      string
		kind      tree.Kind
		rawOwner  int64
		withStat  bool
		needsAuth bool
	}{
		{"persistent", create("/p/a", "data", proto.FlagPersistent), "/p/a", tree.Persistent, 0, false, false},
		{"create2", create2("/p/a", proto.FlagPersistent), "/p/a", tree.Persistent, 0, true, false},
		{"ephemeral", create("/p/a", "", proto.FlagEphemeral), "/p/a", tree.Ephemeral, sess1, false, false},
		{"ephemeral create2", create2("/p/a", proto.FlagEphemeral), "/p/a", tree.Ephemeral, sess1, true, false},
		{"sequential", create("/p/a-", "", proto.FlagPersistentSequential), "/p/a-0000000000", tree.Persistent, 0, false, false},
		{"ephemeral sequential", create("/p/a-", "", proto.FlagEphemeralSequential), "/p/a-0000000000", tree.Ephemeral, sess1, false, false},
		{"container", container("/p/a"), "/p/a", tree.Container, tree.ContainerOwner, true, false},
		{"sequential container", Op{Op: proto.OpCreateContainer, Path: "/p/a", ACL: openACL, Flags: proto.FlagPersistentSequential}, "/p/a0000000000", tree.Container, tree.ContainerOwner, true, false},
		// CreateContainerTxn wins over the ephemeral flag.
		{"ephemeral-flagged container", Op{Op: proto.OpCreateContainer, Path: "/p/a", ACL: openACL, Flags: proto.FlagEphemeral}, "/p/a", tree.Container, tree.ContainerOwner, true, false},
		// A plain CreateTxn: flag 4 through opcode 1 is not a container.
		{"container flag via create", create("/p/a", "", proto.FlagContainer), "/p/a", tree.Persistent, 0, false, false},
		{"TTL", createTTL("/p/a", proto.FlagPersistentWithTTL, 5000), "/p/a", tree.TTL, tree.TTLOwner(5000), true, false},
		{"TTL max", createTTL("/p/a", proto.FlagPersistentWithTTL, tree.MaxTTL), "/p/a", tree.TTL, tree.TTLOwner(tree.MaxTTL), true, false},
		{"sequential TTL", createTTL("/p/a", proto.FlagPersistentSequentialWithTTL, 1), "/p/a0000000000", tree.TTL, tree.TTLOwner(1), true, false},
		{"under a container", create("/cont/a", "", proto.FlagEphemeral), "/cont/a", tree.Ephemeral, sess1, false, false},
		{"under a TTL node", create("/ttl/a", "", 0), "/ttl/a", tree.Persistent, 0, false, false},
		{"at root", create("/a", "", 0), "/a", tree.Persistent, 0, false, false},
		{"sequential at root", create("/", "", proto.FlagPersistentSequential), "/0000000006", tree.Persistent, 0, false, false},
		{"sequential with trailing slash", create("/p/", "", proto.FlagPersistentSequential), "/p/0000000000", tree.Persistent, 0, false, false},
		{"under reserved node", create("/zookeeper/x", "", 0), "/zookeeper/x", tree.Persistent, 0, false, false},
		{"as alice under alice", create("/locked/a", "", 0), "/locked/a", tree.Persistent, 0, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := createFixture(t, true)
			var auth []proto.ID
			if tc.needsAuth {
				auth = []proto.ID{aliceID}
			}
			parentPath, _ := zpath.Parent(tc.path)
			parent := h.node(parentPath)
			parentBefore := parent.Stat()
			res, r := h.one(sess1, auth, tc.op)
			if res.Err != proto.ErrOK || res.Op != tc.op.Op || res.Path != tc.path {
				t.Fatalf("result %+v, want ok %v %q", res, tc.op.Op, tc.path)
			}
			n := h.node(tc.path)
			zxid := int64(h.index)
			if n.Kind() != tc.kind || n.EphemeralOwner != tc.rawOwner {
				t.Fatalf("kind %v owner %#x, want %v %#x", n.Kind(), n.EphemeralOwner, tc.kind, tc.rawOwner)
			}
			clientOwner := int64(0)
			if tc.kind == tree.Ephemeral {
				clientOwner = sess1
			}
			want := proto.Stat{Czxid: zxid, Mzxid: zxid, Ctime: h.now, Mtime: h.now, EphemeralOwner: clientOwner,
				DataLength: int32(len(tc.op.Data)), Pzxid: zxid}
			if got := n.Stat(); got != want {
				t.Fatalf("Stat %+v\nwant %+v", got, want)
			}
			if tc.withStat != (res.Stat != proto.Stat{}) || (tc.withStat && res.Stat != want) {
				t.Fatalf("result Stat %+v (withStat %v)", res.Stat, tc.withStat)
			}
			ps := parent.Stat()
			if ps.Pzxid != zxid || ps.Cversion != parentBefore.Cversion+1 || ps.NumChildren != parentBefore.NumChildren+1 {
				t.Fatalf("parent Stat %+v, before %+v", ps, parentBefore)
			}
			wantChanges := []Change{
				{Type: proto.EventNodeCreated, Path: tc.path, ACL: h.m.Tree().ACL(n)},
				{Type: proto.EventNodeChildrenChanged, Path: parentPath, ACL: h.m.Tree().ACL(parent)},
			}
			if !reflect.DeepEqual(r.Changes, wantChanges) {
				t.Fatalf("changes %+v\nwant %+v", r.Changes, wantChanges)
			}
			checkState(t, h.m)
		})
	}
}

func TestCreateACLFixup(t *testing.T) {
	h := createFixture(t, false)
	h.must(sess1, []proto.ID{aliceID, bobID}, createACL("/p/a", authACL, 0))
	want := []proto.ACL{{Perms: proto.PermAll, ID: aliceID}, {Perms: proto.PermAll, ID: bobID}}
	if got := h.m.Tree().ACL(h.node("/p/a")); !reflect.DeepEqual(got, want) {
		t.Fatalf("auth ACL stored as %v, want %v", got, want)
	}
	dup := []proto.ACL{openACL[0], openACL[0]}
	h.must(sess1, nil, createACL("/p/b", dup, 0))
	if got := h.m.Tree().ACL(h.node("/p/b")); !reflect.DeepEqual(got, openACL) {
		t.Fatalf("duplicates kept: %v", got)
	}
	// The super user passes any parent ACL.
	h.must(sess1, []proto.ID{superID}, create("/locked/s", "", 0))
	h.must(sess1, []proto.ID{superID}, create("/nc/s", "", 0))
	checkState(t, h.m)
}

func TestSequentialNaming(t *testing.T) {
	h := newHarness(t, Options{})
	h.openSession(sess1)
	if res := h.must(sess1, nil, create("/", "", proto.FlagPersistentSequential)); res.Path != "/0000000000" {
		t.Fatalf("first sequential at root: %q (reserved nodes must not count)", res.Path)
	}
	h.must(sess1, nil, create("/q", "", 0))
	var names []string
	for i := 0; i < 3; i++ {
		names = append(names, h.must(sess1, nil, create("/q/n-", "", proto.FlagPersistentSequential)).Path)
	}
	h.must(sess1, nil, del("/q/n-0000000001", -1))
	h.must(sess1, nil, create("/q/plain", "", 0)) // plain creates count too
	names = append(names, h.must(sess1, nil, create("/q/n-", "", proto.FlagEphemeralSequential)).Path)
	names = append(names, h.must(sess1, nil, create2("/q/", proto.FlagPersistentSequential)).Path)
	want := []string{"/q/n-0000000000", "/q/n-0000000001", "/q/n-0000000002", "/q/n-0000000004", "/q/0000000005"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("names %v\nwant  %v", names, want)
	}
	// A sequential name that collides with an existing node is NodeExists.
	h.must(sess1, nil, create("/q/c0000000006", "", 0))
	h.must(sess1, nil, create("/q/x", "", 0)) // counter 7 -> 8
	if res, _ := h.one(sess1, nil, create("/q/c", "", proto.FlagPersistentSequential)); res.Err != proto.ErrOK {
		t.Fatalf("c0000000008: %v", res.Err)
	}
	h.must(sess1, nil, create("/q/c0000000010", "", 0)) // counter 9 -> 10
	if res, _ := h.one(sess1, nil, create("/q/c", "", proto.FlagPersistentSequential)); res.Err != proto.ErrNodeExists {
		t.Fatalf("sequential onto an existing name: %v", res.Err)
	}
	// The counter stops at MaxInt32 (TestSequentialCounterStopsAtMaxInt32).
	h.node("/q").Cversion = math.MaxInt32
	res := h.must(sess1, nil, create("/q/w", "", proto.FlagPersistentSequential))
	if res.Path != "/q/w2147483647" {
		t.Fatalf("name at MaxInt32 %q", res.Path)
	}
	if got := h.node("/q").Cversion; got != math.MaxInt32 {
		t.Fatalf("counter after MaxInt32 = %d", got)
	}
}
