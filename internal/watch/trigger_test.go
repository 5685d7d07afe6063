package watch

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// change is one Trigger call in a table; the zxid passed is 100 + its index.
type change struct {
	typ  proto.EventType
	path string
	// deny names watchers the allowed callback rejects.
	deny []string
}

func TestTrigger(t *testing.T) {
	tests := []struct {
		name string
		adds []add
		fire []change
		// n is Trigger's result for each change.
		n []int
		// want is the events each watcher got.
		want map[string][]string
		// left is the watches remaining afterwards (see Registry.dump).
		left []string
	}{
		{
			name: "created fires and consumes a data watch",
			adds: []add{{"a", "/x", Data}},
			fire: []change{{typ: created, path: "/x"}, {typ: changed, path: "/x"}},
			n:    []int{1, 0},
			want: map[string][]string{"a": {"created /x @100"}},
		},
		{
			name: "created and changed leave a child watch alone",
			adds: []add{{"a", "/x", Child}},
			fire: []change{{typ: created, path: "/x"}, {typ: changed, path: "/x"}},
			n:    []int{0, 0},
			left: []string{"a /x child"},
		},
		{
			name: "changed fires data, persistent and recursive watches on the path; only data is consumed",
			adds: []add{{"a", "/x", Data}, {"b", "/x", Persistent}, {"c", "/x", PersistentRecursive}},
			fire: []change{{typ: changed, path: "/x"}, {typ: changed, path: "/x"}},
			n:    []int{3, 2},
			want: map[string][]string{
				"a": {"changed /x @100"},
				"b": {"changed /x @100", "changed /x @101"},
				"c": {"changed /x @100", "changed /x @101"},
			},
			left: []string{"b /x persistent", "c /x persistentRecursive"},
		},
		{
			name: "recursive watches on ancestors fire with the changed node's path",
			adds: []add{{"a", "/", PersistentRecursive}, {"b", "/x", PersistentRecursive}, {"c", "/x/y/z", PersistentRecursive}},
			fire: []change{{typ: created, path: "/x/y/z"}, {typ: changed, path: "/x/y"}, {typ: deleted, path: "/q"}},
			n:    []int{3, 2, 1},
			want: map[string][]string{
				"a": {"created /x/y/z @100", "changed /x/y @101", "deleted /q @102"},
				"b": {"created /x/y/z @100", "changed /x/y @101"},
				"c": {"created /x/y/z @100"},
			},
			left: []string{"a / persistentRecursive", "b /x persistentRecursive", "c /x/y/z persistentRecursive"},
		},
		{
			name: "a recursive watch on a sibling with a common prefix does not fire",
			adds: []add{{"a", "/x", PersistentRecursive}},
			fire: []change{{typ: created, path: "/xy"}, {typ: created, path: "/xy/x"}},
			n:    []int{0, 0},
			left: []string{"a /x persistentRecursive"},
		},
		{
			name: "non-recursive watches on ancestors do not fire",
			adds: []add{{"a", "/x", Data}, {"b", "/x", Persistent}, {"c", "/x", Child}, {"d", "/", Persistent}},
			fire: []change{{typ: created, path: "/x/y"}, {typ: changed, path: "/x/y"}, {typ: deleted, path: "/x/y"}},
			n:    []int{0, 0, 0},
			left: []string{"a /x data", "b /x persistent", "c /x child", "d / persistent"},
		},
		{
			name: "one event per watcher however many of its watches match",
			adds: []add{
				{"a", "/x", Data}, {"a", "/x", Persistent}, {"a", "/x", PersistentRecursive},
				{"a", "/", PersistentRecursive}, {"a", "/x", Child},
			},
			fire: []change{{typ: changed, path: "/x"}, {typ: deleted, path: "/x"}},
			n:    []int{1, 1},
			want: map[string][]string{"a": {"changed /x @100", "deleted /x @101"}},
			left: []string{"a / persistentRecursive", "a /x persistent,persistentRecursive"},
		},
		{
			name: "deleted fires data and child watches once per watcher and consumes both",
			adds: []add{
				{"a", "/x", Data}, {"a", "/x", Child}, {"b", "/x", Child}, {"c", "/x", Persistent},
				{"d", "/", PersistentRecursive}, {"e", "/x", PersistentRecursive},
			},
			fire: []change{{typ: deleted, path: "/x"}},
			n:    []int{5},
			want: map[string][]string{
				"a": {"deleted /x @100"}, "b": {"deleted /x @100"}, "c": {"deleted /x @100"},
				"d": {"deleted /x @100"}, "e": {"deleted /x @100"},
			},
			left: []string{"c /x persistent", "d / persistentRecursive", "e /x persistentRecursive"},
		},
		{
			name: "deleted does not fire the parent's child watch (that is a separate children change)",
			adds: []add{{"a", "/", Child}, {"b", "/", Persistent}},
			fire: []change{{typ: deleted, path: "/x"}, {typ: children, path: "/"}},
			n:    []int{0, 2},
			want: map[string][]string{"a": {"children / @101"}, "b": {"children / @101"}},
			left: []string{"b / persistent"},
		},
		{
			name: "children fires child and persistent watches, never recursive or data ones",
			adds: []add{
				{"a", "/x", Child}, {"b", "/x", Persistent}, {"c", "/x", PersistentRecursive},
				{"d", "/", PersistentRecursive}, {"e", "/x", Data},
			},
			fire: []change{{typ: children, path: "/x"}, {typ: children, path: "/x"}},
			n:    []int{2, 1},
			want: map[string][]string{"a": {"children /x @100"}, "b": {"children /x @100", "children /x @101"}},
			left: []string{"b /x persistent", "c /x persistentRecursive", "d / persistentRecursive", "e /x data"},
		},
		{
			name: "a one-time watch next to a persistent one is consumed, the persistent one stays",
			adds: []add{{"a", "/x", Data}, {"a", "/x", Persistent}, {"b", "/x", Child}, {"b", "/x", Persistent}},
			fire: []change{{typ: changed, path: "/x"}, {typ: children, path: "/x"}, {typ: changed, path: "/x"}},
			n:    []int{2, 2, 2},
			want: map[string][]string{
				"a": {"changed /x @100", "children /x @101", "changed /x @102"},
				"b": {"changed /x @100", "children /x @101", "changed /x @102"},
			},
			left: []string{"a /x persistent", "b /x persistent"},
		},
		{
			name: "a one-time watch next to a recursive one on the same path is consumed",
			adds: []add{{"a", "/x", Data}, {"a", "/x", PersistentRecursive}},
			fire: []change{{typ: changed, path: "/x"}},
			n:    []int{1},
			want: map[string][]string{"a": {"changed /x @100"}},
			left: []string{"a /x persistentRecursive"},
		},
		{
			name: "a recursive ancestor and a one-time watch on the node give one event and consume the watch",
			adds: []add{{"a", "/", PersistentRecursive}, {"a", "/x", Data}},
			fire: []change{{typ: changed, path: "/x"}, {typ: changed, path: "/x"}},
			n:    []int{1, 1},
			want: map[string][]string{"a": {"changed /x @100", "changed /x @101"}},
			left: []string{"a / persistentRecursive"},
		},
		{
			name: "the root",
			adds: []add{{"a", "/", Data}, {"b", "/", Child}, {"c", "/", PersistentRecursive}},
			fire: []change{{typ: changed, path: "/"}, {typ: children, path: "/"}},
			n:    []int{2, 1},
			want: map[string][]string{"a": {"changed / @100"}, "b": {"children / @101"}, "c": {"changed / @100"}},
			left: []string{"c / persistentRecursive"},
		},
		{
			name: "a change elsewhere consumes nothing",
			adds: []add{{"a", "/x", Data}, {"b", "/x/y", Child}},
			fire: []change{{typ: created, path: "/y"}, {typ: deleted, path: "/x/y/z"}, {typ: children, path: "/x"}},
			n:    []int{0, 0, 0},
			left: []string{"a /x data", "b /x/y child"},
		},
		{
			name: "a watcher that is not allowed gets nothing but its one-time watch is consumed",
			adds: []add{{"a", "/x", Data}, {"b", "/x", Data}},
			fire: []change{{typ: created, path: "/x", deny: []string{"a"}}, {typ: changed, path: "/x"}},
			n:    []int{1, 0},
			want: map[string][]string{"b": {"created /x @100"}},
		},
		{
			name: "a persistent watch survives a denied event",
			adds: []add{{"a", "/x", Persistent}, {"b", "/", PersistentRecursive}},
			fire: []change{{typ: changed, path: "/x", deny: []string{"a", "b"}}, {typ: changed, path: "/x"}},
			n:    []int{0, 2},
			want: map[string][]string{"a": {"changed /x @101"}, "b": {"changed /x @101"}},
			left: []string{"a /x persistent", "b / persistentRecursive"},
		},
		{
			name: "a denied delete consumes both the data and the child watch",
			adds: []add{{"a", "/x", Data}, {"a", "/x", Child}, {"b", "/x", Child}},
			fire: []change{{typ: deleted, path: "/x", deny: []string{"a", "b"}}, {typ: children, path: "/x"}},
			n:    []int{0, 0},
		},
		{
			name: "events keep the order of the changes",
			adds: []add{{"a", "/", PersistentRecursive}, {"a", "/x", Persistent}},
			fire: []change{
				{typ: created, path: "/x"}, {typ: children, path: "/"}, {typ: created, path: "/x/y"},
				{typ: children, path: "/x"}, {typ: changed, path: "/x/y"}, {typ: deleted, path: "/x/y"},
				{typ: children, path: "/x"}, {typ: deleted, path: "/x"},
			},
			n: []int{1, 0, 1, 1, 1, 1, 1, 1},
			want: map[string][]string{"a": {
				"created /x @100", "created /x/y @102", "children /x @103", "changed /x/y @104",
				"deleted /x/y @105", "children /x @106", "deleted /x @107",
			}},
			left: []string{"a / persistentRecursive", "a /x persistent"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.addAll(tt.adds)
			for i, c := range tt.fire {
				var allowed func(Watcher) bool
				if c.deny != nil {
					allowed = func(w Watcher) bool {
						for _, d := range c.deny {
							if f.name(w) == d {
								return false
							}
						}
						return true
					}
				}
				n := f.r.Trigger(c.typ, c.path, int64(100+i), allowed)
				if n != tt.n[i] {
					t.Errorf("Trigger(%s %s) = %d, want %d", evName(c.typ), c.path, n, tt.n[i])
				}
				f.check()
			}
			want := tt.want
			if want == nil {
				want = map[string][]string{}
			}
			if got := f.events(); !reflect.DeepEqual(got, want) {
				t.Errorf("events:\n got %q\nwant %q", got, want)
			}
			if got := f.dump(); !reflect.DeepEqual(got, tt.left) {
				t.Errorf("watches left:\n got %q\nwant %q", got, tt.left)
			}
		})
	}
}

