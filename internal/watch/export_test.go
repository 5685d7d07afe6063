package watch

import (
	"fmt"
	"slices"
	"strings"
)

// kindsOf returns the kinds w holds on path, in Kind order.
func (r *Registry) kindsOf(w Watcher, path string) []Kind {
	r.mu.Lock()
	defer r.mu.Unlock()
	ps, i, ok := r.find(w, path)
	if !ok {
		return nil
	}
	var ks []Kind
	for k := Data; k <= PersistentRecursive; k++ {
		if ps.subs[i].m&k.bit() != 0 {
			ks = append(ks, k)
		}
	}
	return ks
}

// dump lists every watch as "name path kind,kind…", sorted; name maps a
// watcher to a label.
func (r *Registry) dump(name func(Watcher) string) []string {
	r.mu.Lock()
	var out []string
	type pair struct {
		w    Watcher
		path string
	}
	var pairs []pair
	for _, ps := range r.paths {
		for _, s := range ps.subs {
			pairs = append(pairs, pair{s.ws.w, ps.path})
		}
	}
	r.mu.Unlock()
	for _, p := range pairs {
		var ks []string
		for _, k := range r.kindsOf(p.w, p.path) {
			ks = append(ks, k.String())
		}
		out = append(out, name(p.w)+" "+p.path+" "+strings.Join(ks, ","))
	}
	slices.Sort(out)
	return out
}

// recursiveCount returns the number of pairs holding a recursive watch.
func (r *Registry) recursiveCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.recursive
}

// check verifies that the two indices agree with each other and with the
// counters.
func (r *Registry) check() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var data, child, rec, pairs int
	for key, ps := range r.paths {
		if ps.path != key {
			return fmt.Errorf("path %q stored under key %q", ps.path, key)
		}
		if len(ps.subs) == 0 {
			return fmt.Errorf("path %q kept with no watchers", key)
		}
		seen := make(map[*watcherState]bool)
		prec := int32(0)
		for i, s := range ps.subs {
			if s.m == 0 || s.m&^modeAll != 0 {
				return fmt.Errorf("path %q entry %d has modes %#x", key, i, s.m)
			}
			if seen[s.ws] {
				return fmt.Errorf("path %q lists a watcher twice", key)
			}
			seen[s.ws] = true
			if r.watchers[s.ws.w] != s.ws {
				return fmt.Errorf("path %q entry %d: watcher not in the watcher index", key, i)
			}
			if j, ok := s.ws.find(ps); !ok || j != int32(i) {
				return fmt.Errorf("path %q entry %d: watcher finds it at %d, %v", key, i, j, ok)
			}
			if s.ws.index == nil && (int(s.at) >= len(s.ws.links) || s.ws.links[s.at] != (link{ps, int32(i)})) {
				return fmt.Errorf("path %q entry %d: watcher's link %d does not point back", key, i, s.at)
			}
			data += b2i(s.m&dataTable != 0)
			child += b2i(s.m&childTable != 0)
			if s.m&modeRecursive != 0 {
				rec++
				prec++
			}
		}
		if prec != ps.recursive {
			return fmt.Errorf("path %q: recursive count %d, want %d", key, ps.recursive, prec)
		}
		pairs += len(ps.subs)
	}
	back := 0
	for w, ws := range r.watchers {
		if ws.w != w {
			return fmt.Errorf("watcher stored under another key")
		}
		n := ws.len()
		if n == 0 {
			return fmt.Errorf("watcher kept with no paths")
		}
		if ws.index != nil && (ws.links != nil || n <= smallWatcher/2) || ws.index == nil && n > smallWatcher {
			return fmt.Errorf("watcher with %d paths: index %v, links %v", n, ws.index != nil, ws.links != nil)
		}
		for ps, i := range ws.pairs() {
			if r.paths[ps.path] != ps {
				return fmt.Errorf("watcher points at dropped path %q", ps.path)
			}
			if int(i) >= len(ps.subs) || ps.subs[i].ws != ws {
				return fmt.Errorf("watcher's pair on %q at %d does not point back", ps.path, i)
			}
		}
		back += n
	}
	if back != pairs {
		return fmt.Errorf("watcher index holds %d pairs, path index %d", back, pairs)
	}
	if data != r.dataPairs || child != r.childPairs || rec != r.recursive {
		return fmt.Errorf("counters data=%d child=%d recursive=%d, recomputed %d %d %d",
			r.dataPairs, r.childPairs, r.recursive, data, child, rec)
	}
	return nil
}
