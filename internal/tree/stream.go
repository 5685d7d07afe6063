package tree

import (
	"maps"
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
}

// streamFrame is a node whose children are being streamed: their names and
// nodes as the stream saw them when it reached the parent, sorted by name.
// Taking them then is right: a children map changed later is copied first
// (preserve), so it held these children at the stream's start too.
type streamFrame struct {
	path string // the parent's path, with a trailing "/" except for the root
	kids []streamKid
	next int
}

type streamKid struct {
	name string
	node *Node
}

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
		if f.next == len(f.kids) {
			s.stack = s.stack[:len(s.stack)-1]
			max++ // popping appends nothing
			continue
		}
		k := f.kids[f.next]
		f.next++
		// The path goes straight into b: only a node with children needs
		// it as a string, for its frame.
		start := len(b)
		b = proto.AppendInt32(b, int32(len(f.path)+len(k.name)))
		b = append(b, f.path...)
		b = append(b, k.name...)
		b = appendNodeFields(b, s.state(k.node))
		if len(s.kids(k.node)) > 0 {
			s.push(string(b[start+4:start+4+len(f.path)+len(k.name)]), k.node)
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
	kids := make([]streamKid, 0, len(m))
	for name, c := range m {
		kids = append(kids, streamKid{name, c})
	}
	slices.SortFunc(kids, func(a, b streamKid) int { return strings.Compare(a.name, b.name) })
	if path != "/" {
		path += "/"
	}
	s.stack = append(s.stack, streamFrame{path: path, kids: kids})
}
