package watch

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

var (
	all       = []Kind{Data, Child, Persistent, PersistentRecursive}
	typeNames = map[proto.WatcherType]string{
		proto.WatcherChildren: "Children", proto.WatcherData: "Data", proto.WatcherAny: "Any",
		proto.WatcherPersistent: "Persistent", proto.WatcherPersistentRecursive: "PersistentRecursive",
		0: "undefined(0)", 6: "undefined(6)",
	}
)

// TestRemove follows ZooKeeper 3.9 DataTree.removeWatch: Children and Data
// remove only the one-time watch, Persistent and PersistentRecursive only
// that mode, Any everything.
func TestRemove(t *testing.T) {
	tests := []struct {
		held []Kind
		typ  proto.WatcherType
		want bool
		left []Kind
	}{
		{nil, proto.WatcherAny, false, nil},
		{[]Kind{Data}, proto.WatcherData, true, nil},
		{[]Kind{Data}, proto.WatcherChildren, false, []Kind{Data}},
		{[]Kind{Data}, proto.WatcherPersistent, false, []Kind{Data}},
		{[]Kind{Data}, proto.WatcherAny, true, nil},
		{[]Kind{Child}, proto.WatcherChildren, true, nil},
		{[]Kind{Child}, proto.WatcherData, false, []Kind{Child}},
		{[]Kind{Data, Child}, proto.WatcherData, true, []Kind{Child}},
		{[]Kind{Data, Child}, proto.WatcherChildren, true, []Kind{Data}},
		{[]Kind{Data, Child}, proto.WatcherAny, true, nil},
		{[]Kind{Persistent}, proto.WatcherData, false, []Kind{Persistent}},
		{[]Kind{Persistent}, proto.WatcherChildren, false, []Kind{Persistent}},
		{[]Kind{Persistent}, proto.WatcherPersistentRecursive, false, []Kind{Persistent}},
		{[]Kind{Persistent}, proto.WatcherPersistent, true, nil},
		{[]Kind{Persistent}, proto.WatcherAny, true, nil},
		{[]Kind{PersistentRecursive}, proto.WatcherPersistent, false, []Kind{PersistentRecursive}},
		{[]Kind{PersistentRecursive}, proto.WatcherData, false, []Kind{PersistentRecursive}},
		{[]Kind{PersistentRecursive}, proto.WatcherPersistentRecursive, true, nil},
		{[]Kind{PersistentRecursive}, proto.WatcherAny, true, nil},
		{[]Kind{Child, Persistent}, proto.WatcherPersistent, true, []Kind{Child}},
		{[]Kind{Data, PersistentRecursive}, proto.WatcherData, true, []Kind{PersistentRecursive}},
		{all, proto.WatcherPersistentRecursive, true, []Kind{Data, Child, Persistent}},
		{all, proto.WatcherAny, true, nil},
		{all, 0, false, all},
		{all, 6, false, all},
	}
	for _, tt := range tests {
		t.Run(kindNames(tt.held)+"/"+typeNames[tt.typ], func(t *testing.T) {
			f := newFixture(t)
			a, b := f.w("a"), f.w("b")
			for _, k := range tt.held {
				f.r.Add("/x", k, a)
			}
			// Bystanders that must be untouched: another watcher on the
			// path and the same watcher on another path.
			f.r.Add("/x", Data, b)
			f.r.Add("/y", Data, a)
			if got := f.r.Remove(a, "/x", tt.typ); got != tt.want {
				t.Errorf("Remove = %v, want %v", got, tt.want)
			}
			f.check()
			if got := f.r.kindsOf(a, "/x"); !slices.Equal(got, tt.left) {
				t.Errorf("left %v, want %v", got, tt.left)
			}
			if !f.r.Contains(b, "/x", proto.WatcherData) || !f.r.Contains(a, "/y", proto.WatcherData) {
				t.Errorf("Remove touched another watch: %q", f.dump())
			}
			if f.r.Remove(a, "/x", tt.typ) {
				t.Errorf("second Remove reported a removal")
			}
		})
	}
}

