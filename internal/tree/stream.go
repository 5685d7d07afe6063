package tree

import (
	"maps"
	"slices"

	"github.com/paddockhq/paddock/internal/proto"
)

// Stream serialises the tree as it was when BeginStream was called, in the
// same format and byte for byte the same as AppendSnapshot at that moment,
// while the tree goes on changing. It lets a server write a snapshot without
// holding up writes: the caller appends a bounded number of nodes at a time
// under its read lock, and applies entries under its write lock in between.
//
// Copy on write keeps the old state: while a stream is open, every mutating
// method of the tree first saves a copy of the node it changes (and of its
// children map, when that changes), so the stream reads each node as it was
// at the start. Nodes created after the start are never reached, because
// the stream walks the saved children maps.
//
// Next and the tree's mutating methods must not run concurrently (the
// caller's lock orders them); only one stream may be open at a time.
type Stream struct {
	t         *Tree
	count     int
	acls      map[ACLRef][]proto.ACL
	saved     map[*Node]*Node
	savedKids map[*Node]map[string]*Node
	stack     []streamFrame
	header    bool
	cacheHits int // frames whose order came from Tree.sorted (for tests)
}

// streamFrame is a node whose children are being streamed: their names as
// the stream saw them when it reached the parent, sorted. Taking them then
// is right: a children map changed later is copied first (preserve), so it
// held these children at the stream's start too, and each child is looked
// up in the parent's children as of the start (kids).
type streamFrame struct {
	path   string // the parent's path, with a trailing "/" except for the root
	parent *Node
	names  []string
	next   int
}

// sortCacheMin is the fewest children for which a parent's sorted names
// are kept between snapshots (Tree.sorted); smaller sets are sorted anew,
// which is cheap, and cost no memory in between.
const sortCacheMin = 64

// BeginStream opens a stream of the tree's current state.
func (t *Tree) BeginStream() *Stream {
	s := &Stream{
		t:         t,
		count:     t.count,
		acls:      maps.Clone(t.acls.lists),
		saved:     make(map[*Node]*Node),
		savedKids: make(map[*Node]map[string]*Node),
	}
	t.stream = s
	return s
}

// End closes the stream and drops the saved copies.
func (s *Stream) End() {
	if s.t.stream == s {
		s.t.stream = nil
	}
	s.saved, s.savedKids, s.stack = nil, nil, nil
}

// preserve saves n (and its children map if kids) before a change, when a
// stream is open and has not saved it yet.
func (t *Tree) preserve(n *Node, kids bool) {
	s := t.stream
	if s == nil {
		return
	}
	if _, ok := s.saved[n]; !ok {
		cp := *n
		s.saved[n] = &cp
	}
	if kids {
		if _, ok := s.savedKids[n]; !ok {
			s.savedKids[n] = maps.Clone(n.children)
		}
	}
}

// state returns n as it was when the stream began.
func (s *Stream) state(n *Node) *Node {
	if old, ok := s.saved[n]; ok {
		return old
	}
	return n
}

// kids returns n's children as they were when the stream began.
func (s *Stream) kids(n *Node) map[string]*Node {
	if old, ok := s.savedKids[n]; ok {
		return old
	}
	return n.children
}

// Next appends up to max more nodes to b and reports whether the stream is
// complete. The first call also appends the ACL table and node count.
func (s *Stream) Next(b []byte, max int) ([]byte, bool) {
	if !s.header {
		s.header = true
		b = appendACLTable(b, s.acls)
		b = proto.AppendInt64(b, int64(s.count))
		b = appendNode(b, "/", s.state(s.t.root))
		s.push("/", s.t.root)
		max--
	}
	for ; max > 0 && len(s.stack) > 0; max-- {
		f := &s.stack[len(s.stack)-1]
		if f.next == len(f.names) {
			s.stack = s.stack[:len(s.stack)-1]
			max++ // popping appends nothing
			continue
		}
		name := f.names[f.next]
		f.next++
		n := s.kids(f.parent)[name]
		// The path goes straight into b: only a node with children needs
		// it as a string, for its frame.
		start := len(b)
		b = proto.AppendInt32(b, int32(len(f.path)+len(name)))
		b = append(b, f.path...)
		b = append(b, name...)
		b = appendNodeFields(b, s.state(n))
		if len(s.kids(n)) > 0 {
			s.push(string(b[start+4:start+4+len(f.path)+len(name)]), n)
		}
	}
	return b, len(s.stack) == 0
}

// push adds a frame for n's children, if it has any.
func (s *Stream) push(path string, n *Node) {
	m := s.kids(n)
	if len(m) == 0 {
		return
	}
	if path != "/" {
		path += "/"
	}
	s.stack = append(s.stack, streamFrame{path: path, parent: n, names: s.sortedNames(n, m)})
}

// sortedNames returns the names of m, n's children at the stream's start,
// in order: from the tree's cache when n's children have not changed since
// the stream began (then m is n's live map, and a cached order is current),
// else sorted here, and cached if there are many.
func (s *Stream) sortedNames(n *Node, m map[string]*Node) []string {
	_, changed := s.savedKids[n]
	if !changed {
		if names, ok := s.t.sorted[n]; ok {
			s.cacheHits++
			return names
		}
	}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	if !changed && len(names) >= sortCacheMin {
		s.t.sorted[n] = names
	}
	return names
}
