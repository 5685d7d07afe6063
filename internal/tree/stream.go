package tree

import (
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/paddockhq/paddock/internal/proto"
)

// Stream serialises the tree as it was when BeginStream was called, in the
// same format and byte for byte the same as AppendSnapshot at that moment,
// while the tree goes on changing. It lets a server write a snapshot without
// holding up writes: the caller appends a bounded number of nodes at a time
// under its read lock, and applies entries under its write lock in between.
//
// Copy on write keeps the old state: while a stream is open, every mutating
// method of the tree first saves a copy of the node it changes, and, when a
// child is removed, what the parent held under that name at the start
// (kidsDelta), so the stream reads each node and each parent's children as
// they were at the start. A child added since the start is known by its
// czxid, above every czxid the tree held then (since): adding one records
// nothing, which keeps a map insert per create off the apply path while a
// snapshot is written (6% of a server's CPU under a stream of creates). A
// child added with a czxid not above since (the tree's callers never do;
// its tests do) is recorded in the deltas as free at the start. Nodes
// created after the start are never reached.
// Only the names that change are saved, never a whole children map: a
// parent with tens of thousands of children would otherwise be copied by
// the first write under it after a snapshot began, holding up the apply
// of that write (and every request queued behind it) for milliseconds.
//
// Next and the tree's mutating methods must not run concurrently (the
// caller's lock orders them); only one stream may be open at a time.
type Stream struct {
	t         *Tree
	since     int64 // the largest czxid in the tree at the start (Tree.maxCzxid)
	count     int
	acls      map[ACLRef][]proto.ACL
	saved     map[*Node]*Node
	savedKids map[*Node]kidsDelta
	stack     []streamFrame
	header    bool
	cacheHits int // frames whose order came from Tree.order (for tests)
	merged    int // of those, the ones that merged changed names in
	// work is the parent whose children Next is putting in order, if
	// any (see Prepare); deferMin the fewest children for which it does
	// so across calls (the constant deferMin; tests lower it); inline
	// the work of a parent with fewer, reused from one to the next.
	work     *orderWork
	deferMin int
	inline   orderWork // the work of a parent push does all at once
	// gathering is work while gather is copying its parent's children
	// across Next calls, for childMoved: Next and End write it, under the
	// caller's lock, and Prepare, which runs without it, never reads it.
	gathering *orderWork
	// config is a copy of Tree.config at the start, or nil.
	config *configShown
}

// kidsDelta records, for a parent whose children changed while a stream
// was open, the child each changed name had when the stream began: nil for
// a name that was free then. Names added with a czxid above the stream's
// since and removed again are not recorded (see Stream).
type kidsDelta map[string]*Node

// streamFrame is a node whose children are being streamed: their names as
// the stream saw them when it reached the parent, sorted, with the child
// each had at the stream's start. Taking them then is right: they are
// derived from the live children and the names changed since the start
// (kidsDelta), or from the parent's kept order and those changes.
type streamFrame struct {
	path string // the parent's path, with a trailing "/" except for the root
	kids []child
	next int
}

// child is a child's name and its node. Walking a large parent's children
// in order by their nodes instead of looking each name up in the parent's
// map takes a fifth to a half of the time (BenchmarkStream).
type child struct {
	name string
	n    *Node
}

// sortCacheMin is the fewest children for which a parent's sorted names
// are kept between snapshots (Tree.order); smaller sets are sorted anew,
// which is cheap, and cost no memory in between.
const sortCacheMin = 64

// BeginStream opens a stream of the tree's current state.
func (t *Tree) BeginStream() *Stream {
	s := &Stream{
		t:         t,
		since:     t.maxCzxid,
		count:     t.count,
		acls:      maps.Clone(t.acls.lists),
		saved:     make(map[*Node]*Node),
		savedKids: make(map[*Node]kidsDelta),
		deferMin:  deferMin,
	}
	if t.config != nil {
		c := *t.config
		s.config = &c
	}
	t.stream = s
	return s
}

// End closes the stream and drops the saved copies. An order kept for the
// next stream that finish did not complete (the stream ended early) is
// dropped.
func (s *Stream) End() {
	if s.t.stream == s {
		s.t.stream = nil
	}
	if w := s.work; w != nil && w.fresh != nil && s.t.order[w.parent] == w.fresh {
		delete(s.t.order, w.parent)
	}
	s.gathering = nil
	s.saved, s.savedKids, s.stack, s.work = nil, nil, nil, nil
}

// preserve saves n before a change, when a stream is open and has not
// saved it yet.
func (t *Tree) preserve(n *Node) {
	s := t.stream
	if s == nil {
		return
	}
	if _, ok := s.saved[n]; !ok {
		cp := *n
		s.saved[n] = &cp
	}
}

