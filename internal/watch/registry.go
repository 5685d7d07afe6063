package watch

import (
	"strings"
	"sync"

	"github.com/paddockhq/paddock/internal/proto"
)

// Watcher receives watch events. It is implemented by a client connection
// or session and compared by identity (==), so its dynamic type must be
// comparable; a pointer type is the natural choice.
type Watcher interface {
	// Notify delivers one event; zxid is the zxid of the change that fired
	// it. Notify must not block; see the package documentation for what it
	// may call.
	Notify(ev proto.WatcherEvent, zxid int64)
}

// Registry holds the watches of every session connected to this server.
// The zero value is not usable; call New.
//
// A watched path is an entry of paths. While one watcher watches it, the
// entry holds that pair inline; a second watcher moves the pairs to a
// pathSet in sets, and the entry goes back to inline when one is left. Each
// watcher lists its pairs in its links, for RemoveAll and wchc.
type Registry struct {
	// trigger serialises Trigger calls and guards scratch, which Trigger
	// fills under mu and reads after releasing it.
	trigger sync.Mutex
	scratch []*watcherState

	mu    sync.Mutex
	paths pathTable
	// sets holds the pairs of each path with several watchers, by entry id.
	sets     map[int32]*pathSet
	watchers map[Watcher]*watcherState
	// recursive counts (path, watcher) pairs holding a recursive watch; the
	// ancestor walk is skipped while it is zero.
	recursive int
	// dataPairs and childPairs are the sizes of ZooKeeper's two tables.
	dataPairs  int
	childPairs int
	// epoch is bumped by every pass that marks watchers (Trigger, Summary).
	epoch uint64
}

// pair locates one (path, watcher) pair: the path's entry id and, when the
// path has a set s, the pair's position i in s.subs.
type pair struct {
	id int32
	s  *pathSet
	i  int32
}

// New returns an empty registry.
func New() *Registry {
	return &Registry{
		paths:    newPathTable(),
		sets:     make(map[int32]*pathSet),
		watchers: make(map[Watcher]*watcherState),
	}
}

// Add registers a watch of the given kind on path for w and reports whether
// it is new; adding a watch w already holds changes nothing. A watcher may
// hold several kinds on one path (for example a one-time Data watch next to
// a Persistent one); each is kept and consumed according to its own rules.
// Add panics if kind is not one of the Kind constants. The path is stored
// as a copy and is not validated.
func (r *Registry) Add(path string, kind Kind, w Watcher) bool {
	bit := kind.bit()
	r.mu.Lock()
	defer r.mu.Unlock()
	ws := r.watchers[w]
	if ws == nil {
		ws = &watcherState{w: w}
		r.watchers[w] = ws
	}
	h := r.paths.hash(path)
	id, ok := r.paths.lookup(path, h)
	if !ok {
		id = r.paths.insert(strings.Clone(path), h)
		e := r.paths.entry(id)
		e.ws, e.at, e.m = ws, ws.add(link{id: id, at: lone}), bit
		r.account(0, bit)
		return true
	}
	p, ok := r.pairOf(ws, id)
	if !ok {
		p = r.join(ws, p)
	}
	old := r.modesOf(p)
	if old&bit != 0 {
		return false
	}
	r.setModes(p, old|bit)
	return true
}

// Contains reports whether w holds a watch of type typ on path, as
// checkWatches does: Children and Data ask for the one-time watch of that
// table, Persistent and PersistentRecursive for that mode, Any for any watch
// at all. An undefined type matches nothing.
func (r *Registry) Contains(w Watcher, path string, typ proto.WatcherType) bool {
	want := typeModes(typ)
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.find(w, path)
	return ok && r.modesOf(p)&want != 0
}

// Remove removes the watches of type typ that w holds on path, as
// removeWatches does (see Contains for what each type addresses), and
// reports whether any was removed; false means the server answers
// NOWATCHER. An undefined type removes nothing.
func (r *Registry) Remove(w Watcher, path string, typ proto.WatcherType) bool {
	drop := typeModes(typ)
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.find(w, path)
	if !ok {
		return false
	}
	old := r.modesOf(p)
	if old&drop == 0 {
		return false
	}
	r.setModes(p, old&^drop)
	return true
}

// RemoveAll removes every watch w holds, for a session that closed, expired
// or moved to another server.
func (r *Registry) RemoveAll(w Watcher) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ws := r.watchers[w]
	if ws == nil {
		return
	}
	// Removing a pair from its path never changes another link of ws.
	for _, l := range ws.links {
		if l.at == lone {
			r.account(r.paths.entry(l.id).m, 0)
			r.paths.remove(l.id)
			continue
		}
		s := r.sets[l.id]
		s.recursive += r.account(s.subs[l.at].m, 0)
		r.unlinkSub(l.id, s, l.at)
	}
	delete(r.watchers, w)
}

// Count returns the number of watches as mntr's watch_count reports it: the
// (path, watcher) pairs of ZooKeeper's data table plus those of its child
// table, so a Persistent watch counts twice.
func (r *Registry) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dataPairs + r.childPairs
}

