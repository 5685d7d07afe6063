package watch

import (
	"hash/maphash"
	"iter"
)

// pathTable maps every watched path to a pathEntry with a stable id. It is
// a hash table written for the registry's memory budget: a Go map keyed by
// the path string costs 50–70 bytes per path for its slots alone, while this
// costs the 32-byte entry plus 8 bytes per hash slot.
//
// Entries live in chunks of chunkSize, so they never move and their ids stay
// valid until removed; a removed entry's id is reused by a later insert.
//
// The hash index is split, as Go's own maps are, into segments of at most
// maxSegment slots; a directory indexed by the top bits of a path's 32-bit
// hash picks the segment (extendible hashing). A segment is an open
// addressing table probed linearly from the hash's low bits, at most 3/4
// full; each slot holds the path's hash (compared before the path itself,
// so a miss rarely touches an entry) and its id plus one (zero marks an
// empty slot). Removal shifts the following slots back, so there are no
// tombstones. A full segment doubles in place until it reaches maxSegment
// slots and then splits in two, so growing never rehashes more than one
// segment at a time. Like a Go map the table keeps its size when paths go
// away, except that a table past one full segment is released when it
// becomes empty.
type pathTable struct {
	seed maphash.Seed
	// dir has 1<<depth segments, a segment of local depth d filling the
	// 1<<(depth-d) consecutive places that share its top d hash bits. It is
	// nil while the table is empty.
	dir    []*segment
	depth  uint8
	chunks [][]pathEntry
	// used is the number of ids handed out, live or free.
	used int32
	// free is the first free id, -1 when there is none; a free entry's at
	// field holds the next one.
	free int32
	// n is the number of live entries.
	n int
}

// segment is one part of the hash index.
type segment struct {
	slots []uint64
	n     int
	depth uint8
}

// pathEntry is one watched path. While one watcher watches the path (the
// common case) the pair is held here: ws, its modes in m, and in at the
// pair's position in ws.links. A path with more watchers has m == modeSet,
// no ws, and its pairs in Registry.sets. A free entry has m == 0.
type pathEntry struct {
	path string
	ws   *watcherState
	at   int32
	m    modes
}

// modeSet is the m of an entry whose watchers are in a pathSet.
const modeSet modes = 1 << 7

const (
	chunkBits  = 10
	chunkSize  = 1 << chunkBits
	chunkMask  = chunkSize - 1
	firstChunk = 16 // entries in a new chunk before it grows
	minSlots   = 16
	maxSegment = 1024
	// maxDepth bounds the directory; a segment at this depth doubles
	// instead of splitting (never reached: that is 2^24 segments).
	maxDepth = 24
)

func newPathTable() pathTable {
	return pathTable{seed: maphash.MakeSeed(), free: -1}
}

// entry returns the entry with the given id. The pointer is valid until the
// next insert.
func (t *pathTable) entry(id int32) *pathEntry {
	return &t.chunks[id>>chunkBits][id&chunkMask]
}

// hash returns the 32-bit hash of path used by the index.
func (t *pathTable) hash(path string) uint32 {
	h := maphash.String(t.seed, path)
	return uint32(h ^ h>>32)
}

// segment returns the segment of the index for hash h.
func (t *pathTable) segment(h uint32) *segment {
	return t.dir[uint64(h)>>(32-t.depth)]
}