// preserveAdd saves parent before a child called name, with czxid czxid,
// is added to it, when a stream is open. A child whose czxid is above the
// stream's since is seen as added since the start by that alone; any other
// is recorded as a name that was free at the start, unless the name is
// recorded already.
func (t *Tree) preserveAdd(parent *Node, name string, czxid int64) {
	s := t.stream
	if s == nil {
		return
	}
	t.preserve(parent)
	if czxid > s.since {
		return
	}
	s.record(parent, name, nil)
}

// preserveRemove saves parent, and the child it holds under name, before
// that child is removed, when a stream is open. A child added since the
// start and not recorded (its czxid is above since) held a name that was
// free at the start, which removing it restores: nothing to record.
func (t *Tree) preserveRemove(parent *Node, name string) {
	s := t.stream
	if s == nil {
		return
	}
	t.preserve(parent)
	c := parent.Child(name)
	if s.addedSince(s.savedKids[parent], name, c) {
		return
	}
	s.record(parent, name, c)
}

// record notes that parent held old under name at the start, unless a
// change of that name is recorded already.
func (s *Stream) record(parent *Node, name string, old *Node) {
	d := s.savedKids[parent]
	if d == nil {
		d = make(kidsDelta)
		s.savedKids[parent] = d
	}
	if _, ok := d[name]; !ok {
		d[name] = old
	}
}

// addedSince reports whether c, the live child called name of a parent
// whose deltas are d, was added after the stream began and not recorded.
func (s *Stream) addedSince(d kidsDelta, name string, c *Node) bool {
	if c == nil || c.Czxid <= s.since {
		return false
	}
	_, recorded := d[name]
	return !recorded
}

// atStart returns the child called name that a parent whose deltas are d
// had when the stream began, or nil if it had none; c is its live child of
// that name, or nil. Nodes are never reused: what it returns stays the
// name's child at the start for the rest of the stream.
func (s *Stream) atStart(d kidsDelta, name string, c *Node) *Node {
	if old, ok := d[name]; ok {
		return old
	}
	if c != nil && c.Czxid <= s.since {
		return c
	}
	return nil
}

// state returns n as it was when the stream began.
func (s *Stream) state(n *Node) *Node {
	if old, ok := s.saved[n]; ok {
		return old
	}
	return n
}

// hasKids reports whether n had children when the stream began. It may
// also report true for a node whose only children were added since without
// being recorded (see Stream): counting those would mean reading every
// child, and the frame pushed for such a node has no children and writes
// nothing.
func (s *Stream) hasKids(n *Node) bool {
	d, ok := s.savedKids[n]
	kids := n.NumChildren()
	if !ok {
		return kids > 0
	}
	// Without reading all of d when it is long (a parent whose children
	// are being removed under a stream): each name in d can hide at most
	// one child, and one that held a child at the start settles it.
	if kids > len(d) {
		return true
	}
	added := 0
	for name, old := range d {
		if old != nil {
			return true
		}
		if n.Child(name) != nil {
			added++ // added since
		}
	}
	return kids > added
}

// Next appends up to max more nodes to b and reports whether the stream is
// complete. The first call also appends the ACL table and node count.
//
// Putting a large parent's children in order (Tree.order) is work too: Next
// may return having appended fewer nodes when it reaches one, leaving the
// sorting and merging to Prepare, which the caller runs without its lock.
// A caller that never calls Prepare gets the same bytes: Next then does that
// work itself. Gathering the children of a large parent without a kept
// order, and looking the changed names of a kept order up in the parent's
// children, count against max like nodes do.
func (s *Stream) Next(b []byte, max int) ([]byte, bool) {
	if !s.header {
		s.header = true
		b = appendACLTable(b, s.acls)
		b = proto.AppendInt64(b, int64(s.count))
		b = appendNode(b, "/", s.state(s.t.root))
		max--
		if s.hasKids(s.t.root) {
			s.push("/", s.t.root)
			if s.work != nil {
				return b, false // sorting is Prepare's
			}
		}
	}
	for max > 0 && (s.work != nil || len(s.stack) > 0) {
		if w := s.work; w != nil {
			s.prepare(w) // what Prepare would have done, if the caller did not call it
			if stage := w.stage; stage.locked() {
				max -= s.underLock(w, max)
				if w.stage == stage {
					break // out of budget
				}
				return b, false // sorting or merging is Prepare's
			}
			s.finish(w)
			s.work = nil
			continue
		}
		f := &s.stack[len(s.stack)-1]
		if f.next == len(f.kids) {
			s.stack = s.stack[:len(s.stack)-1]
			continue // popping appends nothing
		}
		c := f.kids[f.next]
		f.next++
		max--
		name, n := c.name, c.n
		// The path goes straight into b: only a node with children needs
		// it as a string, for its frame.
		start := len(b)
		b = proto.AppendInt32(b, int32(len(f.path)+len(name)))
		b = append(b, f.path...)
		b = append(b, name...)
		b = appendNodeFields(b, snapshotNode(n, s.state(n), s.config))
		if s.hasKids(n) {
			s.push(string(b[start+4:start+4+len(f.path)+len(name)]), n)
			if s.work != nil {
				return b, false // sorting is Prepare's
			}
		}
	}
	return b, len(s.stack) == 0 && s.work == nil
}

