package tree

import (
	"bytes"
	"fmt"
	"math/rand"
	"runtime"
	"sort"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/zpath"
)

// TestStreamIsTheStartState interleaves random changes with snapshot
// streams and checks that each stream's bytes are exactly AppendSnapshot at
// the moment the stream began, and that the tree afterwards is unaffected.
// Several streams run one after another on the same tree, and a few
// parents get well over sortCacheMin children, so the sorted orders cached
// by one stream are reused, or found stale, by the next.
func TestStreamIsTheStartState(t *testing.T) {
	acls := [][]proto.ACL{
		OpenACL,
		ReadACL,
		{{Perms: proto.PermAll, ID: proto.ID{Scheme: "digest", ID: "u:h"}}},
		{{Perms: proto.PermRead, ID: proto.ID{Scheme: "ip", ID: "10.0.0.0/8"}}},
	}
	for seed := int64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			tr := New()
			var paths []string
			zxid := int64(1)
			structural := true // creates and deletes too, not only data and ACLs
			mutate := func() {
				zxid++
				op := r.Intn(6)
				if !structural {
					op = 3 + r.Intn(3)
				}
				switch {
				case op <= 1 || len(paths) == 0: // create under root or a random node
					parent := "/"
					switch k := r.Intn(6); {
					case len(paths) == 0:
					case k < 3: // a few parents get many children
						parent = paths[r.Intn(min(3, len(paths)))]
					case k < 5:
						parent = paths[r.Intn(len(paths))]
					}
					p := zpath.Join(parent, fmt.Sprintf("n%d", r.Intn(1000)))
					if tr.Get(p) == nil && tr.Get(parent) != nil && tr.Get(parent).Kind() != Ephemeral {
						czxid := zxid
						if r.Intn(8) == 0 {
							// Not above every czxid so far: a stream
							// open now must record the name.
							czxid = 1 + r.Int63n(zxid)
						}
						tr.Create(p, []byte(fmt.Sprint(zxid)), acls[r.Intn(len(acls))], 0, czxid, zxid)
						paths = append(paths, p)
					}
				case op == 2: // delete a leaf, sometimes put it back
					i := r.Intn(len(paths))
					p := paths[i]
					n := tr.Get(p)
					if n != nil && n.NumChildren() == 0 {
						acl := tr.ACL(n)
						tr.Delete(p, zxid)
						if r.Intn(4) == 0 {
							tr.Reinsert(p, n, acl)
						} else {
							paths = append(paths[:i], paths[i+1:]...)
						}
					}
				case op == 3:
					if n := tr.Get(paths[r.Intn(len(paths))]); n != nil {
						tr.SetData(n, []byte(fmt.Sprint("d", zxid)), n.Version+1, zxid, zxid)
					}
				default:
					if n := tr.Get(paths[r.Intn(len(paths))]); n != nil {
						tr.SetACL(n, acls[r.Intn(len(acls))], n.Aversion+1)
					}
				}
			}
			hits := 0
			for round := 0; round < 7; round++ {
				// Rounds 3, 4 and 6 change data and ACLs only: round 4
				// finds the orders round 3 cached still good, round 5
				// changes them again.
				structural = round < 3 || round == 5
				for i := 0; i < 500; i++ {
					mutate()
				}
				want := tr.AppendSnapshot(nil)
				s := tr.BeginStream()
				var got []byte
				for done := false; !done; {
					got, done = s.Next(got, 1+r.Intn(7))
					for j := r.Intn(20); j > 0; j-- {
						mutate()
					}
				}
				s.End()
				hits += s.cacheHits
				if !bytes.Equal(got, want) {
					t.Fatalf("round %d: stream differs from the state it began with (%d vs %d bytes)", round, len(got), len(want))
				}
				// The stream decodes, and the live tree is the one the
				// changes made: compare it with a fresh copy through the
				// snapshot format.
				if _, err := DecodeSnapshot(proto.NewDecoder(got)); err != nil {
					t.Fatal(err)
				}
				after := tr.AppendSnapshot(nil)
				back, err := DecodeSnapshot(proto.NewDecoder(after))
				if err != nil {
					t.Fatal(err)
				}
				if !equalTrees(tr, back) {
					t.Fatalf("round %d: tree changed by the stream", round)
				}
			}
			if hits == 0 {
				t.Fatal("no stream used a cached order: the test misses the cache")
			}
			if tr.stream != nil {
				t.Fatal("stream still attached after End")
			}
		})
	}
}