func TestRemoveUnknown(t *testing.T) {
	f := newFixture(t)
	a, b := f.w("a"), f.w("b")
	f.r.Add("/x", Data, a)
	for _, tc := range []struct {
		w    Watcher
		path string
	}{{b, "/x"}, {a, "/y"}, {b, "/y"}} {
		if f.r.Remove(tc.w, tc.path, proto.WatcherAny) {
			t.Errorf("Remove(%s, %s) = true for a watch never added", f.name(tc.w), tc.path)
		}
	}
	f.check()
}

// TestRemovedRecursiveStopsFiring checks that removing the last recursive
// watch turns the ancestor walk off and that the watch no longer fires.
func TestRemovedRecursiveStopsFiring(t *testing.T) {
	f := newFixture(t)
	a := f.w("a")
	f.r.Add("/x", PersistentRecursive, a)
	f.r.Add("/x", Data, a)
	if n := f.r.Trigger(created, "/x/y", 1, nil); n != 1 {
		t.Fatalf("Trigger before removal = %d, want 1", n)
	}
	if !f.r.Remove(a, "/x", proto.WatcherPersistentRecursive) {
		t.Fatal("Remove(PersistentRecursive) = false")
	}
	if got := f.r.recursiveCount(); got != 0 {
		t.Errorf("recursive count after removal = %d, want 0", got)
	}
	if n := f.r.Trigger(created, "/x/y", 2, nil); n != 0 {
		t.Errorf("Trigger after removal = %d, want 0", n)
	}
	if got := f.r.kindsOf(a, "/x"); !slices.Equal(got, []Kind{Data}) {
		t.Errorf("left %v, want [data]", got)
	}
	f.check()
}

// TestContains follows ZooKeeper 3.9 DataTree.containsWatcher.
func TestContains(t *testing.T) {
	types := []proto.WatcherType{proto.WatcherChildren, proto.WatcherData, proto.WatcherAny, proto.WatcherPersistent, proto.WatcherPersistentRecursive, 0, 6}
	tests := []struct {
		held []Kind
		want []proto.WatcherType // the types that report true
	}{
		{nil, nil},
		{[]Kind{Data}, []proto.WatcherType{proto.WatcherData, proto.WatcherAny}},
		{[]Kind{Child}, []proto.WatcherType{proto.WatcherChildren, proto.WatcherAny}},
		{[]Kind{Persistent}, []proto.WatcherType{proto.WatcherAny, proto.WatcherPersistent}},
		{[]Kind{PersistentRecursive}, []proto.WatcherType{proto.WatcherAny, proto.WatcherPersistentRecursive}},
		{[]Kind{Data, Persistent}, []proto.WatcherType{proto.WatcherData, proto.WatcherAny, proto.WatcherPersistent}},
		{all, []proto.WatcherType{proto.WatcherChildren, proto.WatcherData, proto.WatcherAny, proto.WatcherPersistent, proto.WatcherPersistentRecursive}},
	}
	for _, tt := range tests {
		t.Run(kindNames(tt.held), func(t *testing.T) {
			f := newFixture(t)
			a, b := f.w("a"), f.w("b")
			for _, k := range tt.held {
				f.r.Add("/x", k, a)
			}
			f.r.Add("/x", Child, b)
			f.r.Add("/y", Data, a)
			for _, typ := range types {
				want := slices.Contains(tt.want, typ)
				if got := f.r.Contains(a, "/x", typ); got != want {
					t.Errorf("Contains(%s) = %v, want %v", typeNames[typ], got, want)
				}
			}
			if before := f.dump(); f.r.Contains(a, "/x", proto.WatcherAny) && !reflect.DeepEqual(before, f.dump()) {
				t.Errorf("Contains changed the registry")
			}
		})
	}
}

func TestAddIsIdempotent(t *testing.T) {
	f := newFixture(t)
	a := f.w("a")
	for _, k := range all {
		if !f.r.Add("/x", k, a) {
			t.Errorf("first Add(%s) = false", k)
		}
		if f.r.Add("/x", k, a) {
			t.Errorf("second Add(%s) = true", k)
		}
	}
	f.check()
	if got, want := f.r.Count(), 2; got != want { // one pair in each of ZooKeeper's two tables
		t.Errorf("Count = %d, want %d", got, want)
	}
	if n := f.r.Trigger(deleted, "/x", 1, nil); n != 1 {
		t.Errorf("Trigger = %d, want 1", n)
	}
	if got := a.events(); len(got) != 1 {
		t.Errorf("events %q, want exactly one", got)
	}
}