func TestTriggerPanicsOnNonChangeEvents(t *testing.T) {
	for _, typ := range []proto.EventType{proto.EventNone, proto.EventDataWatchRemoved, proto.EventChildWatchRemoved, proto.EventPersistentWatchRemoved, 42} {
		t.Run(fmt.Sprint(int32(typ)), func(t *testing.T) {
			r := New()
			defer func() {
				if recover() == nil {
					t.Errorf("Trigger with event type %d did not panic", typ)
				}
			}()
			r.Trigger(typ, "/x", 1, nil)
		})
	}
}

func TestParent(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/", ""}, {"/a", "/"}, {"/a/b", "/a"}, {"/a/b/c", "/a/b"}, {"", ""}, {"a", ""}, {"a/b", "a"},
	}
	for _, tt := range tests {
		if got := parent(tt.in); got != tt.want {
			t.Errorf("parent(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestTriggerNoAllocation checks the hot paths: a change nobody watches, with
// and without recursive watches elsewhere, and a fan-out to persistent
// watchers once the scratch buffer has grown.
func TestTriggerNoAllocation(t *testing.T) {
	r := New()
	var ws [64]counter
	for i := range ws {
		r.Add(fmt.Sprintf("/other/%d", i), Data, &ws[i])
		r.Add("/fan", Persistent, &ws[i])
	}
	check := func(name string, typ proto.EventType, path string, wantN int) {
		t.Helper()
		allocs := testing.AllocsPerRun(100, func() {
			if n := r.Trigger(typ, path, 1, nil); n != wantN {
				t.Fatalf("%s: Trigger = %d, want %d", name, n, wantN)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per Trigger, want 0", name, allocs)
		}
	}
	check("no watchers, no recursive watches", changed, "/a/b/c/d", 0)
	check("fan-out to persistent watchers", changed, "/fan", len(ws))
	r.Add("/elsewhere", PersistentRecursive, &ws[0])
	check("no watchers, recursive watches elsewhere", created, "/a/b/c/d", 0)
	check("recursive watch on an ancestor", created, "/elsewhere/b/c", 1)
}
