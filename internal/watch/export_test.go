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
	p, ok := r.find(w, path)
	if !ok {
		return nil
	}
	m := r.modesOf(p)
	var ks []Kind
	for k := Data; k <= PersistentRecursive; k++ {
		if m&k.bit() != 0 {
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
	for id, e := range r.paths.all() {
		if e.m != modeSet {
			pairs = append(pairs, pair{e.ws.w, e.path})
			continue
		}
		for _, x := range r.sets[id].subs {
			pairs = append(pairs, pair{x.ws.w, e.path})
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

// forms returns the number of paths held inline (one watcher), in a set,
// and in a set with an index.
func (r *Registry) forms() (lone, sets, indexed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, e := range r.paths.all() {
		if e.m != modeSet {
			lone++
			continue
		}
		sets++
		if r.sets[id].index != nil {
			indexed++
		}
	}
	return lone, sets, indexed
}

// recursiveCount returns the number of pairs holding a recursive watch.
func (r *Registry) recursiveCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.recursive
}

// check verifies that the path table, the sets and the watchers' links
// agree with each other and with the counters.
func (r *Registry) check() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.paths.check(); err != nil {
		return err
	}
	var data, child, rec, pairs, sets int
	// pairCheck checks one pair of ws on the path with entry id, whose
	// watcher-side link is at position at and should read want.
	pairCheck := func(path string, ws *watcherState, at int32, want link, m modes) error {
		if m == 0 || m&^modeAll != 0 {
			return fmt.Errorf("path %q: pair with modes %#x", path, m)
		}
		if r.watchers[ws.w] != ws {
			return fmt.Errorf("path %q: watcher not in the watcher index", path)
		}
		if at < 0 || int(at) >= len(ws.links) || ws.links[at] != want {
			return fmt.Errorf("path %q: watcher's link %d does not point back to %v", path, at, want)
		}
		data += b2i(m&dataTable != 0)
		child += b2i(m&childTable != 0)
		rec += b2i(m&modeRecursive != 0)
		pairs++
		return nil
	}
	for id, e := range r.paths.all() {
		if e.m != modeSet {
			if r.sets[id] != nil {
				return fmt.Errorf("path %q has a lone watcher and a set", e.path)
			}
			if e.ws == nil {
				return fmt.Errorf("path %q has no watcher", e.path)
			}
			if err := pairCheck(e.path, e.ws, e.at, link{id, lone}, e.m); err != nil {
				return err
			}
			continue
		}
		sets++
		s := r.sets[id]
		if s == nil || e.ws != nil {
			return fmt.Errorf("path %q: set %v, lone watcher %v", e.path, s != nil, e.ws != nil)
		}
		if len(s.subs) < 2 {
			return fmt.Errorf("path %q kept in a set of %d watchers", e.path, len(s.subs))
		}
		if s.index != nil && (len(s.subs)*4 > len(s.index)*3 || len(s.subs) <= smallSet/2) {
			return fmt.Errorf("path %q with %d watchers: index of %d slots", e.path, len(s.subs), len(s.index))
		}
		if s.index != nil {
			n := 0
			for _, v := range s.index {
				if v != 0 {
					n++
				}
			}
			if n != len(s.subs) {
				return fmt.Errorf("path %q with %d watchers: index holds %d", e.path, len(s.subs), n)
			}
		}
		seen := make(map[*watcherState]bool)
		prec := int32(0)
		for i, x := range s.subs {
			if seen[x.ws] {
				return fmt.Errorf("path %q lists a watcher twice", e.path)
			}
			seen[x.ws] = true
			if j, ok := s.find(r.paths.seed, x.ws); !ok || j != int32(i) {
				return fmt.Errorf("path %q entry %d: set finds it at %d, %v", e.path, i, j, ok)
			}
			if err := pairCheck(e.path, x.ws, x.at, link{id, int32(i)}, x.m); err != nil {
				return err
			}
			if x.m&modeRecursive != 0 {
				prec++
			}
		}
		if prec != s.recursive {
			return fmt.Errorf("path %q: recursive count %d, want %d", e.path, s.recursive, prec)
		}
	}
	if sets != len(r.sets) {
		return fmt.Errorf("%d sets for %d paths with a set", len(r.sets), sets)
	}
	back := 0
	for w, ws := range r.watchers {
		if ws.w != w {
			return fmt.Errorf("watcher stored under another key")
		}
		if len(ws.links) == 0 {
			return fmt.Errorf("watcher kept with no paths")
		}
		back += len(ws.links)
	}
	if back != pairs {
		return fmt.Errorf("watchers hold %d links, paths %d pairs", back, pairs)
	}
	if data != r.dataPairs || child != r.childPairs || rec != r.recursive {
		return fmt.Errorf("counters data=%d child=%d recursive=%d, recomputed %d %d %d",
			r.dataPairs, r.childPairs, r.recursive, data, child, rec)
	}
	return nil
}

// check verifies the hash index against the entries and the free list.
func (t *pathTable) check() error {
	if t.dir == nil {
		if t.n != 0 {
			return fmt.Errorf("%d paths and no index", t.n)
		}
	} else if len(t.dir) != 1<<t.depth {
		return fmt.Errorf("directory of depth %d has %d places", t.depth, len(t.dir))
	}
	used := 0
	for c, chunk := range t.chunks {
		if len(chunk) > chunkSize || c < len(t.chunks)-1 && len(chunk) != chunkSize {
			return fmt.Errorf("chunk %d of %d holds %d entries", c, len(t.chunks), len(chunk))
		}
		used += len(chunk)
	}
	if used != int(t.used) {
		return fmt.Errorf("%d ids handed out, chunks hold %d", t.used, used)
	}
	free := 0
	for id := t.free; id >= 0; id = t.entry(id).at {
		if e := t.entry(id); e.m != 0 || e.ws != nil || e.path != "" {
			return fmt.Errorf("free id %d holds %q", id, e.path)
		}
		if free++; free > used {
			return fmt.Errorf("free list loops")
		}
	}
	live := 0
	for id, e := range t.all() {
		live++
		got, ok := t.lookup(e.path, t.hash(e.path))
		if !ok || got != id {
			return fmt.Errorf("path %q at id %d: lookup gives %d, %v", e.path, id, got, ok)
		}
	}
	if live != t.n || live+free != used {
		return fmt.Errorf("%d live and %d free entries of %d, n=%d", live, free, used, t.n)
	}
	slots := 0
	for i := 0; i < len(t.dir); {
		sg := t.dir[i]
		span := 1 << (t.depth - sg.depth)
		if sg.depth > t.depth || i%span != 0 {
			return fmt.Errorf("segment of depth %d at place %d of a directory of depth %d", sg.depth, i, t.depth)
		}
		for j := i; j < i+span; j++ {
			if t.dir[j] != sg {
				return fmt.Errorf("places %d and %d of the directory hold different segments", i, j)
			}
		}
		i += span
		n := len(sg.slots)
		if n < minSlots || n&(n-1) != 0 || sg.n*4 > n*3 {
			return fmt.Errorf("segment with %d paths in %d slots", sg.n, n)
		}
		inSeg := 0
		for _, s := range sg.slots {
			if s == 0 {
				continue
			}
			inSeg++
			e := t.entry(int32(uint32(s)) - 1)
			if e.m == 0 || t.hash(e.path) != uint32(s>>32) {
				return fmt.Errorf("slot %#x points at a free entry or has the wrong hash", s)
			}
			if t.segment(uint32(s>>32)) != sg {
				return fmt.Errorf("slot for %q in the wrong segment", e.path)
			}
		}
		if inSeg != sg.n {
			return fmt.Errorf("segment counts %d paths and holds %d", sg.n, inSeg)
		}
		slots += inSeg
	}
	if slots != t.n {
		return fmt.Errorf("%d slots used for %d paths", slots, t.n)
	}
	return nil
}