// equalTrees compares paths, data and Stat of two trees.
func equalTrees(a, b *Tree) bool {
	dump := func(t *Tree) []string {
		var out []string
		t.Walk(func(p string, n *Node) {
			out = append(out, fmt.Sprintf("%s %q %+v %v", p, n.Data, n.Stat(), t.ACL(n)))
		})
		sort.Strings(out)
		return out
	}
	da, db := dump(a), dump(b)
	if len(da) != len(db) {
		return false
	}
	for i := range da {
		if da[i] != db[i] {
			return false
		}
	}
	return true
}

// TestStreamCachedOrder walks a parent with many children through the
// cases of the kept order: a change during a stream (the stream uses the
// old children; the next one merges the change in), a stream with no change
// since (the order as kept), deletes and creates between streams (merged),
// and so many changes that the order is dropped and sorted anew.
func TestStreamCachedOrder(t *testing.T) {
	tr := New()
	tr.Create("/p", nil, OpenACL, 0, 1, 1)
	for i := range 2 * sortCacheMin {
		tr.Create(fmt.Sprintf("/p/c%03d", i), []byte{byte(i)}, OpenACL, 0, int64(2+i), 1)
	}
	zxid := int64(500)
	check := func(step string, change func(), wantHits, wantMerged int) {
		t.Helper()
		want := tr.AppendSnapshot(nil)
		s := tr.BeginStream()
		if change != nil {
			change() // after the stream began: it must not show
		}
		if got := drainStream(s, 5); !bytes.Equal(got, want) {
			t.Fatalf("%s: stream differs from the state it began with", step)
		}
		if s.cacheHits != wantHits || s.merged != wantMerged {
			t.Fatalf("%s: %d frames from the kept order, %d merged; want %d and %d",
				step, s.cacheHits, s.merged, wantHits, wantMerged)
		}
		// A kept order knows the node of every name that did not change
		// (those of changed names are looked up and kept for the next
		// stream), so a stream right after another looks nothing up.
		if wantHits == 1 && wantMerged == 0 && s.lookups != 0 {
			t.Fatalf("%s: %d children looked up by name, want 0", step, s.lookups)
		}
		if wantHits == 0 && s.lookups != 0 {
			t.Fatalf("%s: %d children looked up by name in a stream that sorted them, want 0", step, s.lookups)
		}
	}
	create := func(name string) { zxid++; tr.Create("/p/"+name, nil, OpenACL, 0, zxid, 1) }
	del := func(name string) { zxid++; tr.Delete("/p/"+name, zxid) }
	check("first stream", func() { create("late") }, 0, 0)
	check("after a create during the last stream", nil, 1, 1)
	check("unchanged since", nil, 1, 0)
	del("c007")
	create("a-new")
	check("after a delete and a create", func() { del("c008") }, 1, 1)
	check("after a delete during the last stream", nil, 1, 1)
	check("unchanged again", nil, 1, 0)
	del("c010") // a kept name whose node is replaced: the kept node is stale
	create("c010")
	check("a kept name deleted and created again", nil, 1, 1)
	check("unchanged after the replacement", nil, 1, 0)
	create("c007") // back under a name it had
	del("a-new")
	check("a name back, a new one gone", nil, 1, 1)
	for range 10 { // one name, many changes: merged once
		create("again")
		del("again")
	}
	create("again")
	check("a name changed over and over", nil, 1, 1)
	del("again")
	many := (maxChangedPerKid + 1) * 2 * sortCacheMin
	for i := range many {
		create(fmt.Sprintf("d%03d", i))
	}
	check("more changes than names allow", nil, 0, 0)
	check("kept again", nil, 1, 0)
	for i := range many {
		del(fmt.Sprintf("d%03d", i))
	}
	for i := range 2 * sortCacheMin {
		if i != 7 && i != 8 {
			del(fmt.Sprintf("c%03d", i))
		}
	}
	del("c007")
	del("late")
	if _, kept := tr.order[tr.Get("/p")]; kept {
		t.Fatal("an emptied parent still has a kept order")
	}
	check("emptied", nil, 0, 0)
}

