package watch

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// recorder is a Watcher that records the events it gets as
// "type path @zxid" strings.
type recorder struct {
	name string
	mu   sync.Mutex
	got  []string
}

func (w *recorder) Notify(ev proto.WatcherEvent, zxid int64) {
	s := fmt.Sprintf("%s %s @%d", evName(ev.Type), ev.Path, zxid)
	if ev.State != proto.StateSyncConnected {
		s += fmt.Sprintf(" state=%d", ev.State)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, s)
}

func (w *recorder) events() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.got)
}

func evName(t proto.EventType) string {
	switch t {
	case proto.EventNodeCreated:
		return "created"
	case proto.EventNodeDeleted:
		return "deleted"
	case proto.EventNodeDataChanged:
		return "changed"
	case proto.EventNodeChildrenChanged:
		return "children"
	}
	return fmt.Sprintf("type(%d)", t)
}

// Short names for the event types in tables.
const (
	created  = proto.EventNodeCreated
	deleted  = proto.EventNodeDeleted
	changed  = proto.EventNodeDataChanged
	children = proto.EventNodeChildrenChanged
)

// counter is a Watcher that only counts, for benchmarks and allocation
// tests.
type counter struct{ n int }

func (c *counter) Notify(proto.WatcherEvent, int64) { c.n++ }

// fixture is a registry with named recorders created on first use.
type fixture struct {
	t  testing.TB
	r  *Registry
	ws map[string]*recorder
}

func newFixture(t testing.TB) *fixture {
	return &fixture{t: t, r: New(), ws: make(map[string]*recorder)}
}

func (f *fixture) w(name string) *recorder {
	w := f.ws[name]
	if w == nil {
		w = &recorder{name: name}
		f.ws[name] = w
	}
	return w
}

func (f *fixture) name(w Watcher) string {
	if rw, ok := w.(*recorder); ok {
		return rw.name
	}
	return fmt.Sprintf("%T", w)
}

// events returns the non-empty event lists by watcher name.
func (f *fixture) events() map[string][]string {
	out := make(map[string][]string)
	for name, w := range f.ws {
		if got := w.events(); len(got) > 0 {
			out[name] = got
		}
	}
	return out
}

func (f *fixture) dump() []string { return f.r.dump(f.name) }

func (f *fixture) check() {
	f.t.Helper()
	if err := f.r.check(); err != nil {
		f.t.Fatalf("registry inconsistent: %v", err)
	}
}

// add is one Add call in a table: watcher name, path, kind.
type add struct {
	w    string
	path string
	kind Kind
}

func (f *fixture) addAll(adds []add) {
	f.t.Helper()
	for _, a := range adds {
		f.r.Add(a.path, a.kind, f.w(a.w))
	}
	f.check()
}
