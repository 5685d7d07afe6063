package zk

import (
	"reflect"

	"github.com/paddockhq/paddock/internal/proto"
)

// WatcherType selects watches in RemoveWatches and CheckWatches.
type WatcherType int32

// Watcher types.
const (
	WatcherChildren            = WatcherType(proto.WatcherChildren)
	WatcherData                = WatcherType(proto.WatcherData)
	WatcherAny                 = WatcherType(proto.WatcherAny)
	WatcherPersistent          = WatcherType(proto.WatcherPersistent)
	WatcherPersistentRecursive = WatcherType(proto.WatcherPersistentRecursive)
)

// AddWatchMode is the kind of watch AddWatch sets.
type AddWatchMode int32

// AddWatch modes.
const (
	// AddWatchPersistent stays after it fires and reports data, children,
	// creation and deletion events of the znode.
	AddWatchPersistent = AddWatchMode(proto.AddWatchPersistent)
	// AddWatchPersistentRecursive stays after it fires and reports data,
	// creation and deletion events of the znode and of every descendant
	// (no children events).
	AddWatchPersistentRecursive = AddWatchMode(proto.AddWatchPersistentRecursive)
)

// watchKind is one of the client's watch tables, as ZooKeeper's
// ZKWatchManager keeps them.
type watchKind uint8

const (
	watchNone watchKind = iota
	watchData
	watchExist
	watchChild
	watchPersistent
	watchRecursive
	numWatchKinds
)

// registry holds the client's watchers by kind and client path. The Conn
// guards it with its mutex.
type registry struct {
	kinds [numWatchKinds]map[string][]Watcher
}

// comparableWatcher reports whether w can be compared with == without a
// panic; other watchers (WatcherFunc values, and values of a comparable
// type that hold one, such as a struct with a Watcher field) are never
// merged. The value is checked, not only its type: == on a struct or array
// compares the dynamic values of its interface fields, and panics on those
// that are not comparable.
func comparableWatcher(w Watcher) bool {
	return reflect.ValueOf(w).Comparable()
}

func containsWatcher(ws []Watcher, w Watcher) bool {
	if !comparableWatcher(w) {
		return false
	}
	for _, x := range ws {
		if comparableWatcher(x) && x == w {
			return true
		}
	}
	return false
}

func (r *registry) add(k watchKind, path string, w Watcher) {
	m := r.kinds[k]
	if m == nil {
		m = make(map[string][]Watcher)
		r.kinds[k] = m
	}
	ws := m[path]
	if containsWatcher(ws, w) {
		return
	}
	m[path] = append(ws, w)
}

// empty reports whether no watch is registered.
func (r *registry) empty() bool {
	for _, m := range r.kinds {
		if len(m) > 0 {
			return false
		}
	}
	return true
}

// has reports whether a watcher of kind k on path exists (w nil: any).
func (r *registry) has(k watchKind, path string, w Watcher) bool {
	ws := r.kinds[k][path]
	if w == nil {
		return len(ws) > 0
	}
	for _, x := range ws {
		if sameWatcher(x, w) {
			return true
		}
	}
	return false
}

func sameWatcher(a, b Watcher) bool {
	return comparableWatcher(a) && comparableWatcher(b) && a == b
}

