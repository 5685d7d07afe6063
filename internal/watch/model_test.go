package watch

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// zkModel is a direct transcription of ZooKeeper 3.9's DataTree watch
// handling: two WatchManager tables (data and child) mapping path →
// watcher → WatchStats flags, triggerWatch with PathParentIterator and the
// suppress set, and DataTree.removeWatch/containsWatcher. It is slow and
// obviously right, and the registry is checked against it.
type zkModel struct {
	data, child map[string]map[*recorder]uint8
}

// WatcherMode flags as in WatchStats.
const (
	zkStandard  = 1
	zkPersist   = 2
	zkRecursive = 4
)

func newZKModel() *zkModel {
	return &zkModel{data: map[string]map[*recorder]uint8{}, child: map[string]map[*recorder]uint8{}}
}

func zkAdd(t map[string]map[*recorder]uint8, path string, w *recorder, mode uint8) {
	if t[path] == nil {
		t[path] = map[*recorder]uint8{}
	}
	t[path][w] |= mode
}

// zkRemove is WatchManager.removeWatcher(path, watcher, mode); mode 0 means
// null (every mode).
func zkRemove(t map[string]map[*recorder]uint8, path string, w *recorder, mode uint8) bool {
	old, ok := t[path][w]
	if !ok {
		return false
	}
	if mode == 0 {
		mode = zkStandard | zkPersist | zkRecursive
	}
	nw := old &^ mode
	if nw == 0 {
		delete(t[path], w)
		if len(t[path]) == 0 {
			delete(t, path)
		}
	} else {
		t[path][w] = nw
	}
	return nw != old
}

func zkContains(t map[string]map[*recorder]uint8, path string, w *recorder, mode uint8) bool {
	m, ok := t[path][w]
	return ok && (mode == 0 || m&mode != 0)
}

// zkTrigger is WatchManager.triggerWatch: it returns the watchers selected,
// whether or not they were suppressed.
func zkTrigger(t map[string]map[*recorder]uint8, path string) map[*recorder]bool {
	recursive := false
	for _, ws := range t {
		for _, m := range ws {
			recursive = recursive || m&zkRecursive != 0
		}
	}
	out := map[*recorder]bool{}
	for level, p := 0, path; p != ""; level, p = level+1, parent(p) {
		if level > 0 && !recursive {
			break
		}
		for w, m := range t[p] {
			if level == 0 {
				out[w] = true
				if nw := m &^ zkStandard; nw == 0 {
					delete(t[p], w)
				} else {
					t[p][w] = nw
				}
			} else if m&zkRecursive != 0 {
				out[w] = true
			}
		}
		if len(t[p]) == 0 {
			delete(t, p)
		}
	}
	return out
}

func (z *zkModel) add(path string, k Kind, w *recorder) {
	switch k {
	case Data:
		zkAdd(z.data, path, w, zkStandard)
	case Child:
		zkAdd(z.child, path, w, zkStandard)
	case Persistent:
		zkAdd(z.data, path, w, zkPersist)
		zkAdd(z.child, path, w, zkPersist)
	case PersistentRecursive:
		zkAdd(z.data, path, w, zkRecursive)
	}
}

// trigger returns the watchers ZooKeeper would call process() on.
func (z *zkModel) trigger(typ proto.EventType, path string) map[*recorder]bool {
	switch typ {
	case proto.EventNodeCreated, proto.EventNodeDataChanged:
		return zkTrigger(z.data, path)
	case proto.EventNodeDeleted:
		processed := zkTrigger(z.data, path)
		for w := range zkTrigger(z.child, path) {
			processed[w] = true // suppressed if already there
		}
		return processed
	default:
		return zkTrigger(z.child, path)
	}
}

func (z *zkModel) remove(w *recorder, path string, typ proto.WatcherType) bool {
	switch typ {
	case proto.WatcherChildren:
		return zkRemove(z.child, path, w, zkStandard)
	case proto.WatcherData:
		return zkRemove(z.data, path, w, zkStandard)
	case proto.WatcherPersistent:
		c := zkRemove(z.child, path, w, zkPersist)
		d := zkRemove(z.data, path, w, zkPersist)
		return c || d
	case proto.WatcherPersistentRecursive:
		return zkRemove(z.data, path, w, zkRecursive)
	case proto.WatcherAny:
		c := zkRemove(z.child, path, w, 0)
		d := zkRemove(z.data, path, w, 0)
		return c || d
	}
	return false
}

