package tree

import "hash/maphash"

// childList is a node's children in their order: a dense list of names and
// nodes, and, once there are more than linearMax, an index of it by name.
//
// The order depends only on the creates and deletes made under the node
// (and Reinsert), never on hashing or on when it is read: a child added
// goes last, and a child removed has its place taken by the last one, so
// that removing is O(1) with no gaps to skip. Replicas that applied the
// same entries list the same children in the same order, and an unchanged
// node lists them alike every time, as a HashSet iterates in ZooKeeper.
// A Go map, which iterates in a new random order every time, cannot.
//
// It costs less than the map it replaced (map[string]*Node): 24 bytes per
// child in the list plus 8 per index slot, the index between three eighths
// and three quarters full as it grows, where a map's slot is 24 bytes at most seven eighths
// full, plus a control byte, and a map holds a group of eight slots even
// for one child.
type childList struct {
	kids  []child
	index *childIndex // nil while there are at most linearMax kids
}

// childIndex finds a name's place in a childList: an open-addressing table
// with linear probing. A slot is 0 when free, else the top 32 bits of the
// name's hash above the place plus one. A slot's home is its hash's bits
// under the mask, so a removal shifts back the slots after it (no
// tombstones), and comparing the stored hash skips most other names
// without reading them.
type childIndex struct {
	seed  maphash.Seed
	slots []uint64
}

// linearMax is the most children a node has without an index: finding one
// of so few names by comparing them all is as fast as hashing one.
const (
	linearMax = 8
	minSlots  = 16 // an index's fewest slots
)

// len returns the number of children; l may be nil.
func (l *childList) len() int {
	if l == nil {
		return 0
	}
	return len(l.kids)
}

// find returns the place of the child called name, or -1; l may be nil.
func (l *childList) find(name string) int {
	if l == nil {
		return -1
	}
	if x := l.index; x != nil {
		h := x.hash(name)
		mask := uint32(len(x.slots) - 1)
		for i := h & mask; ; i = (i + 1) & mask {
			s := x.slots[i]
			if s == 0 {
				return -1
			}
			if uint32(s>>32) == h {
				if p := int(uint32(s)) - 1; l.kids[p].name == name {
					return p
				}
			}
		}
	}
	for i := range l.kids {
		if l.kids[i].name == name {
			return i
		}
	}
	return -1
}

// get returns the child called name, or nil; l may be nil.
func (l *childList) get(name string) *Node {
	if i := l.find(name); i >= 0 {
		return l.kids[i].n
	}
	return nil
}

// add puts n last under name, which must be free.
func (l *childList) add(name string, n *Node) {
	l.kids = append(l.kids, child{name, n})
	switch x := l.index; {
	case x != nil && len(l.kids)*4 <= len(x.slots)*3:
		x.insert(x.hash(name), len(l.kids)-1)
	case x != nil || len(l.kids) > linearMax:
		l.reindex()
	}
}

// removeAt removes the child at place i, moving the last child into it,
// and returns that child and where it was (i itself when the removed
// child was last, and nothing moved).
func (l *childList) removeAt(i int) (moved child, from int) {
	last := len(l.kids) - 1
	gone := l.kids[i].name
	if x := l.index; x != nil {
		x.clear(x.slotOf(x.hash(gone), i))
		if i != last {
			x.move(l.kids[last].name, last, i)
		}
	}
	moved = l.kids[last]
	l.kids[i] = moved
	l.kids[last] = child{} // drop the references
	l.kids = l.kids[:last]
	// Shrink what a node that had many children and lost most keeps,
	// with room to grow again: amortised O(1).
	if c := cap(l.kids); c > 4*linearMax && last < c/4 {
		l.kids = append(make([]child, 0, 2*last), l.kids...)
	}
	if x := l.index; x != nil && (last <= linearMax/2 || (len(x.slots) > minSlots && last*8 < len(x.slots))) {
		l.reindex()
	}
	return moved, last
}

// swap exchanges the children at places i and j.
func (l *childList) swap(i, j int) {
	if i == j {
		return
	}
	if x := l.index; x != nil {
		si := x.slotOf(x.hash(l.kids[i].name), i)
		sj := x.slotOf(x.hash(l.kids[j].name), j)
		x.slots[si] = x.slots[si]&^0xFFFFFFFF | uint64(j+1)
		x.slots[sj] = x.slots[sj]&^0xFFFFFFFF | uint64(i+1)
	}
	l.kids[i], l.kids[j] = l.kids[j], l.kids[i]
}

// reindex builds the index anew for the current children, the fewest slots
// that they fill at most three quarters of, or drops it when there are
// few (at most linearMax, or half that once built, so that a node
// hovering at the limit does not build and drop it on every change).
func (l *childList) reindex() {
	n := len(l.kids)
	if n <= linearMax && (l.index == nil || n <= linearMax/2) {
		l.index = nil
		return
	}
	size := minSlots
	for size*3 < n*4 {
		size *= 2
	}
	x := l.index
	if x == nil {
		x = &childIndex{seed: maphash.MakeSeed()}
		l.index = x
	}
	x.slots = make([]uint64, size)
	for i := range l.kids {
		x.insert(x.hash(l.kids[i].name), i)
	}
}

// hash returns the 32 bits of name's hash a slot keeps.
func (x *childIndex) hash(name string) uint32 {
	return uint32(maphash.String(x.seed, name) >> 32)
}

// insert adds a slot for the place i of a name hashed to h.
func (x *childIndex) insert(h uint32, i int) {
	mask := uint32(len(x.slots) - 1)
	j := h & mask
	for x.slots[j] != 0 {
		j = (j + 1) & mask
	}
	x.slots[j] = uint64(h)<<32 | uint64(i+1)
}

// slotOf returns the slot of place i, whose name hashed to h.
func (x *childIndex) slotOf(h uint32, i int) uint32 {
	mask := uint32(len(x.slots) - 1)
	j := h & mask
	for uint32(x.slots[j]) != uint32(i+1) {
		j = (j + 1) & mask
	}
	return j
}

// move points the slot of name from place from to place to.
func (x *childIndex) move(name string, from, to int) {
	j := x.slotOf(x.hash(name), from)
	x.slots[j] = x.slots[j]&^0xFFFFFFFF | uint64(to+1)
}

// clear frees slot i and shifts back the slots after it that can move
// nearer their home (Knuth's algorithm R), so that every name stays
// reachable from its home without crossing a free slot.
func (x *childIndex) clear(i uint32) {
	mask := uint32(len(x.slots) - 1)
	for j := (i + 1) & mask; x.slots[j] != 0; j = (j + 1) & mask {
		home := uint32(x.slots[j]>>32) & mask
		if (j-home)&mask >= (j-i)&mask { // i lies on its way from home to j
			x.slots[i] = x.slots[j]
			i = j
		}
	}
	x.slots[i] = 0
}
