package tree

import (
	"maps"
	"sort"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/zpath"
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

// streamFrame is a node whose children are being streamed. It holds the node,
// not its children map: the map may be copied on write after the frame is
// made, and only the stream's kids(node) knows which map is the old one.
type streamFrame struct {
	path  string
	node  *Node
	names []string
	next  int
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
		b = s.visit(b, "/", s.t.root)
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
		b = s.visit(b, zpath.Join(f.path, name), s.kids(f.node)[name])
	}
	return b, len(s.stack) == 0
}

// visit appends one node and pushes its children.
func (s *Stream) visit(b []byte, path string, n *Node) []byte {
	b = appendNode(b, path, s.state(n))
	kids := s.kids(n)
	if len(kids) > 0 {
		names := make([]string, 0, len(kids))
		for name := range kids {
			names = append(names, name)
		}
		sort.Strings(names)
		s.stack = append(s.stack, streamFrame{path: path, node: n, names: names})
	}
	return b
}