// find returns w's pair on path. r.mu must be held.
func (r *Registry) find(w Watcher, path string) (pair, bool) {
	ws := r.watchers[w]
	if ws == nil {
		return pair{}, false
	}
	id, ok := r.paths.lookup(path, r.paths.hash(path))
	if !ok {
		return pair{}, false
	}
	return r.pairOf(ws, id)
}

// pairOf returns ws's pair on the path with entry id. When there is none,
// the pair it returns still has the path's set, if any. r.mu must be held.
func (r *Registry) pairOf(ws *watcherState, id int32) (pair, bool) {
	e := r.paths.entry(id)
	if e.m != modeSet {
		return pair{id: id, i: lone}, e.ws == ws
	}
	s := r.sets[id]
	if len(ws.links) <= smallWatcher {
		for _, l := range ws.links {
			if l.id == id {
				return pair{id: id, s: s, i: l.at}, true
			}
		}
		return pair{id: id, s: s}, false
	}
	i, ok := s.find(r.paths.seed, ws)
	return pair{id: id, s: s, i: i}, ok
}

// join adds a pair with no modes for ws on the watched path of p, the
// missing pair pairOf returned, moving the path's lone pair to a new set.
// r.mu must be held.
func (r *Registry) join(ws *watcherState, p pair) pair {
	id, s := p.id, p.s
	if s == nil {
		e := r.paths.entry(id)
		s = &pathSet{subs: make([]sub, 1, 2)}
		s.subs[0] = sub{ws: e.ws, at: e.at, m: e.m}
		if e.m&modeRecursive != 0 {
			s.recursive = 1
		}
		e.ws.links[e.at].at = 0
		e.ws, e.at, e.m = nil, 0, modeSet
		r.sets[id] = s
	}
	i := int32(len(s.subs))
	return pair{id: id, s: s, i: s.add(r.paths.seed, sub{ws: ws, at: ws.add(link{id: id, at: i})})}
}

// modesOf returns the watches of pair p. r.mu must be held.
func (r *Registry) modesOf(p pair) modes {
	if p.s == nil {
		return r.paths.entry(p.id).m
	}
	return p.s.subs[p.i].m
}

// setModes replaces the modes of pair p, keeping the counters right and
// dropping the pair, and then the path and watcher if they become empty,
// when no mode is left. r.mu must be held.
func (r *Registry) setModes(p pair, m modes) {
	if p.s == nil {
		e := r.paths.entry(p.id)
		r.account(e.m, m)
		if m != 0 {
			e.m = m
			return
		}
		r.unlinkWatcher(e.ws, e.at)
		r.paths.remove(p.id)
		return
	}
	x := &p.s.subs[p.i]
	p.s.recursive += r.account(x.m, m)
	if m != 0 {
		x.m = m
		return
	}
	r.unlinkWatcher(x.ws, x.at)
	r.unlinkSub(p.id, p.s, p.i)
}

// account updates the counters for a pair going from modes old to new and
// returns the change in recursive pairs, for the path's set. r.mu must be
// held.
func (r *Registry) account(old, new modes) int32 {
	r.dataPairs += b2i(new&dataTable != 0) - b2i(old&dataTable != 0)
	r.childPairs += b2i(new&childTable != 0) - b2i(old&childTable != 0)
	d := b2i(new&modeRecursive != 0) - b2i(old&modeRecursive != 0)
	r.recursive += d
	return int32(d)
}

// unlinkWatcher removes ws.links[at] by moving the last link into its
// place, and drops ws when it is left with no pair. It leaves the pair's
// path side alone. r.mu must be held.
func (r *Registry) unlinkWatcher(ws *watcherState, at int32) {
	last := int32(len(ws.links) - 1)
	if at != last {
		l := ws.links[last]
		ws.links[at] = l
		if l.at == lone {
			r.paths.entry(l.id).at = at
		} else {
			r.sets[l.id].subs[l.at].at = at
		}
	}
	ws.links[last] = link{}
	ws.links = ws.links[:last]
	if last == 0 {
		delete(r.watchers, ws.w)
		return
	}
	ws.shrink()
}

// unlinkSub removes s.subs[i] from the set of the path with entry id, by
// moving the last sub into its place, and then settles the set. It leaves
// the removed pair's watcher side alone. r.mu must be held.
func (r *Registry) unlinkSub(id int32, s *pathSet, i int32) {
	if moved := s.remove(r.paths.seed, i); moved != nil {
		moved.ws.links[moved.at].at = i
	}
	r.settle(id, s)
}

// settle brings the path with entry id and set s back to its compact form
// after pairs left the set: the path is dropped when no pair is left and
// its last pair goes back into the entry when one is. r.mu must be held.
func (r *Registry) settle(id int32, s *pathSet) {
	switch len(s.subs) {
	case 0:
		delete(r.sets, id)
		r.paths.remove(id)
	case 1:
		x := s.subs[0]
		e := r.paths.entry(id)
		e.ws, e.at, e.m = x.ws, x.at, x.m
		x.ws.links[x.at].at = lone
		delete(r.sets, id)
	default:
		s.shrink(r.paths.seed)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// linkPair returns the pair that link l of some watcher stands for. r.mu
// must be held.
func (r *Registry) linkPair(l link) pair {
	if l.at == lone {
		return pair{id: l.id, i: lone}
	}
	return pair{id: l.id, s: r.sets[l.id], i: l.at}
}
