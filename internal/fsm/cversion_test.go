package fsm

import (
	"math"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// TestSequentialCounterStopsAtMaxInt32 pins what Apache ZooKeeper 3.8.0
// does once a parent's child-creation counter reaches MaxInt32
// (DataTree.createNode takes the txn's counter only when it is above the
// parent's, and MaxInt32+1 wraps below it), as observed on the real
// server with the counter set to MaxInt32-1:
//
//	create seq -> /p/w2147483646   cversion -3, pzxid 0x3
//	create seq -> /p/w2147483647   cversion -4, pzxid 0x3
//	create seq -> NODEEXISTS       (every time after)
//	create /p/plain                cversion -5, pzxid still 0x3
//
// The counter stays at MaxInt32 and pzxid is no longer set by creates.
func TestSequentialCounterStopsAtMaxInt32(t *testing.T) {
	h := newHarness(t, Options{})
	h.openSession(sess1)
	h.must(sess1, nil, create("/p", "", 0))
	h.node("/p").Cversion = math.MaxInt32 - 1
	if res := h.must(sess1, nil, create("/p/w", "", proto.FlagPersistentSequential)); res.Path != "/p/w2147483646" {
		t.Fatalf("first name %q", res.Path)
	}
	pzxid := int64(h.index) // the last create that moved the counter
	if res := h.must(sess1, nil, create("/p/w", "", proto.FlagPersistentSequential)); res.Path != "/p/w2147483647" {
		t.Fatalf("second name %q", res.Path)
	}
	for i := 0; i < 2; i++ {
		if res, _ := h.one(sess1, nil, create("/p/w", "", proto.FlagPersistentSequential)); res.Err != proto.ErrNodeExists {
			t.Fatalf("sequential create past MaxInt32: %+v, want NodeExists", res)
		}
	}
	h.must(sess1, nil, create("/p/plain", "", 0))
	n := h.node("/p")
	if n.Cversion != math.MaxInt32 {
		t.Fatalf("counter %d, want MaxInt32", n.Cversion)
	}
	if s := h.m.Tree().Stat(n); s.Cversion != -5 || s.Pzxid != pzxid || s.NumChildren != 3 {
		t.Fatalf("/p stat %+v, want cversion -5, pzxid %d, 3 children", s, pzxid)
	}
	// A delete still sets pzxid.
	h.must(sess1, nil, del("/p/plain", -1))
	if s := h.m.Tree().Stat(n); s.Pzxid != int64(h.index) || s.Cversion != -4 {
		t.Fatalf("/p stat after delete %+v", s)
	}
	checkState(t, h.m)
}

// TestSequentialCounterWrapsInMulti: inside a multi ZooKeeper names
// sequential nodes from its pending change records, whose counter wraps,
// while the tree's stops at MaxInt32. Observed on ZooKeeper 3.8.0 under a
// parent at MaxInt32-1: multi [create /q/m seq] [create /q/m seq]
// [create /q/x] [create /q/m seq] makes m2147483646, m2147483647, x and
// m-2147483647, and leaves the parent's cversion at -6 with 4 children
// and pzxid the multi's.
func TestSequentialCounterWrapsInMulti(t *testing.T) {
	h := newHarness(t, Options{})
	h.openSession(sess1)
	h.must(sess1, nil, create("/q", "", 0))
	h.node("/q").Cversion = math.MaxInt32 - 1
	seq := create("/q/m", "", proto.FlagPersistentSequential)
	r := h.multi(sess1, nil, seq, seq, create("/q/x", "", 0), seq)
	want := []string{"/q/m2147483646", "/q/m2147483647", "/q/x", "/q/m-2147483647"}
	for i, res := range r.Ops {
		if res.Err != proto.ErrOK || res.Path != want[i] {
			t.Fatalf("op %d: %+v, want %s", i, res, want[i])
		}
	}
	n := h.node("/q")
	if s := h.m.Tree().Stat(n); n.Cversion != math.MaxInt32 || s.Cversion != -6 || s.NumChildren != 4 || s.Pzxid != int64(h.index) {
		t.Fatalf("/q counter %d stat %+v", n.Cversion, s)
	}
	// The next request counts from the tree's counter again.
	if res, _ := h.one(sess1, nil, seq); res.Err != proto.ErrNodeExists {
		t.Fatalf("sequential create after the multi: %+v, want NodeExists", res)
	}
	// A failed multi leaves nothing of its counting behind.
	r = h.multi(sess1, nil, create("/q/y", "", 0), seq, check("/nope", -1))
	if r.Ops[0].Err != proto.ErrOK || r.Ops[1].Err != proto.ErrOK || r.Ops[2].Err != proto.ErrNoNode {
		t.Fatalf("failed multi: %+v", r.Ops)
	}
	r = h.multi(sess1, nil, del("/q/m2147483647", -1), seq, seq)
	want = []string{"", "/q/m2147483647", "/q/m-2147483648"}
	for i, res := range r.Ops {
		if res.Err != proto.ErrOK || res.Path != want[i] {
			t.Fatalf("op %d of the last multi: %+v, want %q", i, res, want[i])
		}
	}
	checkState(t, h.m)
}