// Prepare does the part of putting a large parent's children in order that
// Next left (see Next): sorting names and merging sorted lists, which read
// nothing the tree's mutating methods change, so the caller runs it without
// its lock, while entries are applied. It must not run concurrently with
// Next or End. With nothing left, it does nothing.
func (s *Stream) Prepare() {
	if s.work != nil {
		s.prepare(s.work)
	}
}

// deferMin is the fewest children (with a kept order: kept names and
// changes) for which Next leaves a parent's sorting and merging to Prepare
// (Stream.deferMin, which tests lower). Sorting 100,000 names held the
// caller's lock, and every write behind it, for 25 ms; merging 200,000
// changes into a kept order of 100,000 for 85 ms.
const deferMin = 4096

// orderStage is how far the children of the parent Next reached last are
// from being in order (orderWork).
type orderStage uint8

const (
	stageGather   orderStage = iota // sorting: gather the children (gather, under the lock)
	stageSort                       // gathered: sort them (prepare)
	stageClassify                   // merging: look the changed names up (classify, under the lock)
	stageMerge                      // merging: merge the changed names in (prepare)
	stageReady                      // push the frame (finish)
)

// locked reports whether the stage's work reads what the tree's mutating
// methods change, so that it runs in Next, under the caller's lock.
func (st orderStage) locked() bool { return st == stageGather || st == stageClassify }

// orderWork is the work of putting in order the children that a parent
// had at the stream's start, for its frame: sorting them all, or merging
// the names changed since into the parent's kept order (Tree.order).
type orderWork struct {
	path   string
	parent *Node
	stage  orderStage
	kids   []child // the frame's; sorting: unsorted until stageReady
	// Sorting a large parent's children: gathered is how many places of
	// its order gather has copied to kids, across Next calls (see
	// gather); delta is a copy of the parent's deltas taken when all are
	// gathered.
	gathered int
	delta    []child
	// fresh is the order kept for the next stream, installed when the
	// stream reached the parent (nil when it has too few children): it
	// has to be there from then on to note the names that change. Its
	// kids are only a length until finish completes it.
	fresh *childOrder
	// Merging: kept is the parent's kept order when the stream reached it;
	// changed its changed names then (copied of them: apply only appends
	// to the list, so they stay as they are), copied and sorted by
	// prepare, each once from stageClassify on, with the index in
	// kept.kids of each (or where it would be) in at, and whether it is
	// there in found.
	kept        *childOrder
	changed     []string
	copied      int
	at          []int
	found       []bool
	next        int      // changed names looked up so far
	back        []child  // names at the start, not in kept.kids, with their nodes then
	gone, stale []int    // indexes in kept.kids, ascending
	staleNodes  []*Node  // the nodes of the names at stale at the start
	added       []string // names added since the stream began
}

// push adds a frame for n's children; n had some at the stream's start
// (hasKids). When putting them in order is long work it leaves it pending
// (Stream.work) for Next and Prepare to finish; else it does it all.
func (s *Stream) push(path string, n *Node) {
	if path != "/" {
		path += "/"
	}
	w := &s.inline
	s.begin(w, path, n)
	if s.large(w) {
		s.work = new(orderWork)
		*s.work = *w
		if s.work.stage == stageGather {
			s.gathering = s.work
		}
		return
	}
	for w.stage != stageReady {
		if w.stage.locked() {
			s.underLock(w, math.MaxInt)
		} else {
			s.prepare(w)
		}
	}
	s.finish(w)
}

// large reports whether w is long enough work to be left to Prepare.
func (s *Stream) large(w *orderWork) bool {
	if w.kept != nil {
		return len(w.kept.kids)+len(w.changed) >= s.deferMin
	}
	return w.stage == stageGather && cap(w.kids) >= s.deferMin
}

