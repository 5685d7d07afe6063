package fsm

import (
	"bytes"
	"reflect"
	"slices"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/tree"
)

func TestMultiSuccess(t *testing.T) {
	h := opsFixture(t)
	r := h.multi(sess1, nil,
		create("/m", "m", 0),
		create2("/m/a", 0),
		create("/m/s-", "", proto.FlagPersistentSequential),
		create("/m/s-", "", proto.FlagEphemeralSequential),
		setData("/m", "m2", 0),
		check("/m", 1),
		setData("/p/v", "x", 2),
		del("/p/c", 0),
		container("/m/c"),
		createTTL("/m/t", proto.FlagPersistentWithTTL, 50),
		setACL("/m/a", readACL, 0),
		del("/m/a", -1),
	)
	zxid := int64(h.index)
	if r.Err != proto.ErrOK || len(r.Ops) != 12 {
		t.Fatalf("multi: %v, %d results", r.Err, len(r.Ops))
	}
	wantOps := []proto.OpCode{proto.OpCreate, proto.OpCreate2, proto.OpCreate, proto.OpCreate, proto.OpSetData,
		proto.OpCheck, proto.OpSetData, proto.OpDelete, proto.OpCreateContainer, proto.OpCreateTTL, proto.OpSetACL, proto.OpDelete}
	for i, res := range r.Ops {
		if res.Err != proto.ErrOK || res.Op != wantOps[i] {
			t.Fatalf("op %d: %+v, want ok %v", i, res, wantOps[i])
		}
	}
	if r.Ops[2].Path != "/m/s-0000000001" || r.Ops[3].Path != "/m/s-0000000002" {
		t.Fatalf("sequential names in a multi: %q %q", r.Ops[2].Path, r.Ops[3].Path)
	}
	if r.Ops[1].Stat.Czxid != zxid || r.Ops[4].Stat.Version != 1 || r.Ops[10].Stat.Aversion != 1 {
		t.Fatalf("result stats %+v %+v %+v", r.Ops[1].Stat, r.Ops[4].Stat, r.Ops[10].Stat)
	}
	// Every op got the multi's zxid.
	for _, p := range []string{"/m", "/m/s-0000000001", "/m/s-0000000002", "/m/c", "/m/t"} {
		if s := h.node(p).Stat(); s.Czxid != zxid {
			t.Fatalf("%s czxid %d, want %d", p, s.Czxid, zxid)
		}
	}
	if s := h.node("/m").Stat(); s.Mzxid != zxid || s.Pzxid != zxid || s.Cversion != 6 || s.NumChildren != 4 {
		t.Fatalf("/m %+v", s)
	}
	if s := h.node("/p/v").Stat(); s.Mzxid != zxid || s.Version != 3 {
		t.Fatalf("/p/v %+v", s)
	}
	// Changes of every op, in op order.
	var types []proto.EventType
	var paths []string
	for _, c := range r.Changes {
		types = append(types, c.Type)
		paths = append(paths, c.Path)
	}
	wantPaths := []string{"/m", "/", "/m/a", "/m", "/m/s-0000000001", "/m", "/m/s-0000000002", "/m", "/m",
		"/p/v", "/p/c", "/p", "/m/c", "/m", "/m/t", "/m", "/m/a", "/m"}
	wantTypes := []proto.EventType{1, 4, 1, 4, 1, 4, 1, 4, 3, 3, 2, 4, 1, 4, 1, 4, 2, 4}
	if !reflect.DeepEqual(paths, wantPaths) || !reflect.DeepEqual(types, wantTypes) {
		t.Fatalf("changes\n%v %v\nwant\n%v %v", paths, types, wantPaths, wantTypes)
	}
	// The deleted node's change carries the ACL it had when deleted.
	if !reflect.DeepEqual(r.Changes[16].ACL, readACL) {
		t.Fatalf("delete change ACL %v", r.Changes[16].ACL)
	}
	checkState(t, h.m)

	// An empty multi succeeds and does nothing.
	if r := h.multi(sess1, nil); r.Err != proto.ErrOK || len(r.Ops) != 0 || len(r.Changes) != 0 {
		t.Fatalf("empty multi: %+v", r)
	}
}