// appendUnique appends the watchers of ws not already in out.
func appendUnique(out, ws []Watcher) []Watcher {
	for _, w := range ws {
		if !containsWatcher(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// trigger returns the watchers an event of type t on path goes to, removing
// one-time watches, as ZKWatchManager.materialize does.
func (r *registry) trigger(t EventType, path string) []Watcher {
	var out []Watcher
	take := func(k watchKind) {
		if ws, ok := r.kinds[k][path]; ok {
			out = appendUnique(out, ws)
			delete(r.kinds[k], path)
		}
	}
	switch t {
	case EventNodeCreated, EventNodeDataChanged:
		take(watchData)
		take(watchExist)
	case EventNodeChildrenChanged:
		take(watchChild)
	case EventNodeDeleted:
		take(watchData)
		take(watchExist)
		take(watchChild)
	default:
		return nil
	}
	out = appendUnique(out, r.kinds[watchPersistent][path])
	// Persistent recursive watches get no children events, even when the
	// server sends one for a one-time child watch on a descendant.
	if t != EventNodeChildrenChanged && len(r.kinds[watchRecursive]) > 0 {
		for p := path; ; p = parentPath(p) {
			out = appendUnique(out, r.kinds[watchRecursive][p])
			if p == "/" {
				break
			}
		}
	}
	return out
}

// parentPath returns the parent of an absolute path ("/" for "/").
func parentPath(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return "/"
}

// all returns every registered watcher once.
func (r *registry) all() []Watcher {
	var out []Watcher
	for _, m := range r.kinds {
		for _, ws := range m {
			out = appendUnique(out, ws)
		}
	}
	return out
}

func (r *registry) clear() {
	for i := range r.kinds {
		r.kinds[i] = nil
	}
}

// removed is a watcher taken out by RemoveWatches and the event it gets.
type removed struct {
	w Watcher
	t EventType
}

// kindsOf maps a WatcherType to the tables it covers and the event the
// removed watchers receive.
func kindsOf(t WatcherType) []struct {
	k  watchKind
	ev EventType
} {
	type ke = struct {
		k  watchKind
		ev EventType
	}
	switch t {
	case WatcherChildren:
		return []ke{{watchChild, EventChildWatchRemoved}}
	case WatcherData:
		return []ke{{watchData, EventDataWatchRemoved}, {watchExist, EventDataWatchRemoved}}
	case WatcherPersistent:
		return []ke{{watchPersistent, EventPersistentWatchRemoved}}
	case WatcherPersistentRecursive:
		return []ke{{watchRecursive, EventPersistentWatchRemoved}}
	case WatcherAny:
		return []ke{
			{watchChild, EventChildWatchRemoved},
			{watchData, EventDataWatchRemoved}, {watchExist, EventDataWatchRemoved},
			{watchPersistent, EventPersistentWatchRemoved}, {watchRecursive, EventPersistentWatchRemoved},
		}
	}
	return nil
}

// hasAny reports whether RemoveWatches(path, w, t) would remove something.
func (r *registry) hasAny(path string, w Watcher, t WatcherType) bool {
	for _, ke := range kindsOf(t) {
		if r.has(ke.k, path, w) {
			return true
		}
	}
	return false
}

// onlyWatcher reports whether removing w's watches of type t leaves no
// watcher of any kind on path.
func (r *registry) onlyWatcher(path string, w Watcher, t WatcherType) bool {
	for k := watchData; k < numWatchKinds; k++ {
		covered := false
		for _, ke := range kindsOf(t) {
			covered = covered || ke.k == k
		}
		for _, x := range r.kinds[k][path] {
			if !covered || !sameWatcher(x, w) {
				return false
			}
		}
	}
	return true
}

// remove takes out the watchers RemoveWatches(path, w, t) names (w nil: all
// of them) and returns them with the events they get. A watcher gets each
// event once, as ZKWatchManager's sets of removed watchers give it: one
// DataWatchRemoved for a data and an exist watch, one
// PersistentWatchRemoved for a persistent and a recursive one (watchers that
// are not comparable, such as WatcherFunc values, once per registration).
func (r *registry) remove(path string, w Watcher, t WatcherType) []removed {
	var out []removed
	seen := func(x Watcher, ev EventType) bool {
		for _, o := range out {
			if o.t == ev && sameWatcher(o.w, x) {
				return true
			}
		}
		return false
	}
	for _, ke := range kindsOf(t) {
		m := r.kinds[ke.k]
		ws := m[path]
		if len(ws) == 0 {
			continue
		}
		keep := ws[:0:0]
		for _, x := range ws {
			if w == nil || sameWatcher(x, w) {
				if !seen(x, ke.ev) {
					out = append(out, removed{x, ke.ev})
				}
			} else {
				keep = append(keep, x)
			}
		}
		if len(keep) == 0 {
			delete(m, path)
		} else {
			m[path] = keep
		}
	}
	return out
}

// setWatchesMaxBytes bounds the path bytes of one setWatches request, as
// ZooKeeper's client does (SET_WATCHES_MAX_LENGTH).
const setWatchesMaxBytes = 128 * 1024

// setWatches builds the requests that re-register every watch after a
// reconnect, batched as ZooKeeper's client batches them: paths taken in the
// order data, exist, child, persistent, persistent-recursive, at most
// setWatchesMaxBytes of path bytes per request, each request a setWatches2
// if it holds persistent watches and a setWatches otherwise.
func (r *registry) setWatches(relZxid int64, root chroot) []proto.Request {
	var out []proto.Request
	var cur proto.SetWatches2
	size := 0
	flush := func() {
		if size == 0 {
			return
		}
		// Empty lists, never null: ZooKeeper's server reads a null
		// vector as a null list and fails on it.
		data, exist, child := nonNil(cur.DataWatches), nonNil(cur.ExistWatches), nonNil(cur.ChildWatches)
		if len(cur.PersistentWatches) > 0 || len(cur.PersistentRecursiveWatches) > 0 {
			out = append(out, &proto.SetWatches2{
				RelativeZxid: relZxid, DataWatches: data, ExistWatches: exist, ChildWatches: child,
				PersistentWatches:          nonNil(cur.PersistentWatches),
				PersistentRecursiveWatches: nonNil(cur.PersistentRecursiveWatches),
			})
		} else {
			out = append(out, &proto.SetWatches{
				RelativeZxid: relZxid, DataWatches: data, ExistWatches: exist, ChildWatches: child,
			})
		}
		cur = proto.SetWatches2{}
		size = 0
	}
	for k := watchData; k < numWatchKinds; k++ {
		for p, ws := range r.kinds[k] {
			if len(ws) == 0 {
				continue
			}
			sp := root.server(p)
			if size > 0 && size+len(sp) > setWatchesMaxBytes {
				flush()
			}
			switch k {
			case watchData:
				cur.DataWatches = append(cur.DataWatches, sp)
			case watchExist:
				cur.ExistWatches = append(cur.ExistWatches, sp)
			case watchChild:
				cur.ChildWatches = append(cur.ChildWatches, sp)
			case watchPersistent:
				cur.PersistentWatches = append(cur.PersistentWatches, sp)
			case watchRecursive:
				cur.PersistentRecursiveWatches = append(cur.PersistentRecursiveWatches, sp)
			}
			size += len(sp)
		}
	}
	flush()
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
