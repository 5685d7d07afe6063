package tree

import (
	"bytes"
	"fmt"
	"math/rand"
	"runtime"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/zpath"
)

// TestStreamIsTheStartState interleaves random changes with snapshot
// streams and checks that each stream's bytes are exactly AppendSnapshot at
// the moment the stream began, and that the tree afterwards is unaffected.
// Several streams run one after another on the same tree, and a few
// parents get well over sortCacheMin children, so the sorted orders cached
// by one stream are reused, or found stale, by the next. Most streams leave
// the sorting and merging of most parents' children to Prepare, with
// changes before and after it, and one stream is ended halfway.
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
			tr := New(Options{ExtendedTypes: true})
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
						acl, at := tr.ACL(n), placeOf(tr, p)
						tr.Delete(p, zxid)
						if r.Intn(4) == 0 {
							tr.Reinsert(p, n, acl, at)
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
			hits, deferred := 0, 0
			for round := 0; round < 7; round++ {
				// Rounds 3, 4 and 6 change data and ACLs only: round 4
				// finds the orders round 3 cached still good, round 5
				// changes them again.
				structural = round < 3 || round == 5
				for i := 0; i < 500; i++ {
					mutate()
				}
				if round == 2 {
					// A stream ended halfway, as a snapshot that
					// fails: what it left kept must not mislead the
					// next one.
					s := tr.BeginStream()
					s.deferMin = 1
					for range 5 + r.Intn(20) {
						s.Next(nil, 1+r.Intn(7))
						if r.Intn(2) == 0 {
							s.Prepare()
						}
						mutate()
					}
					s.End()
				}
				want := tr.AppendSnapshot(nil)
				s := tr.BeginStream()
				// Most rounds leave the sorting of every parent with
				// more than a few children (a number drawn for the
				// stream) to Prepare, called at random (or not) with
				// changes made between it and Next.
				if round%3 != 0 {
					s.deferMin = 1 + r.Intn(4*sortCacheMin)
				}
				var got []byte
				for done := false; !done; {
					got, done = s.Next(got, 1+r.Intn(7))
					if s.work != nil {
						deferred++
					}
					for j := r.Intn(20); j > 0; j-- {
						mutate()
					}
					if r.Intn(3) != 0 {
						s.Prepare()
						for j := r.Intn(10); j > 0; j-- {
							mutate()
						}
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
				if _, err := DecodeSnapshot(proto.NewDecoder(got), Options{ExtendedTypes: true}); err != nil {
					t.Fatal(err)
				}
				after := tr.AppendSnapshot(nil)
				back, err := DecodeSnapshot(proto.NewDecoder(after), Options{ExtendedTypes: true})
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
			if deferred == 0 {
				t.Fatal("no stream left sorting to Prepare: the test misses it")
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
	tr := New(Options{ExtendedTypes: true})
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
	tr := New(Options{ExtendedTypes: true})
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
	at := placeOf(tr, "/p/c00008")
	n8 := tr.Delete("/p/c00008", zxid+2)
	tr.Reinsert("/p/c00008", n8, OpenACL, at) // as a failed multi undoes a delete
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
	tr := New(Options{ExtendedTypes: true})
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

// TestStreamSortsWithoutTheLock checks that Next leaves the sorting of a
// large parent's children to Prepare, and the merging of its kept order's
// changes too, and looks no more changed names up per call than it was
// given: the work that held a server's lock for 25 to 85 ms with 100,000
// children. The stream is still the state it began with.
func TestStreamSortsWithoutTheLock(t *testing.T) {
	const children = 3 * deferMin
	tr := New(Options{ExtendedTypes: true})
	tr.Create("/p", nil, OpenACL, 0, 1, 1)
	zxid := int64(1)
	create := func(name string) { zxid++; tr.Create("/p/"+name, nil, OpenACL, 0, zxid, zxid) }
	for i := range children {
		create(fmt.Sprintf("c%05d", i))
	}
	p := tr.Get("/p")
	// toParent reads s until Next has appended /p and stopped.
	toParent := func(s *Stream) []byte {
		var b []byte
		for range 10 {
			var done bool
			if b, done = s.Next(b, 2); done || s.work != nil {
				break
			}
		}
		if s.work == nil || s.work.parent != p {
			t.Fatal("Next did not stop at the large parent")
		}
		return b
	}
	for si, step := range []string{"sort", "merge"} {
		want := tr.AppendSnapshot(nil)
		s := tr.BeginStream()
		b := toParent(s)
		w := s.work
		const max = 100
		if step == "sort" {
			// Gathering the children takes a piece of Next calls,
			// with changes in between.
			if w.stage != stageGather || len(w.kids) != 0 {
				t.Fatalf("sort: Next went on to stage %d (%d children gathered) at the parent", w.stage, len(w.kids))
			}
			b, _ = s.Next(b, max)
			if len(w.kids) != max {
				t.Fatalf("sort: one Next with %d to do gathered %d children", max, len(w.kids))
			}
			zxid++
			tr.Delete(fmt.Sprintf("/p/c%05d", children-1), zxid) // there at the start: it must show
			for w.stage == stageGather {
				create(fmt.Sprintf("during-gather-%d", zxid))
				b, _ = s.Next(b, 2048)
			}
		}
		if w.stage != stageSort {
			t.Fatalf("%s: Next went on to stage %d under the lock", step, w.stage)
		}
		create("during-" + step) // after the stream began: it must not show
		var listed []string
		if step == "merge" {
			listed = slices.Clone(w.kept.changed)
		}
		s.Prepare()
		if step == "merge" {
			// The kept order's list of changed names, which apply
			// appends to meanwhile, is only read.
			if !slices.Equal(w.kept.changed[:len(listed)], listed) {
				t.Fatal("merge: Prepare changed the kept order's list of changed names")
			}
			if w.stage != stageClassify {
				t.Fatalf("merge: Prepare left stage %d, want the lookups", w.stage)
			}
			b, _ = s.Next(b, max)
			if w.next != max {
				t.Fatalf("merge: one Next with %d to do looked %d changed names up", max, w.next)
			}
			for w.stage == stageClassify {
				b, _ = s.Next(b, 2048)
			}
			if w.stage != stageMerge {
				t.Fatalf("merge: Next went on to stage %d under the lock", w.stage)
			}
			s.Prepare()
		}
		if w.stage != stageReady {
			t.Fatalf("%s: Prepare left stage %d", step, w.stage)
		}
		for done := false; !done; {
			b, done = s.Next(b, 2048)
			s.Prepare()
		}
		s.End()
		if !bytes.Equal(b, want) {
			t.Fatalf("%s: stream differs from the state it began with", step)
		}
		// Churn for the next stream to merge: a third of the names
		// replaced.
		for i := range children / 3 {
			zxid++
			tr.Delete(fmt.Sprintf("/p/c%05d", si*children/3+i), zxid)
			create(fmt.Sprintf("n%d-%05d", si, i))
		}
	}
}

// TestStreamPrepareConcurrently runs a stream as the server does, Next
// under a read lock and Prepare with no lock, while another goroutine
// changes the tree under the write lock, and checks that the stream is the
// state it began with. make test runs it under the race detector, which
// would report Prepare touching anything the changes do.
func TestStreamPrepareConcurrently(t *testing.T) {
	tr := New(Options{ExtendedTypes: true})
	tr.Create("/p", nil, OpenACL, 0, 1, 1)
	zxid := int64(1)
	for i := range 2 * deferMin {
		zxid++
		tr.Create(fmt.Sprintf("/p/c%05d", i), []byte("v"), OpenACL, 0, zxid, zxid)
	}
	var mu sync.RWMutex
	for round := range 3 { // sorted, then merged twice
		mu.Lock()
		want := tr.AppendSnapshot(nil)
		s := tr.BeginStream()
		s.deferMin = 64
		mu.Unlock()
		stop, changed := make(chan struct{}), make(chan int)
		go func() {
			n := 0
			for i := 0; ; i++ {
				select {
				case <-stop:
					changed <- n
					return
				default:
				}
				mu.Lock()
				zxid++
				name := fmt.Sprintf("/p/r%d-%05d", round, i)
				tr.Create(name, nil, OpenACL, 0, zxid, zxid)
				if old := tr.Get(fmt.Sprintf("/p/c%05d", (round*deferMin+i)%(2*deferMin))); old != nil && i%2 == 0 {
					zxid++
					tr.Delete(fmt.Sprintf("/p/c%05d", (round*deferMin+i)%(2*deferMin)), zxid)
				}
				mu.Unlock()
				n++
			}
		}()
		var got []byte
		for done := false; !done; {
			mu.RLock()
			got, done = s.Next(got, 512)
			mu.RUnlock()
			s.Prepare()
			runtime.Gosched()
		}
		close(stop)
		n := <-changed
		mu.Lock()
		s.End()
		mu.Unlock()
		if !bytes.Equal(got, want) {
			t.Fatalf("round %d: stream differs from the state it began with (%d changes meanwhile)", round, n)
		}
	}
}

// TestStreamEndedAtALargeParent ends a stream (as a snapshot that fails)
// where it was gathering a large parent's children, had gathered them, or
// had sorted them but not yet pushed the frame, and checks that the next
// stream is still the tree: the order kept for it must not be the
// unfinished one. End also ends the paused iteration of the parent's map
// (its goroutine).
func TestStreamEndedAtALargeParent(t *testing.T) {
	for _, stage := range []orderStage{stageGather, stageSort, stageReady} {
		tr := New(Options{ExtendedTypes: true})
		tr.Create("/p", nil, OpenACL, 0, 1, 1)
		zxid := int64(1)
		for i := range 2 * deferMin {
			zxid++
			tr.Create(fmt.Sprintf("/p/c%05d", (i*7919)%(2*deferMin)), nil, OpenACL, 0, zxid, zxid)
		}
		goroutines := runtime.NumGoroutine()
		s := tr.BeginStream()
		for range 10 {
			if s.Next(nil, 2); s.work != nil {
				break
			}
		}
		if s.work == nil || s.work.fresh == nil {
			t.Fatal("the stream did not stop at the large parent with an order for the next stream")
		}
		s.Next(nil, 100) // gathers some
		zxid++
		tr.Create("/p/late", nil, OpenACL, 0, zxid, zxid)
		for s.work.stage < stage {
			if s.work.stage.locked() {
				s.Next(nil, 1000)
			} else {
				s.Prepare()
			}
		}
		if s.work.stage != stage {
			t.Fatalf("the stream went on to stage %d, want %d", s.work.stage, stage)
		}
		s.End()
		if n := runtime.NumGoroutine(); n > goroutines {
			t.Fatalf("stage %d: %d goroutines after End, %d before the stream", stage, n, goroutines)
		}
		zxid++
		tr.Delete("/p/c00003", zxid)
		want := tr.AppendSnapshot(nil)
		if !bytes.Equal(drainStream(tr.BeginStream(), 100), want) {
			t.Fatalf("stage %d: the stream after one ended at the parent differs from the tree", stage)
		}
	}
}