// TestMultiFailure makes the op at each position fail after ops of every
// kind changed the tree, and checks ZooKeeper's result shape and that the
// state is exactly as before.
func TestMultiFailure(t *testing.T) {
	alice := []proto.ID{aliceID}
	cases := []struct {
		name string
		auth []proto.ID
		ops  []Op
		fail int
		code proto.ErrCode
	}{
		{"first op", nil, []Op{create("/p", "", 0), create("/x", "", 0)}, 0, proto.ErrNodeExists},
		{"after creates", nil, []Op{
			create("/x", "x", 0), create("/x/y", "", proto.FlagEphemeral), container("/x/c"),
			createTTL("/x/t", proto.FlagPersistentWithTTL, 10), create("/p/c", "", 0)}, 4, proto.ErrNodeExists},
		{"after sequential creates", nil, []Op{
			create("/p/s-", "", proto.FlagPersistentSequential), create("/p/s-", "", proto.FlagEphemeralSequential),
			create("/", "", proto.FlagPersistentSequential), check("/p", 5)}, 3, proto.ErrBadVersion},
		{"after deletes", nil, []Op{del("/p/c", -1), del("/p/v", 2), del("/e", -1), del("/cont", -1), del("/ttl", -1),
			del("/p", -1), check("/none", -1)}, 6, proto.ErrNoNode},
		{"delete then recreate", nil, []Op{del("/p/v", -1), create("/p/v", "other", proto.FlagEphemeral),
			setData("/p/v", "z", 0), del("/p/c", 3)}, 3, proto.ErrBadVersion},
		{"after setData", nil, []Op{setData("/p/v", "a", -1), setData("/p/v", "b", 3), setData("/p", "c", -1),
			setData("/", "r", -1), setData("/p/v", "d", 3)}, 4, proto.ErrBadVersion},
		{"after setACL", alice, []Op{setACL("/p", aliceACL, -1), setACL("/p/c", authACL, 0), setACL("/locked", readACL, 0),
			setACL("/p", readACL, 1), setData("/p", "x", -1)}, 4, proto.ErrNoAuth},
		{"setACL drops the last use of a list", nil, []Op{setACL("/nr", openACL, -1), setACL("/nw", openACL, -1),
			create("/none/x", "", 0)}, 2, proto.ErrNoNode},
		{"mixed, middle op fails", nil, []Op{create("/x", "", 0), del("/p/c", -1), setData("/x", "d", -1),
			create("/x", "", 0), setData("/p", "", -1), del("/x", -1)}, 3, proto.ErrNodeExists},
		{"invalid ACL", nil, []Op{create("/x", "", 0), createACL("/y", badDigest, 0)}, 1, proto.ErrInvalidACL},
		{"bad arguments", nil, []Op{create("/x", "", 0), create("/x/.", "", 0), create("/z", "", 0)}, 1, proto.ErrBadArguments},
		{"not empty after creating a child", nil, []Op{create("/x", "", 0), create("/x/y", "", 0), del("/x", -1)}, 2, proto.ErrNotEmpty},
		{"child of a new ephemeral", nil, []Op{create("/x", "", proto.FlagEphemeral), create("/x/y", "", 0)}, 1, proto.ErrNoChildrenForEphemerals},
		{"child of a new ephemeral container", nil, []Op{ephemeralContainer("/x"), create("/x/y", "", 0)}, 1, proto.ErrNoChildrenForEphemerals},
		{"grandchild of a new ephemeral container", nil, []Op{container("/x"), ephemeralContainer("/x/y"), create("/x/z", "", 0),
			create("/x/y/w", "", 0)}, 3, proto.ErrNoChildrenForEphemerals},
		{"delete what the multi created", nil, []Op{create("/x", "", 0), del("/x", 0), del("/x", -1)}, 2, proto.ErrNoNode},
		{"bad TTL", nil, []Op{create("/x", "", 0), createTTL("/y", proto.FlagPersistentWithTTL, 0)}, 1, proto.ErrBadArguments},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := opsFixture(t)
			before := h.m.AppendSnapshot(nil)
			r := h.multi(sess1, tc.auth, tc.ops...)
			if r.Err != proto.ErrOK || len(r.Ops) != len(tc.ops) || len(r.Changes) != 0 {
				t.Fatalf("multi: err %v, %d results, changes %v", r.Err, len(r.Ops), r.Changes)
			}
			for i, res := range r.Ops {
				want := proto.ErrOK
				switch {
				case i == tc.fail:
					want = tc.code
				case i > tc.fail:
					want = proto.ErrRuntimeInconsistency
				}
				if res.Op != proto.OpError || res.Err != want || res.Path != "" || res.Stat != (proto.Stat{}) {
					t.Errorf("op %d: %+v, want error %v", i, res, want)
				}
			}
			after := h.m.AppendSnapshot(nil)
			a, b := snapshotDump(t, h.m.opts, before), snapshotDump(t, h.m.opts, after)
			if b.Applied != a.Applied+1 {
				t.Fatalf("applied %d -> %d", a.Applied, b.Applied)
			}
			a.Applied, a.LastZxid = b.Applied, b.LastZxid
			if d := diffState(a, b); d != "" {
				t.Fatalf("failed multi changed the state:\n%s", d)
			}
			// The live machine matches the snapshot, with no leaked ACLs.
			if d := diffState(b, dumpMachine(h.m)); d != "" {
				t.Fatalf("machine differs from its snapshot:\n%s", d)
			}
			if aclTableSize(t, after) != aclTableSize(t, before) {
				t.Fatalf("ACL lists %d -> %d", aclTableSize(t, before), aclTableSize(t, after))
			}
			checkState(t, h.m)
		})
	}
}