func TestAddPanicsOnInvalidKind(t *testing.T) {
	for _, k := range []Kind{0, PersistentRecursive + 1, 255} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Add with kind %d did not panic", k)
				}
			}()
			New().Add("/x", k, &counter{})
		}()
	}
}

func TestRemoveAll(t *testing.T) {
	f := newFixture(t)
	a, b := f.w("a"), f.w("b")
	f.addAll([]add{
		{"a", "/x", Data}, {"a", "/x", Child}, {"a", "/y", Persistent}, {"a", "/", PersistentRecursive},
		{"b", "/x", Data}, {"b", "/z", Child},
	})
	for i := range 50 { // a fan-out path, so removal has to move entries around
		f.r.Add("/y", Data, f.w("fan"+strings.Repeat("+", i)))
	}
	f.r.Add("/y", Data, b)
	f.r.RemoveAll(a)
	f.check()
	for _, p := range []string{"/x", "/y", "/"} {
		if f.r.Contains(a, p, proto.WatcherAny) {
			t.Errorf("a still watches %s", p)
		}
	}
	if got := f.r.recursiveCount(); got != 0 {
		t.Errorf("recursive count = %d, want 0", got)
	}
	if n := f.r.Trigger(deleted, "/x", 1, nil); n != 1 {
		t.Errorf("Trigger(deleted /x) = %d, want 1 (b only)", n)
	}
	if got := a.events(); len(got) != 0 {
		t.Errorf("a got %q after RemoveAll", got)
	}
	if !f.r.Contains(b, "/z", proto.WatcherChildren) || !f.r.Contains(b, "/y", proto.WatcherData) {
		t.Errorf("RemoveAll(a) touched b: %q", f.dump())
	}
	f.r.RemoveAll(a) // no-op
	f.r.RemoveAll(&counter{})
	f.r.RemoveAll(b)
	f.check()
	if got, want := f.r.Count(), 50; got != want {
		t.Errorf("Count = %d, want %d", got, want)
	}
}

func TestIntrospection(t *testing.T) {
	f := newFixture(t)
	a, c := f.w("a"), f.w("c")
	f.addAll([]add{
		{"a", "/x", Data}, {"a", "/y", Child}, {"a", "/z", Persistent}, {"a", "/r", PersistentRecursive},
		{"b", "/y", Child},
		{"c", "/x", Data}, {"c", "/x", Child},
	})
	// ZooKeeper's wchs/wchc/wchp read the data table only: b (child watches
	// only) and /y (watched only by child watches) are not reported.
	if w, p, tot := f.r.Summary(); w != 2 || p != 3 || tot != 4 {
		t.Errorf("Summary = %d watchers, %d paths, %d watches; want 2, 3, 4", w, p, tot)
	}
	// mntr's watch_count: 4 data pairs plus 4 child pairs (a /y, a /z,
	// b /y, c /x).
	if got, want := f.r.Count(), 4+4; got != want {
		t.Errorf("Count = %d, want %d", got, want)
	}
	byWatcher := map[string][]string{}
	f.r.ByWatcher(func(w Watcher, paths []string) {
		f.r.Count() // the callback may call the registry
		byWatcher[f.name(w)] = paths
	})
	if want := map[string][]string{"a": {"/r", "/x", "/z"}, "c": {"/x"}}; !reflect.DeepEqual(byWatcher, want) {
		t.Errorf("ByWatcher = %q, want %q", byWatcher, want)
	}
	var byPath []string
	f.r.ByPath(func(path string, ws []Watcher) {
		names := make([]string, len(ws))
		for i, w := range ws {
			names[i] = f.name(w)
		}
		slices.Sort(names)
		byPath = append(byPath, path+"="+strings.Join(names, ","))
	})
	if want := []string{"/r=a", "/x=a,c", "/z=a"}; !slices.Equal(byPath, want) {
		t.Errorf("ByPath = %q, want %q", byPath, want)
	}
	f.r.RemoveAll(a)
	f.r.RemoveAll(c)
	if w, p, tot := f.r.Summary(); w != 0 || p != 0 || tot != 0 {
		t.Errorf("Summary after RemoveAll = %d, %d, %d; want zeros", w, p, tot)
	}
	if got := f.r.Count(); got != 1 {
		t.Errorf("Count after RemoveAll = %d, want 1", got)
	}
}

