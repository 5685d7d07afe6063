package recipe_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/zk"
	"github.com/paddockhq/paddock/zk/recipe"
)

func init() {
	addServerTests(
		serverTest{"Barrier", testBarrier},
		serverTest{"DoubleBarrier", testDoubleBarrier},
		serverTest{"Rendezvous", testRendezvous},
	)
}

// testBarrier: waiters on two sessions block while the barrier is set and
// all return once it is removed, none before; Wait on a barrier not set
// returns at once.
func testBarrier(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	cs := conns(t, s.proc.Addr, 2)
	path := root(t) + "/b"
	if err := recipe.NewBarrier(cs[0], path).Wait(ctx); err != nil {
		t.Fatalf("Wait on a barrier not set: %v", err)
	}
	b := recipe.NewBarrier(cs[0], path)
	if err := b.Set(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Set(ctx); err != nil {
		t.Errorf("Set twice: %v", err)
	}
	var removed atomic.Bool
	const waiters = 6
	var wg sync.WaitGroup
	errs := make(chan error, waiters)
	for i := range waiters {
		w := recipe.NewBarrier(cs[i%2], path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.Wait(ctx); err != nil {
				errs <- err
				return
			}
			if !removed.Load() {
				errs <- fmt.Errorf("waiter %d passed the barrier before it was removed", i)
			}
		}()
	}
	// A round trip on each session after the waiters started gives them
	// time to reach the server; a Wait that returned early is caught
	// whenever it returned before the removal.
	for _, c := range cs {
		c.Sync(ctx, path)
	}
	removed.Store(true)
	if err := b.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := b.Remove(ctx); err != nil {
		t.Errorf("Remove twice: %v", err)
	}
}

// testDoubleBarrier: five participants on three sessions. None returns
// from Enter before all five have entered, none returns from Leave before
// all five have started leaving, and nothing is left behind.
func testDoubleBarrier(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	cs := conns(t, s.proc.Addr, 3)
	dir := root(t)
	const n = 5
	var entering, leaving atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		b := recipe.NewDoubleBarrier(cs[i%len(cs)], dir, n, recipe.WithNodeData([]byte(fmt.Sprint(i))))
		wg.Add(1)
		go func() {
			defer wg.Done()
			entering.Add(1)
			if err := b.Enter(ctx); err != nil {
				errs <- fmt.Errorf("%d: Enter: %w", i, err)
				return
			}
			if got := entering.Load(); got != n {
				errs <- fmt.Errorf("%d entered when only %d of %d had arrived", i, got, n)
			}
			leaving.Add(1)
			if err := b.Leave(ctx); err != nil {
				errs <- fmt.Errorf("%d: Leave: %w", i, err)
				return
			}
			if got := leaving.Load(); got != n {
				errs <- fmt.Errorf("%d left when only %d of %d were leaving", i, got, n)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if left := children(t, cs[0], dir); len(left) != 0 {
		t.Errorf("nodes left under the barrier: %v", left)
	}
	if err := recipe.NewDoubleBarrier(cs[0], dir, 0).Enter(ctx); !errors.Is(err, recipe.ErrBadCount) {
		t.Errorf("Enter with count 0: %v, want ErrBadCount", err)
	}
}

// testRendezvous: workers that start before the master wait until it
// publishes, then all read what it published; a worker after that reads it
// at once.
func testRendezvous(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	cs := conns(t, s.proc.Addr, 3)
	path := root(t) + "/r"
	if err := recipe.NewRendezvous(cs[0], path).Create(ctx); err != nil {
		t.Fatal(err)
	}
	var published atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		r := recipe.NewRendezvous(cs[i%len(cs)], path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			data, err := r.Await(ctx)
			switch {
			case err != nil:
				errs <- err
			case !published.Load():
				errs <- fmt.Errorf("worker %d got %q before Publish", i, data)
			case string(data) != "master:1234":
				errs <- fmt.Errorf("worker %d got %q", i, data)
			}
		}()
	}
	for _, c := range cs {
		c.Sync(ctx, path)
	}
	master := recipe.NewRendezvous(cs[0], path)
	if err := master.Publish(ctx, nil); !errors.Is(err, recipe.ErrEmptyData) {
		t.Errorf("Publish(nil): %v, want ErrEmptyData", err)
	}
	published.Store(true)
	if err := master.Publish(ctx, []byte("master:1234")); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// A rendezvous never created: Publish creates it.
	late := root(t) + "/late"
	go recipe.NewRendezvous(cs[1], late).Publish(ctx, []byte("x"))
	actx, cancel := testCtxTimeout(t, 10*time.Second)
	defer cancel()
	if data, err := recipe.NewRendezvous(cs[2], late).Await(actx); err != nil || string(data) != "x" {
		t.Errorf("Await on a rendezvous created by Publish: %q, %v", data, err)
	}
	if _, _, err := cs[0].Get(ctx, late); errors.Is(err, zk.ErrNoNode) {
		t.Error("Publish did not create the rendezvous")
	}
}
