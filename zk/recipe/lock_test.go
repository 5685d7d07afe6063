package recipe_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/zk"
	"github.com/paddockhq/paddock/zk/recipe"
)

func init() {
	addServerTests(
		serverTest{"LockContention", testLockContention},
		serverTest{"LockTryLock", testLockTryLock},
		serverTest{"RWLockContention", testRWLockContention},
		serverTest{"RWLockOrder", testRWLockOrder},
		serverTest{"LockExpiry", testLockExpiry},
		serverTest{"LockShortDisconnect", testLockShortDisconnect},
		serverTest{"LockCancel", testLockCancel},
		serverTest{"LockNodeDeleted", testLockNodeDeleted},
	)
}

// increment reads the counter znode and writes it back plus one, in two
// calls: without mutual exclusion, concurrent increments lose updates.
func increment(ctx context.Context, c *zk.Conn, path string) error {
	data, _, err := c.Get(ctx, path)
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(string(data))
	_, err = c.Set(ctx, path, []byte(strconv.Itoa(n+1)), -1)
	return err
}

// testLockContention: six contenders on three sessions take the lock four
// times each; the recorded history has no overlap, the read-modify-write
// counter lost no update, and no lock node is left.
func testLockContention(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	cs := conns(t, s.proc.Addr, 3)
	dir := root(t) + "/lock"
	counter := root(t) + "/counter"
	if _, err := cs[0].Create(ctx, root(t), nil, zk.OpenACL, zk.ModePersistent); err != nil {
		t.Fatal(err)
	}
	if _, err := cs[0].Create(ctx, counter, []byte("0"), zk.OpenACL, zk.ModePersistent); err != nil {
		t.Fatal(err)
	}
	const perSession, rounds = 2, 4
	h := newHistory()
	var wg sync.WaitGroup
	errs := make(chan error, len(cs)*perSession)
	for i, c := range cs {
		for j := range perSession {
			who := fmt.Sprintf("s%d.%d", i, j)
			l := recipe.NewLock(c, dir, recipe.WithNodeData([]byte(who)))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range rounds {
					if err := l.Lock(ctx); err != nil {
						errs <- fmt.Errorf("%s: Lock: %w", who, err)
						return
					}
					h.acquire(who, true)
					if isClosed(l.Lost()) {
						errs <- fmt.Errorf("%s: Lost closed while holding", who)
					}
					if err := increment(ctx, c, counter); err != nil {
						errs <- fmt.Errorf("%s: increment: %w", who, err)
					}
					h.release(who, true)
					if err := l.Unlock(ctx); err != nil {
						errs <- fmt.Errorf("%s: Unlock: %w", who, err)
						return
					}
					if !isClosed(l.Lost()) {
						errs <- fmt.Errorf("%s: Lost open after Unlock", who)
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	total := len(cs) * perSession * rounds
	h.check(t, total)
	data, _, err := cs[0].Get(ctx, counter)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != strconv.Itoa(total) {
		t.Errorf("counter = %s, want %d (an update was lost: two holders at once)", data, total)
	}
	if left := children(t, cs[0], dir); len(left) != 0 {
		t.Errorf("lock nodes left: %v", left)
	}
}

// testLockTryLock: TryLock fails without waiting while another session
// holds, leaves no node behind, and succeeds once the lock is free; Lock
// and Unlock misuse report ErrHeld and ErrNotHeld.
func testLockTryLock(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	a, b := connect(t, s.proc.Addr), connect(t, s.proc.Addr)
	dir := root(t)
	la, lb := recipe.NewLock(a, dir, recipe.WithNodeData([]byte("a"))), recipe.NewLock(b, dir)
	if err := lb.Unlock(ctx); !errors.Is(err, recipe.ErrNotHeld) {
		t.Errorf("Unlock before Lock: %v, want ErrNotHeld", err)
	}
	if !isClosed(lb.Lost()) {
		t.Error("Lost of a lock not held is open")
	}
	ok, err := la.TryLock(ctx)
	if err != nil || !ok {
		t.Fatalf("TryLock on a free lock = %v, %v", ok, err)
	}
	if err := la.Lock(ctx); !errors.Is(err, recipe.ErrHeld) {
		t.Errorf("Lock while held: %v, want ErrHeld", err)
	}
	data, _, err := a.Get(ctx, la.Node())
	if err != nil || string(data) != "a" {
		t.Errorf("holder's node %s: %q, %v; want the node data", la.Node(), data, err)
	}
	ok, err = lb.TryLock(ctx)
	if err != nil || ok {
		t.Fatalf("TryLock on a held lock = %v, %v; want false", ok, err)
	}
	if got := children(t, a, dir); len(got) != 1 {
		t.Errorf("after a failed TryLock the lock has nodes %v, want only the holder's", got)
	}
	if err := la.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	ok, err = lb.TryLock(ctx)
	if err != nil || !ok {
		t.Fatalf("TryLock after Unlock = %v, %v", ok, err)
	}
	if err := lb.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// testLockCancel: a Lock whose ctx ends while waiting returns ctx's error
// and takes its node out, so that it never blocks those behind it.
func testLockCancel(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	a, b, c := connect(t, s.proc.Addr), connect(t, s.proc.Addr), connect(t, s.proc.Addr)
	dir := root(t)
	la, lb, lc := recipe.NewLock(a, dir), recipe.NewLock(b, dir), recipe.NewLock(c, dir)
	if err := la.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	bctx, cancel := context.WithCancel(ctx)
	berr := make(chan error, 1)
	go func() { berr <- lb.Lock(bctx) }()
	waitFor(t, 10*time.Second, "b's node", func() bool { return len(children(t, a, dir)) == 2 })
	cerr := make(chan error, 1)
	go func() { cerr <- lc.Lock(ctx) }()
	waitFor(t, 10*time.Second, "c's node", func() bool { return len(children(t, a, dir)) == 3 })
	cancel()
	if err := <-berr; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Lock: %v, want context.Canceled", err)
	}
	if got := children(t, a, dir); len(got) != 2 {
		t.Errorf("after the cancelled Lock the lock has nodes %v, want a's and c's", got)
	}
	if err := la.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-cerr; err != nil {
		t.Fatalf("c's Lock after a's Unlock and b's cancel: %v", err)
	}
	lc.Unlock(ctx)
}

// testRWLockContention: readers and writers on three sessions; the history
// has no writer overlapping anyone.
func testRWLockContention(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	cs := conns(t, s.proc.Addr, 3)
	dir := root(t)
	const rounds = 3
	h := newHistory()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	type contender struct {
		who   string
		write bool
		l     *recipe.Lock
	}
	var all []contender
	for i, c := range cs {
		all = append(all,
			contender{fmt.Sprintf("w%d", i), true, recipe.NewWriteLock(c, dir)},
			contender{fmt.Sprintf("r%d.a", i), false, recipe.NewReadLock(c, dir)},
			contender{fmt.Sprintf("r%d.b", i), false, recipe.NewReadLock(c, dir)},
		)
	}
	for _, k := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				if err := k.l.Lock(ctx); err != nil {
					errs <- fmt.Errorf("%s: Lock: %w", k.who, err)
					return
				}
				h.acquire(k.who, k.write)
				// Hold across a round trip, so that others act meanwhile.
				if _, err := cs[0].Sync(ctx, "/"); err != nil {
					errs <- err
				}
				h.release(k.who, k.write)
				if err := k.l.Unlock(ctx); err != nil {
					errs <- fmt.Errorf("%s: Unlock: %w", k.who, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	h.check(t, len(all)*rounds)
}

// testRWLockOrder checks the paper's rules step by step: readers share; a
// writer waits for the readers before it; a reader that comes after a
// waiting writer waits for that writer; and a Lock excludes readers as a
// writer does.
func testRWLockOrder(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	cs := conns(t, s.proc.Addr, 2)
	dir := root(t)
	r1, r2 := recipe.NewReadLock(cs[0], dir), recipe.NewReadLock(cs[1], dir)
	if err := r1.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	ok, err := r2.TryLock(ctx)
	if err != nil || !ok {
		t.Fatalf("second reader TryLock = %v, %v; readers must share", ok, err)
	}
	w := recipe.NewWriteLock(cs[1], dir)
	if ok, err := w.TryLock(ctx); err != nil || ok {
		t.Fatalf("writer TryLock while read-locked = %v, %v; want false", ok, err)
	}
	werr := make(chan error, 1)
	go func() { werr <- w.Lock(ctx) }()
	waitFor(t, 10*time.Second, "the writer's node", func() bool { return len(children(t, cs[0], dir)) == 3 })
	r3 := recipe.NewReadLock(cs[0], dir)
	if ok, err := r3.TryLock(ctx); err != nil || ok {
		t.Errorf("reader after a waiting writer: TryLock = %v, %v; want false", ok, err)
	}
	if err := r1.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-werr:
		t.Fatalf("writer acquired (%v) while a reader holds", err)
	default:
	}
	if err := r2.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-werr; err != nil {
		t.Fatalf("writer Lock: %v", err)
	}
	l := recipe.NewLock(cs[0], dir)
	if ok, err := l.TryLock(ctx); err != nil || ok {
		t.Errorf("Lock TryLock while write-locked = %v, %v; want false", ok, err)
	}
	if err := w.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := r3.TryLock(ctx); err != nil || ok {
		t.Errorf("reader TryLock while a Lock holds = %v, %v; want false", ok, err)
	}
	l.Unlock(ctx)
}

// testLockExpiry: the holder's connection is cut and it cannot reconnect
// for longer than its session timeout. Its Lost closes, before the server
// expires the session and the waiting contender takes over: the history,
// with the holder's release recorded when Lost closed, has no overlap.
func testLockExpiry(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	var fn faultNet
	a := connect(t, s.proc.Addr, fn.option(), zk.WithSessionTimeout(shortSession))
	b := connect(t, s.proc.Addr)
	dir := root(t)
	la, lb := recipe.NewLock(a, dir), recipe.NewLock(b, dir)
	h := newHistory()
	if err := la.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	h.acquire("a", true)
	aLost := make(chan struct{})
	go func() {
		<-la.Lost()
		h.release("a", true)
		close(aLost)
	}()
	berr := make(chan error, 1)
	go func() {
		err := lb.Lock(ctx)
		if err == nil {
			h.acquire("b", true)
		}
		berr <- err
	}()
	waitFor(t, 10*time.Second, "b's node", func() bool { return len(children(t, b, dir)) == 2 })
	fn.cut(true)
	select {
	case <-aLost:
	case <-time.After(5 * a.SessionTimeout()):
		t.Fatal("the holder cut off never learnt it lost the lock")
	}
	if err := <-berr; err != nil {
		t.Fatalf("b's Lock after a's session expired: %v", err)
	}
	h.release("b", true)
	h.check(t, 2)
	// The cut-off Conn ends expired; Unlock then only cleans up.
	waitFor(t, 10*time.Second, "a's session to expire", func() bool { return a.State() == zk.StateExpired })
	if err := la.Unlock(ctx); err != nil {
		t.Errorf("Unlock after the loss: %v", err)
	}
	lb.Unlock(ctx)
}

// testLockShortDisconnect: a connection lost and regained well within the
// grace keeps the lock: Lost stays open past the grace, the holder's node
// is still first, and another session's TryLock fails.
func testLockShortDisconnect(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	var fn faultNet
	states := newStateLog()
	a := connect(t, s.proc.Addr, fn.option(), states.option())
	b := connect(t, s.proc.Addr)
	dir := root(t)
	grace := 500 * time.Millisecond
	la := recipe.NewLock(a, dir, recipe.WithDisconnectGrace(grace))
	if err := la.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	n := states.len()
	fn.cut(false)
	n = states.await(t, n, zk.StateDisconnected, 10*time.Second)
	states.await(t, n, zk.StateSyncConnected, 10*time.Second)
	if closedWithin(la.Lost(), 2*grace) {
		t.Fatal("Lost closed after a disconnection shorter than the grace")
	}
	ok, err := recipe.NewLock(b, dir).TryLock(ctx)
	if err != nil || ok {
		t.Fatalf("other session's TryLock = %v, %v; want false while a holds", ok, err)
	}
	if err := la.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if left := children(t, b, dir); len(left) != 0 {
		t.Errorf("lock nodes left: %v", left)
	}
}

// testLockNodeDeleted: an administrator deletes the holder's node; the
// holder's Lost closes and the next contender takes the lock.
func testLockNodeDeleted(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	a, b := connect(t, s.proc.Addr), connect(t, s.proc.Addr)
	dir := root(t)
	la, lb := recipe.NewLock(a, dir), recipe.NewLock(b, dir)
	if err := la.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	berr := make(chan error, 1)
	go func() { berr <- lb.Lock(ctx) }()
	waitFor(t, 10*time.Second, "b's node", func() bool { return len(children(t, b, dir)) == 2 })
	if err := b.Delete(ctx, la.Node(), -1); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(la.Lost(), 10*time.Second) {
		t.Fatal("Lost still open after the holder's node was deleted")
	}
	if err := <-berr; err != nil {
		t.Fatal(err)
	}
	if err := la.Unlock(ctx); err != nil {
		t.Errorf("Unlock after the loss: %v", err)
	}
	lb.Unlock(ctx)
}
