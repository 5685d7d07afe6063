package watch

import (
	"fmt"

	"github.com/paddockhq/paddock/internal/proto"
)

// Trigger fires the watches for one change of the data tree: typ is
// NodeCreated, NodeDeleted or NodeDataChanged for the node at path, or
// NodeChildrenChanged for the parent at path; zxid is the change's zxid and
// is passed to Notify. It consumes the one-time watches that fire and calls
// Notify at most once per watcher, with the event's path set to path.
//
// allowed reports whether a watcher may see this event: READ permission,
// checked by the caller against the ACL of the node at path (the deleted
// node's ACL for NodeDeleted, the parent's for NodeChildrenChanged, as
// ZooKeeper's DataTree passes them); nil allows all. As
// in ZooKeeper, a watcher that is not allowed gets no event but its
// one-time watches are consumed all the same.
//
// Trigger returns the number of watchers notified. It panics for any other
// event type, which is a programming error in the caller. See the package
// documentation for the locking contract.
func (r *Registry) Trigger(typ proto.EventType, path string, zxid int64, allowed func(Watcher) bool) int {
	fire, consume, ancestors, ok := eventModes(typ)
	if !ok {
		panic(fmt.Sprintf("watch: Trigger on %q: event type %d is not a data tree change", path, int32(typ)))
	}
	r.trigger.Lock()
	defer r.trigger.Unlock()

	r.mu.Lock()
	r.epoch++
	fired := r.scratch[:0]
	if id, ok := r.paths.lookup(path, r.paths.hash(path)); ok {
		fired = r.fireExact(id, fire, consume, fired)
	}
	if ancestors && r.recursive > 0 {
		for p := parent(path); p != ""; p = parent(p) {
			if id, ok := r.paths.lookup(p, r.paths.hash(p)); ok {
				fired = r.fireRecursive(id, fired)
			}
		}
	}
	r.mu.Unlock()

	n := 0
	ev := proto.WatcherEvent{Type: typ, State: proto.StateSyncConnected, Path: path}
	for _, ws := range fired {
		if allowed == nil || allowed(ws.w) {
			ws.w.Notify(ev, zxid)
			n++
		}
	}
	clear(fired)
	if cap(fired) <= maxScratch {
		r.scratch = fired[:0]
	} else {
		r.scratch = nil
	}
	return n
}

// maxScratch bounds the buffer of fired watchers kept between Trigger
// calls, so one huge fan-out does not pin its memory forever.
const maxScratch = 1 << 16

// fireExact appends to fired the watchers on the path with entry id holding
// any of the modes in fire, removes the modes in consume from every pair,
// and drops the pairs left empty. r.mu must be held.
func (r *Registry) fireExact(id int32, fire, consume modes, fired []*watcherState) []*watcherState {
	e := r.paths.entry(id)
	if e.m != modeSet {
		if e.m&fire != 0 && e.ws.mark != r.epoch {
			e.ws.mark = r.epoch
			fired = append(fired, e.ws)
		}
		if m := e.m &^ consume; m != e.m {
			r.setModes(pair{id: id, i: lone}, m)
		}
		return fired
	}
	s := r.sets[id]
	kept := int32(0)
	for i := range s.subs {
		x := s.subs[i]
		if x.m&fire != 0 && x.ws.mark != r.epoch {
			x.ws.mark = r.epoch
			fired = append(fired, x.ws)
		}
		if m := x.m &^ consume; m != x.m {
			s.recursive += r.account(x.m, m)
			x.m = m
		}
		if x.m == 0 {
			// The watcher's other links are on other paths, so this
			// never touches s.
			r.unlinkWatcher(x.ws, x.at)
			continue
		}
		if kept != int32(i) {
			x.ws.links[x.at].at = kept
		}
		s.subs[kept] = x
		kept++
	}
	if int(kept) < len(s.subs) {
		clear(s.subs[kept:])
		s.subs = s.subs[:kept]
		if s.index != nil && kept > 1 {
			s.reindex(r.paths.seed)
		}
	}
	r.settle(id, s)
	return fired
}

// fireRecursive appends to fired the watchers holding a recursive watch on
// the path with entry id, an ancestor of the changed node. r.mu must be
// held.
func (r *Registry) fireRecursive(id int32, fired []*watcherState) []*watcherState {
	e := r.paths.entry(id)
	if e.m != modeSet {
		if e.m&modeRecursive != 0 && e.ws.mark != r.epoch {
			e.ws.mark = r.epoch
			fired = append(fired, e.ws)
		}
		return fired
	}
	s := r.sets[id]
	if s.recursive == 0 {
		return fired
	}
	for _, x := range s.subs {
		if x.m&modeRecursive != 0 && x.ws.mark != r.epoch {
			x.ws.mark = r.epoch
			fired = append(fired, x.ws)
		}
	}
	return fired
}

// parent returns the parent of an absolute path, "/" for a child of the
// root, and "" for the root or a path without a slash, which ends the
// ancestor walk (ZooKeeper's PathParentIterator).
func parent(p string) string {
	if p == "/" {
		return ""
	}
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			if i == 0 {
				return "/"
			}
			return p[:i]
		}
	}
	return ""
}
