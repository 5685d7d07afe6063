package tree

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/paddockhq/paddock/internal/zpath"
)

// placeOf returns the place of the node at path in its parent's order.
func placeOf(tr *Tree, path string) int {
	parent, name := zpath.Parent(path)
	return tr.Get(parent).ChildIndex(name)
}

// checkChildList checks n's children list: names unique, an index only for
// more than linearMax/2 children, with exactly one slot per child, each
// found from its home without crossing a free slot, and every name found
// at its place.
func checkChildList(t *testing.T, path string, n *Node) {
	t.Helper()
	l := n.kids
	if l == nil {
		return
	}
	if len(l.kids) == 0 {
		t.Errorf("%s: an empty children list is kept", path)
	}
	seen := make(map[string]bool, len(l.kids))
	for i, c := range l.kids {
		if seen[c.name] || c.n == nil {
			t.Errorf("%s: child %d %q is a repeat or has no node", path, i, c.name)
		}
		seen[c.name] = true
		if got := l.find(c.name); got != i {
			t.Errorf("%s: child %q at place %d is found at %d", path, c.name, i, got)
		}
	}
	x := l.index
	if x == nil {
		if len(l.kids) > linearMax {
			t.Errorf("%s: %d children without an index", path, len(l.kids))
		}
		return
	}
	if len(l.kids) <= linearMax/2 || len(l.kids)*4 > len(x.slots)*3 {
		t.Errorf("%s: index of %d slots for %d children", path, len(x.slots), len(l.kids))
	}
	used := 0
	mask := uint32(len(x.slots) - 1)
	for j, s := range x.slots {
		if s == 0 {
			continue
		}
		used++
		p := int(uint32(s)) - 1
		if p < 0 || p >= len(l.kids) || x.hash(l.kids[p].name) != uint32(s>>32) {
			t.Errorf("%s: slot %d holds %#x, not a child's place and hash", path, j, s)
			continue
		}
		for k := uint32(s>>32) & mask; k != uint32(j); k = (k + 1) & mask {
			if x.slots[k] == 0 {
				t.Errorf("%s: slot %d unreachable from its home %d", path, j, uint32(s>>32)&mask)
				break
			}
		}
	}
	if used != len(l.kids) {
		t.Errorf("%s: %d slots used for %d children", path, used, len(l.kids))
	}
}

// TestChildrenOrderStable lists an unchanged parent's children again and
// again and checks that the order is the same every time, by Children and
// by EachChild.
func TestChildrenOrderStable(t *testing.T) {
	tr := New(Options{})
	tr.Create("/p", nil, OpenACL, 0, 1, 1)
	for i := range 50 {
		tr.Create(fmt.Sprintf("/p/c%02d", (i*37)%50), nil, OpenACL, 0, int64(2+i), 1)
	}
	p := tr.Get("/p")
	first := p.Children()
	for range 20 {
		if got := p.Children(); !slices.Equal(got, first) {
			t.Fatalf("Children changed order on an unchanged parent:\n%v\n%v", first, got)
		}
		var each []string
		p.EachChild(func(name string, _ *Node) { each = append(each, name) })
		if !slices.Equal(each, first) {
			t.Fatalf("EachChild lists another order than Children:\n%v\n%v", first, each)
		}
	}
	for range 20 {
		if got := tr.Get("/").Children(); !slices.Equal(got, []string{"zookeeper", "p"}) {
			t.Fatalf("ls / = %v, want the creation order", got)
		}
	}
}

// orderModel is the order the tree promises: a child added goes last, a
// child deleted has its place taken by the last one, and Reinsert puts a
// child back at its place, the one there going last.
type orderModel map[string][]string

func (m orderModel) add(parent, name string) { m[parent] = append(m[parent], name) }

func (m orderModel) remove(parent, name string) int {
	kids := m[parent]
	i := slices.Index(kids, name)
	kids[i] = kids[len(kids)-1]
	m[parent] = kids[:len(kids)-1]
	return i
}

func (m orderModel) reinsert(parent, name string, at int) {
	kids := append(m[parent], name)
	last := len(kids) - 1
	kids[at], kids[last] = kids[last], kids[at]
	m[parent] = kids
}

// randomHistory applies n seeded random creates, deletes and deletes
// undone (Reinsert) to tr, under a few parents that cross linearMax and
// the index's sizes both ways, and keeps model in step.
func randomHistory(t *testing.T, tr *Tree, seed uint64, n int, model orderModel) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	parents := []string{"/a", "/b", "/c"}
	zxid := tr.Get("/").Pzxid
	for _, p := range parents {
		if tr.Get(p) == nil {
			zxid++
			tr.Create(p, nil, OpenACL, 0, zxid, zxid)
			model.add("/", p[1:])
		}
	}
	for i := range n {
		zxid++
		parent := parents[r.IntN(len(parents))]
		// Phases of growth and shrinking, so that parents go from a
		// few children to hundreds and back.
		size := []int{6, 12, 300, 40}[(i/400)%4]
		name := fmt.Sprintf("n%d", r.IntN(size))
		path := parent + "/" + name
		switch c := tr.Get(path); {
		case c == nil:
			tr.Create(path, []byte("x"), OpenACL, 0, zxid, zxid)
			model.add(parent, name)
		case r.IntN(4) == 0: // deleted and undone, as in a failed multi
			at := placeOf(tr, path)
			acl := tr.ACL(c)
			tr.Delete(path, zxid)
			if got := model.remove(parent, name); got != at {
				t.Fatalf("step %d: %s was at place %d, the model says %d", i, path, at, got)
			}
			tr.Reinsert(path, c, acl, at)
			model.reinsert(parent, name, at)
		default:
			tr.Delete(path, zxid)
			model.remove(parent, name)
		}
	}
}