// TestMultiRollbackSequence: after a failed multi the sequential counter is
// back where it was, so the next multi hands out the same names.
func TestMultiRollbackSequence(t *testing.T) {
	h := opsFixture(t)
	seq := []Op{create("/p/q-", "", proto.FlagPersistentSequential), create("/p/q-", "", proto.FlagPersistentSequential)}
	failing := append(append([]Op{}, seq...), check("/p", 99))
	if r := h.multi(sess1, nil, failing...); r.Ops[2].Err != proto.ErrBadVersion {
		t.Fatalf("multi did not fail: %+v", r.Ops)
	}
	r := h.multi(sess1, nil, seq...)
	if r.Ops[0].Path != "/p/q-0000000002" || r.Ops[1].Path != "/p/q-0000000003" {
		t.Fatalf("names after rollback: %q %q", r.Ops[0].Path, r.Ops[1].Path)
	}
	// Deleting and re-creating in one failed multi restores the very node.
	n := h.node("/p/q-0000000002")
	snap := h.m.AppendSnapshot(nil)
	h.multi(sess1, nil, del("/p/q-0000000002", -1), create("/p/q-0000000002", "new", 0), check("/none", -1))
	if h.node("/p/q-0000000002") != n {
		t.Fatal("rolled-back delete put back a different node")
	}
	a, b := snapshotDump(t, h.m.opts, snap), dumpMachine(h.m)
	a.Applied, a.LastZxid = b.Applied, b.LastZxid
	if d := diffState(a, b); d != "" {
		t.Fatal(d)
	}
}

// TestMultiSingleDiffer: a failing single op reports its code on the request;
// the same op inside a multi leaves the request OK.
func TestMultiSingleDiffer(t *testing.T) {
	h := opsFixture(t)
	_, r := h.one(sess1, nil, create("/p", "", 0))
	if r.Err != proto.ErrNodeExists {
		t.Fatalf("single: %v", r.Err)
	}
	r = h.multi(sess1, nil, create("/p", "", 0))
	if r.Err != proto.ErrOK || r.Ops[0].Err != proto.ErrNodeExists {
		t.Fatalf("multi: %v %+v", r.Err, r.Ops)
	}
	if !bytes.Equal(h.node("/p").Data, []byte("p")) {
		t.Fatal("state changed")
	}
}

// TestMultiRollsBackQuotaStats: the ops of a failed multi under a path with
// a quota took their changes to the quota's statistics node back with them
// (its data; its version and mzxid never change), and a multi that succeeds
// keeps them.
func TestMultiRollsBackQuotaStats(t *testing.T) {
	h := opsFixture(t)
	for _, p := range []string{"/zookeeper/quota/p", "/zookeeper/quota/p/zookeeper_limits", "/zookeeper/quota/p/zookeeper_stats"} {
		h.must(sess1, nil, create(p, "", 0))
	}
	stats := func() string { return string(h.node("/zookeeper/quota/p/zookeeper_stats").Data) }
	before := stats()
	if before != "count=3,bytes=4" { // /p, /p/c and /p/v holding "p", "c" and "v2"
		t.Fatalf("stats before: %q", before)
	}
	r := h.multi(sess1, nil, create("/p/n", "abc", 0), setData("/p/v", "longer", -1), del("/p/c", -1), check("/p", 99))
	if r.Ops[3].Err != proto.ErrBadVersion {
		t.Fatalf("multi: %+v, want the check to fail", r.Ops)
	}
	if got := stats(); got != before {
		t.Fatalf("stats after a failed multi: %q, want %q", got, before)
	}
	r = h.multi(sess1, nil, create("/p/n", "abc", 0), setData("/p/v", "longer", -1), del("/p/c", -1))
	if r.Err != proto.ErrOK {
		t.Fatalf("multi: %v", r.Err)
	}
	if got := stats(); got != "count=3,bytes=10" { // one node more, one less; +3, +4 and -1 bytes
		t.Fatalf("stats after a multi that succeeded: %q, want count=3,bytes=10", got)
	}
}

