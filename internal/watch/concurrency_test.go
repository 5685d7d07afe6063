package watch

import (
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// ordered is a Watcher that checks its events arrive in zxid order.
type ordered struct {
	mu    sync.Mutex
	zxids []int64
}

func (w *ordered) Notify(ev proto.WatcherEvent, zxid int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.zxids = append(w.zxids, zxid)
}

// churn is a Watcher that may be notified at any time, even after
// RemoveAll, and only counts.
type churn struct{ n atomic.Int64 }

func (w *churn) Notify(proto.WatcherEvent, int64) { w.n.Add(1) }

// TestConcurrentUse runs Add, Remove, Contains, RemoveAll and the
// introspection calls from many goroutines while one goroutine triggers
// changes; run it with -race. Persistent watchers added up front must see
// every change exactly once, in order, and the indices must stay consistent.
func TestConcurrentUse(t *testing.T) {
	const (
		triggers   = 2000
		goroutines = 8
		steps      = 3000
	)
	r := New()
	var stable [4]ordered
	for i := range stable {
		r.Add("/p", Persistent, &stable[i])
	}
	paths := []string{"/", "/p", "/p/c", "/p/c/d", "/q"}
	types := []proto.WatcherType{proto.WatcherChildren, proto.WatcherData, proto.WatcherAny, proto.WatcherPersistent, proto.WatcherPersistentRecursive}

	var wg sync.WaitGroup
	var churners [goroutines][4]churn
	for g := range goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			mine := &churners[g]
			for range steps {
				w := &mine[rng.IntN(len(mine))]
				path := paths[rng.IntN(len(paths))]
				switch op := rng.IntN(10); {
				case op < 5:
					r.Add(path, all[rng.IntN(len(all))], w)
				case op < 7:
					r.Remove(w, path, types[rng.IntN(len(types))])
				case op < 8:
					r.Contains(w, path, types[rng.IntN(len(types))])
				case op < 9:
					r.RemoveAll(w)
				default:
					r.Count()
					r.Summary()
					r.ByWatcher(func(Watcher, []string) {})
					r.ByPath(func(string, []Watcher) {})
				}
			}
		})
	}
	// One triggering goroutine, like the apply loop.
	wg.Go(func() {
		for z := int64(1); z <= triggers; z++ {
			typ := []proto.EventType{created, changed, deleted, children}[z%4]
			if n := r.Trigger(typ, "/p", z, nil); n < len(stable) {
				t.Errorf("Trigger(%s /p @%d) notified %d watchers, want at least %d", evName(typ), z, n, len(stable))
			}
			r.Trigger(typ, paths[z%int64(len(paths))]+"/leaf", z, nil)
		}
	})
	wg.Wait()

	if err := r.check(); err != nil {
		t.Fatalf("registry inconsistent after concurrent use: %v", err)
	}
	for i := range stable {
		z := stable[i].zxids
		if len(z) != triggers {
			t.Errorf("stable watcher %d got %d events, want %d", i, len(z), triggers)
		}
		if !slices.IsSorted(z) || len(slices.Compact(slices.Clone(z))) != len(z) {
			t.Errorf("stable watcher %d got zxids out of order", i)
		}
	}
	for g := range churners {
		for i := range churners[g] {
			r.RemoveAll(&churners[g][i])
		}
	}
	if err := r.check(); err != nil {
		t.Fatal(err)
	}
	if got, want := r.Count(), 2*len(stable); got != want {
		t.Errorf("Count after removing the churners = %d, want %d", got, want)
	}
}