// underLock does at most max of w's steps that read what the tree's
// mutating methods change (orderStage.locked) and returns how many it did.
func (s *Stream) underLock(w *orderWork, max int) int {
	if w.stage == stageGather {
		return s.gather(w, max)
	}
	return s.classify(w, max)
}

// begin starts putting in order, in w, the children that n had at the
// stream's start. With a kept order (Tree.order) it copies the names
// changed since that order's stream began, to be sorted and merged in;
// without one it gathers the children, to be sorted, and keeps an order for
// the next stream when there are many.
func (s *Stream) begin(w *orderWork, path string, n *Node) {
	*w = orderWork{path: path, parent: n}
	if o := s.t.order[n]; o != nil {
		s.cacheHits++
		if len(o.changed) == 0 {
			w.kids, w.stage = o.kids, stageReady // nothing changed since (not even in this stream)
			return
		}
		s.merged++
		k := len(o.changed)
		w.stage, w.kept, w.changed, w.copied = stageSort, o, o.changed[:k:k], k
		return
	}
	// The children are gathered (gather) and sorted (prepare) later: a
	// large parent's a piece at a time, as gathering 100,000 held the
	// caller's lock for 2 to 10 ms.
	d := s.savedKids[n]
	size := n.NumChildren() + len(d)
	w.stage, w.kids = stageGather, make([]child, 0, size)
	if size >= sortCacheMin {
		// Its kids' length is what apply reads (childrenChanging)
		// until finish puts the sorted children in.
		w.fresh = &childOrder{kids: w.kids[:n.NumChildren()], changed: changedNames(d, nil, nil)}
		s.t.order[n] = w.fresh
	}
}

// gather collects at most max more of the children w's parent has now, and
// returns how many it did (a small parent's all at once): it copies the
// next places of the parent's order. Between calls a child that moves from
// a place not copied yet to one copied already, as Delete moves the last
// child, is copied when it moves (childMoved), so every child that stays
// throughout is gathered; one moved the other way, as Reinsert moves one,
// is gathered twice, which prepare undoes; children added meanwhile may or
// may not be gathered; those removed meanwhile were there at the start
// only if they are in the parent's deltas by the end. With all gathered
// it copies the deltas: prepare takes out the names in them and puts back
// the children those had at the start, and takes out the children added
// since.
func (s *Stream) gather(w *orderWork, max int) int {
	var kids []child
	if l := w.parent.kids; l != nil {
		kids = l.kids
	}
	start := min(w.gathered, len(kids))
	end := start + min(max, len(kids)-start)
	w.kids = append(w.kids, kids[start:end]...)
	w.gathered = end
	if end < len(kids) {
		return end - start
	}
	if s.gathering == w {
		s.gathering = nil
	}
	for name, old := range s.savedKids[w.parent] {
		w.delta = append(w.delta, child{name, old})
	}
	w.stage = stageSort
	return end - start
}

// childMoved is called when parent's child c moves from place from to
// place to in the parent's order, for a stream gathering the parent's
// children (gather) to copy it if it moved from the places not copied yet
// to those copied already.
func (t *Tree) childMoved(parent *Node, c child, from, to int) {
	if t.stream == nil {
		return
	}
	if w := t.stream.gathering; w != nil && w.parent == parent && to < w.gathered && from >= w.gathered {
		w.kids = append(w.kids, c)
	}
}

// changedNames lists the names of d, then added and more: those a new kept
// order starts with as changed since its stream began.
func changedNames(d kidsDelta, added, more []string) []string {
	if len(d)+len(added)+len(more) == 0 {
		return nil
	}
	out := make([]string, 0, len(d)+len(added)+len(more))
	for name := range d {
		out = append(out, name)
	}
	out = append(out, added...)
	return append(out, more...)
}

