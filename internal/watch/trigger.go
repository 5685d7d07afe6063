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
	if ps := r.paths[path]; ps != nil {
		fired = r.fireExact(ps, fire, consume, fired)
	}
	if ancestors && r.recursive > 0 {
		for p := parent(path); p != ""; p = parent(p) {
			if ps := r.paths[p]; ps != nil && ps.recursive > 0 {
				fired = r.fireRecursive(ps, fired)
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

// fireExact appends to fired the watchers on ps holding any of the modes in
// fire, removes the modes in consume from every entry, and drops the entries
// left empty. r.mu must be held.
func (r *Registry) fireExact(ps *pathState, fire, consume modes, fired []*watcherState) []*watcherState {
	kept := int32(0)
	for i := range ps.subs {
		s := ps.subs[i]
		if s.m&fire != 0 && s.ws.mark != r.epoch {
			s.ws.mark = r.epoch
			fired = append(fired, s.ws)
		}
		if m := s.m &^ consume; m != s.m {
			r.account(ps, s.m, m)
			s.m = m
		}
		if s.m == 0 {
			s.ws.remove(ps, s.at)
			if s.ws.len() == 0 {
				delete(r.watchers, s.ws.w)
			}
			continue
		}
		if kept != int32(i) {
			s.ws.moved(ps, s.at, kept)
		}
		ps.subs[kept] = s
		kept++
	}
	clear(ps.subs[kept:])
	ps.subs = ps.subs[:kept]
	if kept == 0 {
		delete(r.paths, ps.path)
	} else {
		ps.shrink()
	}
	return fired
}

// fireRecursive appends to fired the watchers holding a recursive watch on
// ps, an ancestor of the changed node. r.mu must be held.
func (r *Registry) fireRecursive(ps *pathState, fired []*watcherState) []*watcherState {
	for _, s := range ps.subs {
		if s.m&modeRecursive != 0 && s.ws.mark != r.epoch {
			s.ws.mark = r.epoch
			fired = append(fired, s.ws)
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