// lookup returns the id of path, whose hash is h.
func (t *pathTable) lookup(path string, h uint32) (int32, bool) {
	if t.n == 0 {
		return 0, false
	}
	sg := t.segment(h)
	mask := uint32(len(sg.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := sg.slots[i]
		if s == 0 {
			return 0, false
		}
		if uint32(s>>32) == h {
			id := int32(uint32(s)) - 1
			if t.entry(id).path == path {
				return id, true
			}
		}
	}
}

// insert adds path, whose hash is h and which must not be in the table, and
// returns the id of its entry, which is zero but for the path.
func (t *pathTable) insert(path string, h uint32) int32 {
	if t.dir == nil {
		t.dir = []*segment{{slots: make([]uint64, minSlots)}}
	}
	sg := t.segment(h)
	for (sg.n+1)*4 > len(sg.slots)*3 {
		t.grow(sg, h)
		sg = t.segment(h)
	}
	id := t.alloc()
	t.entry(id).path = path
	sg.put(uint64(h)<<32 | uint64(uint32(id)+1))
	t.n++
	return id
}

// put adds slot value s to the segment, which has room for it.
func (sg *segment) put(s uint64) {
	mask := uint32(len(sg.slots) - 1)
	i := uint32(s>>32) & mask
	for sg.slots[i] != 0 {
		i = (i + 1) & mask
	}
	sg.slots[i] = s
	sg.n++
}

// grow makes room in sg, the full segment for hash h: it doubles sg while
// sg is small and splits it in two otherwise, doubling the directory first
// when sg fills only one place of it.
func (t *pathTable) grow(sg *segment, h uint32) {
	if len(sg.slots) < maxSegment || sg.depth == maxDepth {
		old := sg.slots
		sg.slots, sg.n = make([]uint64, 2*len(old)), 0
		for _, s := range old {
			if s != 0 {
				sg.put(s)
			}
		}
		return
	}
	if sg.depth == t.depth {
		dir := make([]*segment, 2*len(t.dir))
		for i, x := range t.dir {
			dir[2*i], dir[2*i+1] = x, x
		}
		t.dir, t.depth = dir, t.depth+1
	}
	d := sg.depth + 1
	lo := &segment{slots: make([]uint64, len(sg.slots)), depth: d}
	hi := &segment{slots: make([]uint64, len(sg.slots)), depth: d}
	bit := uint32(1) << (32 - d)
	for _, s := range sg.slots {
		switch {
		case s == 0:
		case uint32(s>>32)&bit == 0:
			lo.put(s)
		default:
			hi.put(s)
		}
	}
	span := 1 << (t.depth - sg.depth)
	first := int(uint64(h)>>(32-t.depth)) &^ (span - 1)
	for i := range span / 2 {
		t.dir[first+i] = lo
		t.dir[first+span/2+i] = hi
	}
}

// alloc returns a free id, taking a new one when none was freed.
func (t *pathTable) alloc() int32 {
	if id := t.free; id >= 0 {
		t.free = t.entry(id).at
		t.entry(id).at = 0
		return id
	}
	id := t.used
	c := int(id >> chunkBits)
	if c == len(t.chunks) {
		t.chunks = append(t.chunks, make([]pathEntry, 0, firstChunk))
	}
	chunk := t.chunks[c]
	if len(chunk) == cap(chunk) {
		// Grow by hand: append could overshoot chunkSize.
		chunk = append(make([]pathEntry, 0, min(2*cap(chunk), chunkSize)), chunk...)
	}
	t.chunks[c] = chunk[:len(chunk)+1]
	t.used++
	return id
}

// remove frees the entry id.
func (t *pathTable) remove(id int32) {
	e := t.entry(id)
	h := t.hash(e.path)
	sg := t.segment(h)
	mask := uint32(len(sg.slots) - 1)
	want := uint64(h)<<32 | uint64(uint32(id)+1)
	i := h & mask
	for sg.slots[i] != want {
		i = (i + 1) & mask
	}
	// Shift back every following slot of the run that may move into the
	// hole: one whose home is not cyclically within (hole, its position].
	for j := i; ; {
		j = (j + 1) & mask
		s := sg.slots[j]
		if s == 0 {
			break
		}
		home := uint32(s>>32) & mask
		if !cyclicIn(i, home, j) {
			sg.slots[i] = s
			i = j
		}
	}
	sg.slots[i] = 0
	sg.n--
	*e = pathEntry{at: t.free}
	t.free = id
	t.n--
	if t.n == 0 && (len(t.dir) > 1 || len(t.dir[0].slots) >= maxSegment) {
		*t = pathTable{seed: t.seed, free: -1}
	}
}

// cyclicIn reports whether k lies in the cyclic interval (i, j].
func cyclicIn(i, k, j uint32) bool {
	if i <= j {
		return i < k && k <= j
	}
	return i < k || k <= j
}

// all yields the id and entry of every watched path, in no particular
// order. The loop body may change entries but must not insert or remove.
func (t *pathTable) all() iter.Seq2[int32, *pathEntry] {
	return func(yield func(int32, *pathEntry) bool) {
		for c, chunk := range t.chunks {
			for i := range chunk {
				e := &chunk[i]
				if e.m != 0 && !yield(int32(c<<chunkBits|i), e) {
					return
				}
			}
		}
	}
}