// TestChildrenOrderModel checks, after every step of seeded random
// creates, deletes and undone deletes, that each parent's children are
// those of a model, in the model's order, and that the list and its index
// are consistent.
func TestChildrenOrderModel(t *testing.T) {
	for seed := range uint64(4) {
		tr := New(Options{})
		model := orderModel{"/": {"zookeeper"}}
		for step := range 40 {
			randomHistory(t, tr, seed*100+uint64(step), 50, model)
			for parent, want := range model {
				n := tr.Get(parent)
				if got := n.Children(); !slices.Equal(got, want) {
					t.Fatalf("seed %d step %d: %s lists %v, want %v", seed, step, parent, got, want)
				}
				if n.NumChildren() != len(want) {
					t.Fatalf("seed %d step %d: %s has %d children, want %d", seed, step, parent, n.NumChildren(), len(want))
				}
				checkChildList(t, parent, n)
			}
			checkInvariants(t, tr)
		}
	}
}

// TestChildrenOrderSameHistory gives two trees the same changes and checks
// that every node lists its children in the same order in both, as
// replicas applying the same entries must.
func TestChildrenOrderSameHistory(t *testing.T) {
	a, b := New(Options{}), New(Options{})
	randomHistory(t, a, 7, 2000, orderModel{})
	randomHistory(t, b, 7, 2000, orderModel{})
	a.Walk(func(path string, n *Node) {
		if got, want := b.Get(path).Children(), n.Children(); !slices.Equal(got, want) {
			t.Fatalf("%s: one tree lists %v, the other %v", path, want, got)
		}
	})
}

// TestReinsertRestoresOrder deletes children and puts them back in reverse
// order, as a failed multi does, and checks that the parent's order is as
// before.
func TestReinsertRestoresOrder(t *testing.T) {
	for _, children := range []int{3, 20} { // without and with an index
		tr := New(Options{})
		tr.Create("/p", nil, OpenACL, 0, 1, 1)
		for i := range children {
			tr.Create(fmt.Sprintf("/p/c%02d", i), nil, OpenACL, 0, int64(2+i), 1)
		}
		before := tr.Get("/p").Children()
		type undo struct {
			path string
			n    *Node
			at   int
		}
		var log []undo
		for _, name := range []string{"c01", "c00", fmt.Sprintf("c%02d", children-1)} {
			path := "/p/" + name
			at := placeOf(tr, path)
			log = append(log, undo{path, tr.Delete(path, 100), at})
		}
		for i := len(log) - 1; i >= 0; i-- {
			tr.Reinsert(log[i].path, log[i].n, OpenACL, log[i].at)
		}
		if got := tr.Get("/p").Children(); !slices.Equal(got, before) {
			t.Fatalf("%d children: after the undo %v, before %v", children, got, before)
		}
		checkChildList(t, "/p", tr.Get("/p"))
	}
}

// TestStreamGatherWhileChildrenMove pauses a stream while it gathers a
// large parent's children, moves children between the places gathered and
// those not (Delete moves the last child into the deleted one's place,
// Reinsert moves the child at a place last), and checks that the stream is
// the state it began with.
func TestStreamGatherWhileChildrenMove(t *testing.T) {
	const children = 300
	for seed := range uint64(10) {
		r := rand.New(rand.NewPCG(seed, 2))
		tr := New(Options{})
		tr.Create("/p", nil, OpenACL, 0, 1, 1)
		zxid := int64(1)
		for i := range children {
			zxid++
			tr.Create(fmt.Sprintf("/p/c%03d", i), []byte("v"), OpenACL, 0, zxid, zxid)
		}
		want := tr.AppendSnapshot(nil)
		s := tr.BeginStream()
		s.deferMin = 16
		var b []byte
		for done := false; !done; {
			b, done = s.Next(b, 1+r.IntN(40))
			for range r.IntN(6) {
				zxid++
				kids := tr.Get("/p").Children()
				path := "/p/" + kids[r.IntN(len(kids))]
				switch r.IntN(3) {
				case 0:
					tr.Create(fmt.Sprintf("/p/new%d", zxid), nil, OpenACL, 0, zxid, zxid)
				case 1:
					tr.Delete(path, zxid)
				default:
					n, at := tr.Get(path), placeOf(tr, path)
					tr.Delete(path, zxid)
					tr.Reinsert(path, n, OpenACL, at)
				}
			}
			s.Prepare()
		}
		s.End()
		if !bytes.Equal(b, want) {
			t.Fatalf("seed %d: the stream differs from the state it began with", seed)
		}
		checkChildList(t, "/p", tr.Get("/p"))
		checkInvariants(t, tr)
	}
}
