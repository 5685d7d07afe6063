package watch

import (
	"slices"
	"strings"
)

// Summary returns what wchs reports: the number of watchers, the number of
// watched paths and the number of (path, watcher) pairs, counted over
// ZooKeeper's data table only (Data, Persistent and PersistentRecursive
// watches; a path watched only by Child watches is not counted), as
// ZooKeeper's DataTree.dumpWatchesSummary and getWatchesSummary do.
// It takes time proportional to the number of watches.
func (r *Registry) Summary() (watchers, paths, total int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.epoch++
	count := func(ws *watcherState) {
		if ws.mark != r.epoch {
			ws.mark = r.epoch
			watchers++
		}
	}
	for id, e := range r.paths.all() {
		if e.m != modeSet {
			if e.m&dataTable != 0 {
				count(e.ws)
				paths++
			}
			continue
		}
		inTable := false
		for _, x := range r.sets[id].subs {
			if x.m&dataTable != 0 {
				count(x.ws)
				inTable = true
			}
		}
		if inTable {
			paths++
		}
	}
	return watchers, paths, r.dataPairs
}

// ByWatcher calls fn once for every watcher with the sorted paths it watches,
// for wchc and the watches admin command; like Summary it covers the data
// table only. The caller maps each watcher to its session id. Watchers come
// in no particular order. fn runs after the registry's lock is released, on
// a snapshot taken before the first call, and may call the registry.
func (r *Registry) ByWatcher(fn func(w Watcher, paths []string)) {
	type entry struct {
		w     Watcher
		paths []string
	}
	r.mu.Lock()
	snap := make([]entry, 0, len(r.watchers))
	for _, ws := range r.watchers {
		var paths []string
		for _, l := range ws.links {
			if r.modesOf(r.linkPair(l))&dataTable != 0 {
				paths = append(paths, r.paths.entry(l.id).path)
			}
		}
		if len(paths) > 0 {
			snap = append(snap, entry{ws.w, paths})
		}
	}
	r.mu.Unlock()
	for _, e := range snap {
		slices.Sort(e.paths)
		fn(e.w, e.paths)
	}
}

// ByPath calls fn once for every watched path, in sorted order, with the
// watchers on it, for wchp and the watches_by_path admin command; like
// Summary it covers the data table only. Watchers on a path come in no
// particular order. fn runs after the registry's lock is released, on a
// snapshot taken before the first call, and may call the registry.
func (r *Registry) ByPath(fn func(path string, ws []Watcher)) {
	type entry struct {
		path string
		ws   []Watcher
	}
	r.mu.Lock()
	snap := make([]entry, 0, r.paths.n)
	for id, e := range r.paths.all() {
		if e.m != modeSet {
			if e.m&dataTable != 0 {
				snap = append(snap, entry{e.path, []Watcher{e.ws.w}})
			}
			continue
		}
		var ws []Watcher
		for _, x := range r.sets[id].subs {
			if x.m&dataTable != 0 {
				ws = append(ws, x.ws.w)
			}
		}
		if len(ws) > 0 {
			snap = append(snap, entry{e.path, ws})
		}
	}
	r.mu.Unlock()
	slices.SortFunc(snap, func(a, b entry) int { return strings.Compare(a.path, b.path) })
	for _, e := range snap {
		fn(e.path, e.ws)
	}
}
