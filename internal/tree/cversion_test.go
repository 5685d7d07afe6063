package tree

import (
	"math"
	"testing"
)

// TestCreateCounterStopsAtMaxInt32: ZooKeeper's DataTree.createNode sets
// the parent's cversion and pzxid only when the txn's counter (the
// parent's plus one) is above the parent's, which MaxInt32+1 is not: once
// at MaxInt32 the counter and pzxid stay as they are (ZooKeeper 3.8.0
// answers NodeExists to every sequential create under such a parent).
func TestCreateCounterStopsAtMaxInt32(t *testing.T) {
	tr := New(Options{})
	p := tr.Create("/p", nil, OpenACL, 0, 1, 1)
	p.Cversion = math.MaxInt32 - 1
	tr.Create("/p/a", nil, OpenACL, 0, 2, 2)
	if p.Cversion != math.MaxInt32 || p.Pzxid != 2 {
		t.Fatalf("after a create below MaxInt32: cversion %d pzxid %d", p.Cversion, p.Pzxid)
	}
	tr.Create("/p/b", nil, OpenACL, 0, 3, 3)
	if p.Cversion != math.MaxInt32 || p.Pzxid != 2 {
		t.Fatalf("after a create at MaxInt32: cversion %d pzxid %d, want MaxInt32 and 2", p.Cversion, p.Pzxid)
	}
	if s := tr.Stat(p); s.Cversion != -4 || s.NumChildren != 2 {
		t.Fatalf("stat %+v", s)
	}
	tr.Delete("/p/b", 4)
	if p.Cversion != math.MaxInt32 || p.Pzxid != 4 {
		t.Fatalf("after a delete: cversion %d pzxid %d", p.Cversion, p.Pzxid)
	}
}