func (z *zkModel) contains(w *recorder, path string, typ proto.WatcherType) bool {
	switch typ {
	case proto.WatcherChildren:
		return zkContains(z.child, path, w, zkStandard)
	case proto.WatcherData:
		return zkContains(z.data, path, w, zkStandard)
	case proto.WatcherPersistent:
		return zkContains(z.data, path, w, zkPersist)
	case proto.WatcherPersistentRecursive:
		return zkContains(z.data, path, w, zkRecursive)
	case proto.WatcherAny:
		return zkContains(z.child, path, w, 0) || zkContains(z.data, path, w, 0)
	}
	return false
}

func (z *zkModel) removeAll(w *recorder) {
	for _, t := range []map[string]map[*recorder]uint8{z.data, z.child} {
		for p := range t {
			zkRemove(t, p, w, 0)
		}
	}
}

// count is DataTree.getWatchCount.
func (z *zkModel) count() int {
	n := 0
	for _, t := range []map[string]map[*recorder]uint8{z.data, z.child} {
		for _, ws := range t {
			n += len(ws)
		}
	}
	return n
}

// summary is WatchManager.getWatchesSummary of the data table.
func (z *zkModel) summary() (watchers, paths, total int) {
	seen := map[*recorder]bool{}
	for _, ws := range z.data {
		for w := range ws {
			seen[w] = true
		}
		total += len(ws)
	}
	return len(seen), len(z.data), total
}

// dump lists the model's watches in the registry's dump format.
func (z *zkModel) dump() []string {
	type key struct {
		w    *recorder
		path string
	}
	kinds := map[key][]string{}
	for p, ws := range z.data {
		for w, m := range ws {
			if m&zkStandard != 0 {
				kinds[key{w, p}] = append(kinds[key{w, p}], "data")
			}
		}
	}
	for p, ws := range z.child {
		for w, m := range ws {
			if m&zkStandard != 0 {
				kinds[key{w, p}] = append(kinds[key{w, p}], "child")
			}
		}
	}
	for p, ws := range z.data {
		for w, m := range ws {
			if m&zkPersist != 0 {
				kinds[key{w, p}] = append(kinds[key{w, p}], "persistent")
			}
			if m&zkRecursive != 0 {
				kinds[key{w, p}] = append(kinds[key{w, p}], "persistentRecursive")
			}
		}
	}
	var out []string
	for k, ks := range kinds {
		out = append(out, fmt.Sprintf("%s %s %s", k.w.name, k.path, strings.Join(ks, ",")))
	}
	slices.Sort(out)
	return out
}

// TestAgainstZooKeeperModel runs seeded random operations on the registry
// and on zkModel and compares every result, every notification and the
// remaining watches. With many paths and few watchers most paths have one
// watcher and move between the inline and the set form; with few paths and
// many watchers the sets are large; with many of both, watchers with more
// than smallWatcher paths look up sets with more than smallSet watchers,
// which builds their index.
func TestAgainstZooKeeperModel(t *testing.T) {
	many := []string{"/", "/a", "/a/b", "/a/b/c", "/a/b/d", "/a/c", "/b", "/b/a", "/b/a/a", "/ab",
		"/c", "/c/a", "/c/b", "/c/c", "/c/d", "/c/e", "/c/f", "/c/g", "/c/h", "/c/i", "/d", "/e", "/e/f", "/e/f/g"}
	few := []string{"/", "/a", "/a/b", "/a/b/c", "/b", "/ab"}
	more := append(slices.Clone(many), "/f", "/f/a", "/f/b", "/f/c", "/g", "/g/a", "/g/a/b", "/h")
	shapes := []struct {
		name     string
		paths    []string
		watchers int
		// adds of 20 operations are Add; then 2 Remove, 1 Contains,
		// 1 RemoveAll, and the rest Trigger.
		adds, steps int
		seeds       uint64
	}{
		{"24paths5watchers", many, 5, 11, 1500, 20},
		{"6paths30watchers", few, 30, 11, 1500, 10},
		{"32paths48watchers", more, 48, 15, 3000, 6},
	}
	for _, sh := range shapes {
		for seed := range sh.seeds {
			t.Run(fmt.Sprint(sh.name, "/seed", seed), func(t *testing.T) {
				testAgainstZooKeeperModel(t, seed, sh.paths, sh.watchers, sh.adds, sh.steps)
			})
		}
	}
}