// reentrant re-arms its watch from inside Notify, as the package
// documentation allows.
type reentrant struct {
	r    *Registry
	path string
	n    int
}

func (w *reentrant) Notify(_ proto.WatcherEvent, _ int64) {
	w.n++
	w.r.Contains(w, w.path, proto.WatcherAny)
	w.r.Add(w.path, Data, w)
}

func TestNotifyMayCallTheRegistry(t *testing.T) {
	r := New()
	w := &reentrant{r: r, path: "/x"}
	r.Add("/x", Data, w)
	for i := range 3 {
		if n := r.Trigger(changed, "/x", int64(i), nil); n != 1 {
			t.Fatalf("Trigger %d = %d, want 1", i, n)
		}
	}
	if w.n != 3 || !r.Contains(w, "/x", proto.WatcherData) {
		t.Errorf("notified %d times, re-armed %v; want 3, true", w.n, r.Contains(w, "/x", proto.WatcherData))
	}
	if err := r.check(); err != nil {
		t.Fatal(err)
	}
}

func TestParseAddWatchMode(t *testing.T) {
	tests := []struct {
		mode    int32
		want    Kind
		wantErr bool
	}{
		{proto.AddWatchPersistent, Persistent, false},
		{proto.AddWatchPersistentRecursive, PersistentRecursive, false},
		{2, 0, true},
		{-1, 0, true},
	}
	for _, tt := range tests {
		got, err := ParseAddWatchMode(tt.mode)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseAddWatchMode(%d) = %v, %v; want %v, error %v", tt.mode, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "watch: unsupported addWatch mode") {
			t.Errorf("error %q does not say what failed", err)
		}
	}
}

func kindNames(ks []Kind) string {
	if len(ks) == 0 {
		return "none"
	}
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = k.String()
	}
	return strings.Join(s, "+")
}

// TestLargeWatcherGrowsAndShrinks gives two watchers many paths, each path
// held by both in a set, and takes one of them back down to two paths
// through Remove and Trigger (each removal turns a set back into an inline
// pair), checking the registry at every step.
func TestLargeWatcherGrowsAndShrinks(t *testing.T) {
	f := newFixture(t)
	a, b := f.w("a"), f.w("b")
	const n = 64
	for i := range n {
		p := fmt.Sprintf("/n%02d", i)
		f.r.Add(p, Data, a)
		f.r.Add(p, Child, b)
		f.check()
	}
	for i := range n - 2 {
		p := fmt.Sprintf("/n%02d", i)
		if i%2 == 0 {
			if !f.r.Remove(a, p, proto.WatcherData) {
				t.Fatalf("Remove(a, %s) = false", p)
			}
		} else if got := f.r.Trigger(changed, p, int64(i), nil); got != 1 {
			t.Fatalf("Trigger(changed %s) = %d, want 1", p, got)
		}
		f.check()
	}
	want := []string{"a /n62 data", "a /n63 data"}
	for i := range n {
		want = append(want, fmt.Sprintf("b /n%02d child", i))
	}
	slices.Sort(want)
	if got := f.dump(); !slices.Equal(got, want) {
		t.Errorf("watches left:\n got %q\nwant %q", got, want)
	}
}

func TestKindString(t *testing.T) {
	tests := map[Kind]string{Data: "data", Child: "child", Persistent: "persistent", PersistentRecursive: "persistentRecursive", 9: "kind(9)"}
	for k, want := range tests {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", uint8(k), got, want)
		}
	}
}