// TestStreamSavesOnlyChangedChildren checks that a write under a parent
// with many children, made while a stream is open, saves what changed and
// not a copy of the parent's whole children map (which held up the apply
// of that write for milliseconds), and that the stream is still the state
// it began with.
func TestStreamSavesOnlyChangedChildren(t *testing.T) {
	const children = 20000
	tr := New()
	tr.Create("/p", nil, OpenACL, 0, 1, 1)
	for i := range children {
		tr.Create(fmt.Sprintf("/p/c%05d", i), []byte("v"), OpenACL, 0, int64(2+i), 1)
	}
	want := tr.AppendSnapshot(nil)
	s := tr.BeginStream()
	zxid := int64(children + 10)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	tr.Create("/p/new", []byte("x"), OpenACL, 0, zxid, 1)
	tr.Delete("/p/c00007", zxid+1)
	n8 := tr.Delete("/p/c00008", zxid+2)
	tr.Reinsert("/p/c00008", n8, OpenACL) // as a failed multi undoes a delete
	runtime.ReadMemStats(&after)
	// A copy of the map alone is at least 24 bytes per child.
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
		t.Fatalf("four changes under a parent of %d children allocated %d bytes with a stream open; want only the changed names saved", children, got)
	}
	if !bytes.Equal(drainStream(s, 1000), want) {
		t.Fatal("stream differs from the state it began with")
	}
}

// drainStream reads s to its end, max nodes at a time, and closes it.
func drainStream(s *Stream, max int) []byte {
	var b []byte
	for done := false; !done; {
		b, done = s.Next(b, max)
	}
	s.End()
	return b
}

// TestStreamAddsRecordNothing checks that a child added while a stream is
// open, with a czxid above every czxid in the tree (as every create the
// state machine applies has), is not recorded in the stream's deltas, nor
// when it is deleted again, that a child added with an older czxid is, and
// that the stream is the state it began with in every case.
func TestStreamAddsRecordNothing(t *testing.T) {
	tr := New()
	tr.Create("/p", nil, OpenACL, 0, 1, 1)
	for i := range 100 {
		tr.Create(fmt.Sprintf("/p/c%03d", i), []byte{byte(i)}, OpenACL, 0, int64(2+i), 1)
	}
	want := tr.AppendSnapshot(nil)
	s := tr.BeginStream()
	p := tr.Get("/p")
	for i := range 50 {
		tr.Create(fmt.Sprintf("/p/new%03d", i), nil, OpenACL, 0, int64(1000+i), 1)
	}
	tr.Create("/p/new000/grandchild", nil, OpenACL, 0, 2000, 1)
	tr.Delete("/p/new001", 2001)
	if d := s.savedKids[p]; len(d) != 0 {
		t.Fatalf("children added with new czxids recorded %d names, want none", len(d))
	}
	tr.Create("/p/old", nil, OpenACL, 0, 50, 1) // a czxid the tree had already
	tr.Delete("/p/c005", 2002)
	if d := s.savedKids[p]; len(d) != 2 || d["old"] != nil || d["c005"] == nil {
		t.Fatalf("deltas %v, want old as free and c005 as it was", d)
	}
	if !bytes.Equal(drainStream(s, 7), want) {
		t.Fatal("stream differs from the state it began with")
	}
	// The next stream sees every child, the new ones too.
	want = tr.AppendSnapshot(nil)
	if !bytes.Equal(drainStream(tr.BeginStream(), 7), want) {
		t.Fatal("the next stream differs from the tree")
	}
}
