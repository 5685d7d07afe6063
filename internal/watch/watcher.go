package watch

import "iter"

// watcherState is one watcher and the paths it watches: the watcher's side
// of its (path, watcher) pairs, giving for each path the pair's position in
// that path's subs.
//
// A watcher with few paths (most sessions) keeps them in links, searched
// linearly; each pair's sub.at is its position in links. Past smallWatcher
// paths the watcher switches to index, a map from path to position in subs,
// links becomes nil and sub.at is unused. It switches back when it is down
// to smallWatcher/2 paths, so a watcher near the threshold does not flip at
// every change.
type watcherState struct {
	w Watcher
	// mark is the epoch of the last pass that counted this watcher.
	mark  uint64
	links []link
	index map[*pathState]int32
}

// smallWatcher is the most paths a watcher keeps in links.
const smallWatcher = 16

// link is one pair of a small watcher.
type link struct {
	ps *pathState
	at int32 // position of the pair in ps.subs
}

// len returns the number of paths ws watches.
func (ws *watcherState) len() int {
	if ws.index != nil {
		return len(ws.index)
	}
	return len(ws.links)
}

// find returns the position of ws's pair in ps.subs.
func (ws *watcherState) find(ps *pathState) (int32, bool) {
	if ws.index != nil {
		i, ok := ws.index[ps]
		return i, ok
	}
	for _, l := range ws.links {
		if l.ps == ps {
			return l.at, true
		}
	}
	return 0, false
}

// add records a new pair on ps at position i of ps.subs and returns the
// value for the pair's sub.at.
func (ws *watcherState) add(ps *pathState, i int32) int32 {
	if ws.index != nil {
		ws.index[ps] = i
		return 0
	}
	if len(ws.links) < smallWatcher {
		ws.links = append(ws.links, link{ps: ps, at: i})
		return int32(len(ws.links) - 1)
	}
	ws.index = make(map[*pathState]int32, len(ws.links)+1)
	for _, l := range ws.links {
		ws.index[l.ps] = l.at
	}
	ws.index[ps] = i
	ws.links = nil
	return 0
}

// moved records that the pair on ps, whose sub.at is at, moved to position
// i of ps.subs.
func (ws *watcherState) moved(ps *pathState, at, i int32) {
	if ws.index != nil {
		ws.index[ps] = i
		return
	}
	ws.links[at].at = i
}

// remove forgets the pair on ps, whose sub.at is at. It may rewrite the
// sub.at of ws's pairs on other paths, never on ps.
func (ws *watcherState) remove(ps *pathState, at int32) {
	if ws.index != nil {
		delete(ws.index, ps)
		if len(ws.index) > smallWatcher/2 {
			return
		}
		ws.links = make([]link, 0, smallWatcher)
		for p, i := range ws.index {
			p.subs[i].at = int32(len(ws.links))
			ws.links = append(ws.links, link{ps: p, at: i})
		}
		ws.index = nil
		return
	}
	last := int32(len(ws.links) - 1)
	if at != last {
		moved := ws.links[last]
		ws.links[at] = moved
		moved.ps.subs[moved.at].at = at
	}
	ws.links[last] = link{}
	ws.links = ws.links[:last]
}

// pairs yields every path ws watches with the position of its pair in
// that path's subs. The loop body must not change ws.
func (ws *watcherState) pairs() iter.Seq2[*pathState, int32] {
	return func(yield func(*pathState, int32) bool) {
		if ws.index != nil {
			for ps, i := range ws.index {
				if !yield(ps, i) {
					return
				}
			}
			return
		}
		for _, l := range ws.links {
			if !yield(l.ps, l.at) {
				return
			}
		}
	}
}