func testAgainstZooKeeperModel(t *testing.T, seed uint64, paths []string, watchers, adds, steps int) {
	events := []proto.EventType{created, deleted, changed, children}
	types := []proto.WatcherType{proto.WatcherChildren, proto.WatcherData, proto.WatcherAny, proto.WatcherPersistent, proto.WatcherPersistentRecursive, 0}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	f := newFixture(t)
	z := newZKModel()
	var ws []*recorder
	for i := range watchers {
		ws = append(ws, f.w(fmt.Sprint("w", i)))
	}
	seen := make(map[*recorder]int)
	// Steps that ended with paths in each form.
	var lones, sets, indexed int
	for step := range steps {
		w := ws[rng.IntN(len(ws))]
		path := paths[rng.IntN(len(paths))]
		switch op := rng.IntN(20); {
		case op < adds:
			k := all[rng.IntN(len(all))]
			f.r.Add(path, k, w)
			z.add(path, k, w)
		case op < adds+2:
			typ := types[rng.IntN(len(types))]
			if got, want := f.r.Remove(w, path, typ), z.remove(w, path, typ); got != want {
				t.Fatalf("step %d: Remove(%s, %s, %d) = %v, ZooKeeper %v", step, w.name, path, typ, got, want)
			}
		case op < adds+3:
			typ := types[rng.IntN(len(types))]
			if got, want := f.r.Contains(w, path, typ), z.contains(w, path, typ); got != want {
				t.Fatalf("step %d: Contains(%s, %s, %d) = %v, ZooKeeper %v", step, w.name, path, typ, got, want)
			}
		case op < adds+4:
			f.r.RemoveAll(w)
			z.removeAll(w)
		default:
			typ := events[rng.IntN(len(events))]
			denied := ws[rng.IntN(len(ws))]
			allowed := func(x Watcher) bool { return x != denied }
			n := f.r.Trigger(typ, path, int64(step), allowed)
			want := z.trigger(typ, path)
			delete(want, denied)
			if n != len(want) {
				t.Fatalf("step %d: Trigger(%s %s) notified %d, ZooKeeper %d", step, evName(typ), path, n, len(want))
			}
			for _, x := range ws {
				got := x.events()[seen[x]:]
				seen[x] += len(got)
				wantEv := []string(nil)
				if want[x] {
					wantEv = []string{fmt.Sprintf("%s %s @%d", evName(typ), path, step)}
				}
				if !slices.Equal(got, wantEv) {
					t.Fatalf("step %d: Trigger(%s %s): %s got %q, ZooKeeper %q", step, evName(typ), path, x.name, got, wantEv)
				}
			}
		}
		if len(ws)*len(paths) <= 500 || step%10 == 0 {
			f.check() // O(watches): every 10 steps only in the largest shape
		}
		l, s, i := f.r.forms()
		lones += b2i(l > 0)
		sets += b2i(s > 0)
		indexed += b2i(i > 0)
		if got, want := f.r.Count(), z.count(); got != want {
			t.Fatalf("step %d: Count = %d, ZooKeeper %d", step, got, want)
		}
		if step%50 == 0 {
			if got, want := f.dump(), z.dump(); !slices.Equal(got, want) {
				t.Fatalf("step %d: watches\n got %q\nwant %q", step, got, want)
			}
			gw, gp, gt := f.r.Summary()
			zw, zp, zt := z.summary()
			if gw != zw || gp != zp || gt != zt {
				t.Fatalf("step %d: Summary = %d %d %d, ZooKeeper %d %d %d", step, gw, gp, gt, zw, zp, zt)
			}
		}
	}
	if lones == 0 || sets == 0 {
		t.Errorf("steps with lone paths %d, with path sets %d: the run did not exercise both forms", lones, sets)
	}
	if watchers > smallSet && len(paths) > smallWatcher && indexed == 0 {
		t.Errorf("no step ended with an indexed path set: the run did not cross smallSet")
	}
}
