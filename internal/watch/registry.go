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
type Registry struct {
	// trigger serialises Trigger calls and guards scratch, which Trigger
	// fills under mu and reads after releasing it.
	trigger sync.Mutex
	scratch []*watcherState

	mu       sync.Mutex
	paths    map[string]*pathState
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

// pathState is one watched path and the watchers on it.
type pathState struct {
	path string
	subs []sub
	// recursive counts the subs holding a recursive watch.
	recursive int32
}

// sub is a path's side of a (path, watcher) pair: the set of watches the
// watcher holds on the path.
type sub struct {
	ws *watcherState
	// at is the pair's position in ws.links while ws is small, unused
	// while ws is indexed.
	at int32
	m  modes
}

// New returns an empty registry.
func New() *Registry {
	return &Registry{
		paths:    make(map[string]*pathState),
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
	ps := r.paths[path]
	if ps == nil {
		ps = &pathState{path: strings.Clone(path)}
		// Key the map with the stored copy, so the path is held once.
		r.paths[ps.path] = ps
	}
	i, ok := ws.find(ps)
	if !ok {
		i = int32(len(ps.subs))
		ps.subs = append(ps.subs, sub{ws: ws, at: ws.add(ps, i)})
	}
	old := ps.subs[i].m
	if old&bit != 0 {
		return false
	}
	r.setModes(ps, i, old|bit)
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
	ps, i, ok := r.find(w, path)
	return ok && ps.subs[i].m&want != 0
}

// Remove removes the watches of type typ that w holds on path, as
// removeWatches does (see Contains for what each type addresses), and
// reports whether any was removed; false means the server answers
// NOWATCHER. An undefined type removes nothing.
func (r *Registry) Remove(w Watcher, path string, typ proto.WatcherType) bool {
	drop := typeModes(typ)
	r.mu.Lock()
	defer r.mu.Unlock()
	ps, i, ok := r.find(w, path)
	if !ok {
		return false
	}
	old := ps.subs[i].m
	if old&drop == 0 {
		return false
	}
	r.setModes(ps, i, old&^drop)
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
	for ps, i := range ws.pairs() {
		r.account(ps, ps.subs[i].m, 0)
		r.unlink(ps, i)
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

// find returns the path state and sub index of w's watches on path.
// r.mu must be held.
func (r *Registry) find(w Watcher, path string) (*pathState, int32, bool) {
	ws := r.watchers[w]
	ps := r.paths[path]
	if ws == nil || ps == nil {
		return nil, 0, false
	}
	i, ok := ws.find(ps)
	return ps, i, ok
}

// setModes replaces the modes of ps.subs[i], keeping the counters right and
// dropping the pair, and then the path and watcher if they become empty,
// when no mode is left. r.mu must be held.
func (r *Registry) setModes(ps *pathState, i int32, m modes) {
	s := &ps.subs[i]
	r.account(ps, s.m, m)
	if m != 0 {
		s.m = m
		return
	}
	r.drop(ps, i)
}

// drop removes the pair ps.subs[i] from both sides, and the path and the
// watcher when they are left empty. r.mu must be held.
func (r *Registry) drop(ps *pathState, i int32) {
	ws := ps.subs[i].ws
	ws.remove(ps, ps.subs[i].at)
	if ws.len() == 0 {
		delete(r.watchers, ws.w)
	}
	r.unlink(ps, i)
}

// account updates the counters for a pair on ps going from modes old to new.
// r.mu must be held.
func (r *Registry) account(ps *pathState, old, new modes) {
	r.dataPairs += b2i(new&dataTable != 0) - b2i(old&dataTable != 0)
	r.childPairs += b2i(new&childTable != 0) - b2i(old&childTable != 0)
	d := b2i(new&modeRecursive != 0) - b2i(old&modeRecursive != 0)
	r.recursive += d
	ps.recursive += int32(d)
}

// unlink removes ps.subs[i] by moving the last entry into its place, and
// drops ps when it becomes empty. It leaves the removed watcher's side
// alone. r.mu must be held.
func (r *Registry) unlink(ps *pathState, i int32) {
	last := int32(len(ps.subs) - 1)
	if i != last {
		moved := ps.subs[last]
		ps.subs[i] = moved
		moved.ws.moved(ps, moved.at, i)
	}
	ps.subs[last] = sub{}
	ps.subs = ps.subs[:last]
	if last == 0 {
		delete(r.paths, ps.path)
		return
	}
	ps.shrink()
}

// shrink gives back the spare capacity of a path whose watchers mostly went
// away (a fan-out path after its one-time watches fired).
func (ps *pathState) shrink() {
	if c := cap(ps.subs); c > 16 && len(ps.subs) < c/4 {
		ps.subs = append(make([]sub, 0, 2*len(ps.subs)), ps.subs...)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