// TestPathSetGrowsAndShrinks takes one path from one watcher to many and
// back, removing through Trigger, Remove and RemoveAll, checking the
// registry at every step. Each watcher holds more than smallWatcher paths,
// so its pair on the path is looked up in the set, whose index is built
// past smallSet watchers and dropped at smallSet/2.
func TestPathSetGrowsAndShrinks(t *testing.T) {
	f := newFixture(t)
	const n, own = 64, smallWatcher + 1
	name := func(i int) string { return fmt.Sprintf("w%02d", i) }
	for i := range n {
		for j := range own {
			f.r.Add(fmt.Sprintf("/own/%02d/%02d", i, j), Child, f.w(name(i)))
		}
	}
	for i := range n {
		kind := Persistent
		if i%2 == 0 {
			kind = Data
		}
		f.r.Add("/p", kind, f.w(name(i)))
		f.check()
	}
	if _, sets, indexed := f.r.forms(); sets != 1 || indexed != 1 {
		t.Fatalf("after %d watchers on /p: %d sets, %d indexed, want 1 and 1", n, sets, indexed)
	}
	// The Data watchers go: the set is compacted and reindexed.
	if got := f.r.Trigger(changed, "/p", 1, nil); got != n {
		t.Fatalf("Trigger(changed /p) = %d, want %d", got, n)
	}
	f.check()
	for i := 1; i < n; i += 2 {
		if !f.r.Contains(f.w(name(i)), "/p", proto.WatcherPersistent) {
			t.Fatalf("%s lost its persistent watch on /p", name(i))
		}
	}
	// Down to one watcher by Remove and RemoveAll in turn: the index goes
	// at smallSet/2 and the set at one watcher.
	for i := 1; i < n-2; i += 2 {
		if i%4 == 1 {
			if !f.r.Remove(f.w(name(i)), "/p", proto.WatcherAny) {
				t.Fatalf("Remove(%s, /p) = false", name(i))
			}
		} else {
			f.r.RemoveAll(f.w(name(i)))
		}
		f.check()
		if _, _, indexed := f.r.forms(); (n-i)/2 <= smallSet/2 && indexed != 0 {
			t.Fatalf("%d watchers left on /p and the set is still indexed", (n-i)/2)
		}
	}
	if lone, sets, _ := f.r.forms(); sets != 0 || lone == 0 {
		t.Fatalf("one watcher left on /p: %d sets, %d inline paths, want 0 and some", sets, lone)
	}
	var want []string
	for i := range n {
		if i%4 != 3 || i == n-1 {
			for j := range own {
				want = append(want, fmt.Sprintf("%s /own/%02d/%02d child", name(i), i, j))
			}
		}
	}
	want = append(want, name(n-1)+" /p persistent")
	slices.Sort(want)
	if got := f.dump(); !slices.Equal(got, want) {
		t.Errorf("watches left:\n got %q\nwant %q", got, want)
	}
}

// TestPathTableGrowsAndShrinks adds and removes enough paths for the hash
// index to grow and split its segments several times and be released when
// it empties, reusing freed entries on the way, and checks the table as it
// goes.
func TestPathTableGrowsAndShrinks(t *testing.T) {
	f := newFixture(t)
	w := f.w("a")
	const n = 3000
	path := func(i int) string { return fmt.Sprintf("/t/%d", i) }
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 2 {
		for i := range n {
			f.r.Add(path(i), Data, w)
			if i%97 == 0 {
				f.check()
			}
		}
		if got := f.r.Count(); got != n {
			t.Fatalf("round %d: Count = %d after %d adds", round, got, n)
		}
		f.r.mu.Lock()
		depth := f.r.paths.depth
		f.r.mu.Unlock()
		if depth < 2 {
			t.Fatalf("round %d: %d paths and a directory of depth %d: no segment split twice", round, n, depth)
		}
		for k, i := range rng.Perm(n) {
			if k%2 == 0 {
				if !f.r.Remove(w, path(i), proto.WatcherData) {
					t.Fatalf("round %d: Remove(%s) = false", round, path(i))
				}
			} else if got := f.r.Trigger(deleted, path(i), 1, nil); got != 1 {
				t.Fatalf("round %d: Trigger(deleted %s) = %d, want 1", round, path(i), got)
			}
			if k%97 == 0 {
				f.check()
			}
		}
		f.check()
		f.r.mu.Lock()
		segments := len(f.r.paths.dir)
		f.r.mu.Unlock()
		if got := f.r.Count(); got != 0 || segments != 0 {
			t.Fatalf("round %d: Count = %d, %d segments left after removing every path", round, got, segments)
		}
	}
}
