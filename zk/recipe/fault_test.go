package recipe_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/zk"
	"github.com/paddockhq/paddock/zk/recipe"
)

func init() {
	addServerTests(
		serverTest{"LockConnectionLoss", testLockConnectionLoss},
		serverTest{"QueueConnectionLoss", testQueueConnectionLoss},
	)
}

// flapper cuts one of the sessions' connections (chosen by a seeded random
// source) every interval until stopped: calls in flight then fail with
// connection loss, their outcome unknown, and the sessions reconnect at
// once. Pacing faults by a clock is the point here, not synchronisation.
func flapper(nets []*faultNet, seed uint64, interval time.Duration) (stop func() int) {
	done := make(chan struct{})
	count := make(chan int, 1)
	go func() {
		r := rand.New(rand.NewPCG(seed, 2))
		t := time.NewTicker(interval)
		defer t.Stop()
		n := 0
		for {
			select {
			case <-done:
				count <- n
				return
			case <-t.C:
				nets[r.IntN(len(nets))].cut(false)
				n++
			}
		}
	}()
	return func() int { close(done); return <-count }
}

// faultyConns opens n sessions through faultNets.
func faultyConns(t *testing.T, addr string, n int) ([]*zk.Conn, []*faultNet) {
	cs := make([]*zk.Conn, n)
	nets := make([]*faultNet, n)
	for i := range cs {
		nets[i] = &faultNet{}
		cs[i] = connect(t, addr, nets[i].option())
	}
	return cs, nets
}

// casIncrement adds one to the counter under a lock, on a connection that
// may drop: the write is conditional on the version read, and a retried
// write that finds the version moved checks whether its first attempt
// was applied.
func casIncrement(ctx context.Context, c *zk.Conn, path string) error {
	var data []byte
	var st *zk.Stat
	if err := zk.Retry(ctx, func(ctx context.Context) error {
		var err error
		data, st, err = c.Get(ctx, path)
		return err
	}); err != nil {
		return err
	}
	n, _ := strconv.Atoi(string(data))
	next := []byte(strconv.Itoa(n + 1))
	err := zk.Retry(ctx, func(ctx context.Context) error {
		_, err := c.Set(ctx, path, next, st.Version)
		return err
	})
	if errors.Is(err, zk.ErrBadVersion) {
		now, st2, err2 := c.Get(ctx, path)
		if err2 == nil && string(now) == string(next) && st2.Version == st.Version+1 {
			return nil // the first attempt was applied
		}
	}
	return err
}

// testLockConnectionLoss: the lock under contention while connections drop
// every 40 ms. Mutual exclusion holds (the history, with a release
// recorded as soon as Lost closes, and the counter agree), and no lock node
// is left behind: a create whose answer was lost is found, not repeated.
func testLockConnectionLoss(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	cs, nets := faultyConns(t, s.proc.Addr, 3)
	checker := connect(t, s.proc.Addr)
	dir, counter := root(t)+"/lock", root(t)+"/counter"
	if _, err := checker.Create(ctx, root(t), nil, zk.OpenACL, zk.ModePersistent); err != nil {
		t.Fatal(err)
	}
	if _, err := checker.Create(ctx, counter, []byte("0"), zk.OpenACL, zk.ModePersistent); err != nil {
		t.Fatal(err)
	}
	stop := flapper(nets, 1, 40*time.Millisecond)
	const perSession, rounds = 2, 5
	h := newHistory()
	var mu sync.Mutex
	increments, losses := 0, 0
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i, c := range cs {
		for j := range perSession {
			who := fmt.Sprintf("s%d.%d", i, j)
			l := recipe.NewLock(c, dir)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range rounds {
					if err := l.Lock(ctx); err != nil {
						errs <- fmt.Errorf("%s: Lock: %w", who, err)
						return
					}
					h.acquire(who, true)
					var once sync.Once
					rel := func() { once.Do(func() { h.release(who, true) }) }
					lost := l.Lost()
					go func() { <-lost; rel() }()
					err := casIncrement(ctx, c, counter)
					select {
					case <-lost:
						// The hold ended during the work: it may or may
						// not have been done under the lock.
						mu.Lock()
						losses++
						mu.Unlock()
						errs <- fmt.Errorf("%s lost the lock on a short disconnection", who)
					default:
						if err != nil {
							errs <- fmt.Errorf("%s: increment: %w", who, err)
						} else {
							mu.Lock()
							increments++
							mu.Unlock()
						}
					}
					rel()
					if err := l.Unlock(ctx); err != nil {
						errs <- fmt.Errorf("%s: Unlock: %w", who, err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	cuts := stop()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d connection cuts, %d holds, %d losses", cuts, increments, losses)
	h.check(t, len(cs)*perSession*rounds)
	data, _, err := checker.Get(ctx, counter)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != strconv.Itoa(increments) {
		t.Errorf("counter = %s, want %d", data, increments)
	}
	if left := children(t, checker, dir); len(left) != 0 {
		t.Errorf("lock nodes left: %v", left)
	}
}

// testQueueConnectionLoss: producers, then consumers, while connections
// drop every 30 ms. Every item is in the queue once after the producers
// (an offer whose answer was lost is found, not repeated), and taken
// exactly once by the consumers (a take whose answer was lost is settled by
// its claim node); nothing is left in the queue.
func testQueueConnectionLoss(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	cs, nets := faultyConns(t, s.proc.Addr, 4)
	checker := connect(t, s.proc.Addr)
	dir := root(t)
	const producers, perProducer = 2, 40
	total := producers * perProducer
	var wg sync.WaitGroup
	errs := make(chan error, 16)

	stop := flapper(nets, 2, 30*time.Millisecond)
	for p := range producers {
		q := recipe.NewQueue(cs[p], dir)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perProducer {
				if err := q.Offer(ctx, fmt.Appendf(nil, "%d-%03d", p, i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	cuts := stop()
	offered := map[string]int{}
	for _, c := range children(t, checker, dir) {
		data, _, err := checker.Get(ctx, dir+"/"+c)
		if err != nil {
			t.Fatal(err)
		}
		offered[string(data)]++
	}
	for item, n := range offered {
		if n != 1 {
			t.Errorf("item %s is in the queue %d times", item, n)
		}
	}
	if len(offered) != total {
		t.Errorf("%d distinct items in the queue, want %d", len(offered), total)
	}

	stop = flapper(nets, 3, 30*time.Millisecond)
	var mu sync.Mutex
	taken := map[string]int{}
	left := total
	for k := range 2 {
		q := recipe.NewQueue(cs[2+k], dir)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if left == 0 {
					mu.Unlock()
					return
				}
				left--
				mu.Unlock()
				data, err := q.Take(ctx)
				if err != nil {
					errs <- fmt.Errorf("consumer %d: %w", k, err)
					return
				}
				mu.Lock()
				taken[string(data)]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	cuts += stop()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d connection cuts", cuts)
	for p := range producers {
		for i := range perProducer {
			if n := taken[fmt.Sprintf("%d-%03d", p, i)]; n != 1 {
				t.Errorf("item %d-%03d taken %d times", p, i, n)
			}
		}
	}
	// Claims are ephemeral and deleted after each take; items are all gone.
	waitFor(t, 10*time.Second, "an empty queue directory", func() bool { return len(children(t, checker, dir)) == 0 })
}
