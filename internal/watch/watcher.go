package watch

import "hash/maphash"

// watcherState is one watcher and the paths it watches: the watcher's side
// of its (path, watcher) pairs, used to find them all when the watcher goes
// away and to list them for wchc. The path's side, which finds the pair of
// a given watcher on a given path, is the path's entry or its pathSet.
type watcherState struct {
	w Watcher
	// mark is the epoch of the last pass that counted this watcher.
	mark  uint64
	links []link
}

// link is one pair of a watcher: the path's entry id and, when the path has
// a pathSet, the pair's position in its subs; lone when the watcher is the
// path's only one. The pair records the link's position in links (entry.at
// or sub.at), so a link can be removed in constant time.
type link struct {
	id int32
	at int32
}

// lone is link.at for a pair held in the path's entry.
const lone = -1

// add appends l and returns its position in links.
func (ws *watcherState) add(l link) int32 {
	ws.links = append(ws.links, l)
	return int32(len(ws.links) - 1)
}

// shrink gives back the spare capacity of a watcher whose watches mostly
// went away (a session after many of its one-time watches fired).
func (ws *watcherState) shrink() {
	if c := cap(ws.links); c > 64 && len(ws.links) < c/4 {
		ws.links = append(make([]link, 0, 2*len(ws.links)), ws.links...)
	}
}

// pathSet holds the pairs of a path watched by more than one watcher.
//
// Registry.pairOf finds a watcher's pair by scanning the watcher's links
// when it has at most smallWatcher of them (most sessions), else by scanning
// subs when the set has at most smallSet watchers, else through index,
// which is built then and kept up to date from then on. index is an open
// addressing table of positions in subs (see posBits; zero marks an empty
// slot) probed linearly from the watcher's hash, at most 3/4 full. It is
// dropped when the set is down to smallSet/2 watchers.
type pathSet struct {
	subs  []sub
	index []uint32
	// recursive counts the subs holding a recursive watch.
	recursive int32
}

// smallWatcher is the most links of a watcher findSub scans, and smallSet
// the most watchers of a set.
const (
	smallWatcher = 16
	smallSet     = 16
)

// sub is a path's side of a (path, watcher) pair in a pathSet: the watches
// the watcher holds on the path and the position of the pair in ws.links.
type sub struct {
	ws *watcherState
	at int32
	m  modes
}

// wsHash returns the hash of a watcher for the set indexes.
func wsHash(seed maphash.Seed, ws *watcherState) uint32 {
	h := maphash.Comparable(seed, ws)
	return uint32(h ^ h>>32)
}

// find returns the position of ws's pair in s.subs, building the index
// when the set is large.
func (s *pathSet) find(seed maphash.Seed, ws *watcherState) (int32, bool) {
	if s.index == nil {
		if len(s.subs) <= smallSet || len(s.subs) > maxIndexed {
			for i := range s.subs {
				if s.subs[i].ws == ws {
					return int32(i), true
				}
			}
			return 0, false
		}
		s.reindex(seed)
	}
	h := wsHash(seed, ws)
	tag := h &^ posMask
	mask := uint32(len(s.index) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		v := s.index[i]
		if v == 0 {
			return 0, false
		}
		if v&^posMask == tag && s.subs[v&posMask-1].ws == ws {
			return int32(v&posMask) - 1, true
		}
	}
}

// An index slot holds the top 8 bits of the watcher's hash, compared
// before the watcher itself so that a miss rarely reads subs, and in its
// low posBits bits the watcher's position in subs plus one. Sets of more
// than maxIndexed watchers are searched linearly.
const (
	posBits    = 24
	posMask    = 1<<posBits - 1
	maxIndexed = posMask - 1
)

// add appends the pair x and returns its position.
func (s *pathSet) add(seed maphash.Seed, x sub) int32 {
	i := int32(len(s.subs))
	s.subs = append(s.subs, x)
	switch {
	case s.index == nil:
	case len(s.subs) > maxIndexed:
		s.index = nil
	case len(s.subs)*4 > len(s.index)*3:
		s.reindex(seed)
	default:
		s.indexPut(seed, i)
	}
	return i
}

// remove removes s.subs[i] by moving the last sub into its place and
// returns the moved sub, if any.
func (s *pathSet) remove(seed maphash.Seed, i int32) (moved *sub) {
	last := int32(len(s.subs) - 1)
	if s.index != nil {
		s.indexDelete(seed, i)
		if i != last {
			j := s.indexSlot(seed, last)
			s.index[j] = s.index[j]&^posMask | uint32(i+1)
		}
	}
	if i != last {
		s.subs[i] = s.subs[last]
		moved = &s.subs[i]
	}
	s.subs[last] = sub{}
	s.subs = s.subs[:last]
	return moved
}

// indexPut records in the index that s.subs[i] is at i.
func (s *pathSet) indexPut(seed maphash.Seed, i int32) {
	h := wsHash(seed, s.subs[i].ws)
	mask := uint32(len(s.index) - 1)
	j := h & mask
	for s.index[j] != 0 {
		j = (j + 1) & mask
	}
	s.index[j] = h&^posMask | uint32(i+1)
}

// indexSlot returns the slot of the index that holds position i.
func (s *pathSet) indexSlot(seed maphash.Seed, i int32) uint32 {
	h := wsHash(seed, s.subs[i].ws)
	want := h&^posMask | uint32(i+1)
	mask := uint32(len(s.index) - 1)
	j := h & mask
	for s.index[j] != want {
		j = (j + 1) & mask
	}
	return j
}

// indexDelete removes position i from the index, shifting back the slots
// that follow it as pathTable.remove does.
func (s *pathSet) indexDelete(seed maphash.Seed, i int32) {
	mask := uint32(len(s.index) - 1)
	hole := s.indexSlot(seed, i)
	for j := hole; ; {
		j = (j + 1) & mask
		v := s.index[j]
		if v == 0 {
			break
		}
		if !cyclicIn(hole, wsHash(seed, s.subs[v&posMask-1].ws)&mask, j) {
			s.index[hole] = v
			hole = j
		}
	}
	s.index[hole] = 0
}

// reindex rebuilds the index from subs, sized for them.
func (s *pathSet) reindex(seed maphash.Seed) {
	size := 2 * smallSet
	for len(s.subs)*4 > size*3 {
		size *= 2
	}
	if len(s.index) < size || len(s.index) > 4*size {
		s.index = make([]uint32, size)
	} else {
		clear(s.index)
	}
	for i := range s.subs {
		s.indexPut(seed, int32(i))
	}
}

// shrink drops the index of a set that became small and gives back the
// spare capacity of one whose watchers mostly went away (a fan-out path
// after its one-time watches fired).
func (s *pathSet) shrink(seed maphash.Seed) {
	if c := cap(s.subs); c > 16 && len(s.subs) < c/4 {
		s.subs = append(make([]sub, 0, 2*len(s.subs)), s.subs...)
	}
	switch {
	case s.index == nil:
	case len(s.subs) <= smallSet/2:
		s.index = nil
	case len(s.subs)*16 < len(s.index):
		s.reindex(seed)
	}
}