// TestMultiUndoRoom: the undo log keeps its room between multis, but not
// the room of a multi larger than maxUndoRoom ops, and never what a step
// pointed to.
func TestMultiUndoRoom(t *testing.T) {
	h := opsFixture(t)
	small := []Op{setData("/p/v", "a", -1), setData("/p/c", "b", -1)}
	if r := h.multi(sess1, nil, small...); r.Err != proto.ErrOK || r.Ops[0].Err != proto.ErrOK {
		t.Fatalf("small multi: %v %+v", r.Err, r.Ops)
	}
	if len(h.m.undo) != 0 || cap(h.m.undo) < len(small) {
		t.Fatalf("after a small multi: undo len %d cap %d, want 0 and room kept", len(h.m.undo), cap(h.m.undo))
	}
	for _, u := range h.m.undo[:cap(h.m.undo)] {
		if u.node != nil || u.data != nil {
			t.Fatalf("undo log keeps a step's node or data after the multi: %+v", u)
		}
	}
	large := make([]Op, maxUndoRoom+1)
	for i := range large {
		large[i] = setData("/p/v", "x", -1)
	}
	if r := h.multi(sess1, nil, large...); r.Err != proto.ErrOK || r.Ops[0].Err != proto.ErrOK {
		t.Fatalf("large multi: %v", r.Err)
	}
	if cap(h.m.undo) != 0 {
		t.Fatalf("after a multi of %d ops the undo log keeps room for %d", len(large), cap(h.m.undo))
	}
}

// ephemeralContainer is a createContainer op with the ephemeral flag.
func ephemeralContainer(path string) Op {
	return Op{Op: proto.OpCreateContainer, Path: path, ACL: openACL, Flags: proto.FlagEphemeral}
}

// TestMultiEphemeralContainer: createContainer with an ephemeral mode makes
// a container, which looks ephemeral only to the later ops of its own multi
// (ZooKeeper's pending record carries the session as owner).
func TestMultiEphemeralContainer(t *testing.T) {
	h := opsFixture(t)
	r := h.multi(sess1, nil, ephemeralContainer("/x"), create("/y", "", 0))
	if r.Ops[0].Err != proto.ErrOK || r.Ops[0].Op != proto.OpCreateContainer {
		t.Fatalf("multi: %+v", r.Ops)
	}
	tr := h.m.Tree()
	if n := h.node("/x"); tr.Kind(n) != tree.Container || slices.Contains(tr.Ephemerals(sess1), "/x") {
		t.Fatalf("/x is %v, session's ephemerals %v", tr.Kind(n), tr.Ephemerals(sess1))
	}
	// Later entries see the committed container.
	h.must(sess1, nil, create("/x/a", "", 0))
	if r := h.multi(sess1, nil, create("/x/b", "", 0)); r.Ops[0].Err != proto.ErrOK {
		t.Fatalf("child in a later multi: %v", r.Ops[0].Err)
	}
	// So does a single createContainer's own next entry.
	h.must(sess1, nil, ephemeralContainer("/z"))
	h.must(sess1, nil, create("/z/a", "", 0))
	// Deleted and created again as a plain node in the same multi, the
	// path takes children again.
	r = h.multi(sess1, nil, ephemeralContainer("/w"), del("/w", -1), create("/w", "", 0), create("/w/a", "", 0))
	for i, res := range r.Ops {
		if res.Err != proto.ErrOK {
			t.Fatalf("op %d: %v", i, res.Err)
		}
	}
	checkState(t, h.m)
}