// prepare does w's next step that needs no lock: sorting (all the names, or
// the changed ones with their places in the kept order) or merging.
func (s *Stream) prepare(w *orderWork) {
	switch w.stage {
	case stageSort:
		if w.kept == nil {
			// The names in the deltas changed since the start: what
			// they held then is in the deltas. A child not in them
			// whose czxid is above since was added since; reading a
			// czxid needs no lock (it never changes), and doing it
			// under the lock took 5 ms of 7 with 100,000 children.
			var changed map[string]struct{}
			if len(w.delta) > 0 {
				changed = make(map[string]struct{}, len(w.delta))
				for _, c := range w.delta {
					changed[c.name] = struct{}{}
				}
			}
			kids := w.kids[:0] // in place
			for _, c := range w.kids {
				if _, ok := changed[c.name]; ok {
					continue
				}
				if c.n.Czxid > s.since {
					w.added = append(w.added, c.name)
				} else {
					kids = append(kids, c)
				}
			}
			for _, c := range w.delta {
				if c.n != nil {
					kids = append(kids, c)
				}
			}
			slices.SortFunc(kids, compareKids)
			// A child gather copied twice (see there) is one.
			kids = slices.CompactFunc(kids, func(a, b child) bool { return a.name == b.name })
			w.kids, w.stage = kids, stageReady
			return
		}
		// In name order, each name once: then the indexes found in
		// kept.kids ascend, each search starts where the last one
		// ended, and added, gone and stale come out sorted. Only
		// streams read or write the kept order's kids. The copy is
		// prepare's (without the lock): apply may be appending to the
		// list, and reading the names it holds already needs no lock.
		w.changed = slices.Clone(w.changed)
		slices.Sort(w.changed)
		w.changed = slices.Compact(w.changed)
		w.at, w.found = make([]int, len(w.changed)), make([]bool, len(w.changed))
		from := 0
		for i, name := range w.changed {
			j, found := slices.BinarySearchFunc(w.kept.kids[from:], name, byName)
			from += j
			w.at[i], w.found[i] = from, found
		}
		w.stage = stageClassify
	case stageMerge:
		w.kids = mergeSorted(w.kept.kids, w.gone, w.stale, w.staleNodes, w.back)
		w.stage = stageReady
	}
}

// classify looks at most max of w's changed names up in the parent's
// children and deltas, and returns how many it did: whether each was a
// child at the stream's start, and whether it was added since. What it finds holds for
// the rest of the stream (atStart), and a name added later is noted in the
// kept order's changed names, so the lock may be let go in between.
func (s *Stream) classify(w *orderWork, max int) int {
	n, d := w.parent, s.savedKids[w.parent]
	done := 0
	for ; w.next < len(w.changed) && done < max; w.next++ {
		done++
		name, i, kept := w.changed[w.next], w.at[w.next], w.found[w.next]
		c := n.Child(name)
		if s.addedSince(d, name, c) {
			// Every name added since this stream began, before it
			// reached n, was noted in the kept order's changed names.
			w.added = append(w.added, name)
		}
		switch start := s.atStart(d, name, c); {
		case start != nil && !kept:
			w.back = append(w.back, child{name, start})
		case start == nil && kept:
			w.gone = append(w.gone, i)
		case start != nil && kept: // its node may have changed
			w.stale, w.staleNodes = append(w.stale, i), append(w.staleNodes, start)
		}
	}
	if w.next == len(w.changed) {
		w.stage = stageMerge
	}
	return done
}

// finish pushes w's frame and keeps its children's order for the next
// stream, with the names changed since this stream began: the deltas, those
// added since, and, after a merge, every name noted in the kept order after
// it was copied (a fresh order notes them itself). An order dropped
// meanwhile (childrenChanging, Delete) is not replaced: the next stream
// sorts the children anew.
func (s *Stream) finish(w *orderWork) {
	n := w.parent
	switch o := s.t.order[n]; {
	case o == nil || (o != w.kept && o != w.fresh):
	case len(w.kids) < sortCacheMin:
		delete(s.t.order, n)
	case o == w.fresh:
		o.kids, o.changed = w.kids, append(o.changed, w.added...)
	default:
		s.t.order[n] = &childOrder{kids: w.kids, changed: changedNames(s.savedKids[n], w.added, o.changed[w.copied:])}
	}
	s.stack = append(s.stack, streamFrame{path: w.path, kids: w.kids})
}

func byName(c child, name string) int { return strings.Compare(c.name, name) }

func compareKids(a, b child) int { return strings.Compare(a.name, b.name) }

// mergeSorted returns the sorted list a without the entries at the indexes
// gone, with the nodes of the entries at the indexes stale replaced by
// nodes (both ascending), and with the entries of the sorted list b, none
// of whose names is in a.
func mergeSorted(a []child, gone, stale []int, nodes []*Node, b []child) []child {
	if len(gone) == 0 && len(stale) == 0 && len(b) == 0 {
		return a
	}
	out := make([]child, 0, len(a)-len(gone)+len(b))
	j := 0
	for i, c := range a {
		if len(gone) > 0 && gone[0] == i {
			gone = gone[1:]
			continue
		}
		if len(stale) > 0 && stale[0] == i {
			c.n = nodes[0]
			stale, nodes = stale[1:], nodes[1:]
		}
		for j < len(b) && b[j].name < c.name {
			out = append(out, b[j])
			j++
		}
		out = append(out, c)
	}
	return append(out, b[j:]...)
}
