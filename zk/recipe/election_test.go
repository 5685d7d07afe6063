package recipe_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/zk"
	"github.com/paddockhq/paddock/zk/recipe"
)

func init() {
	addServerTests(
		serverTest{"ElectionContention", testElectionContention},
		serverTest{"ElectionExpiry", testElectionExpiry},
		serverTest{"LeaderLatch", testLeaderLatch},
		serverTest{"LeaderLatchExpiry", testLeaderLatchExpiry},
		serverTest{"LeaderLatchCloseDisconnected", testLeaderLatchCloseDisconnected},
	)
}

// testElectionContention: four candidates on four sessions each lead three
// terms. At most one leads at any time in the recorded history; while a
// candidate leads, Leader names it; an observer sees leaders in the order
// they were elected (rising sequence numbers) and ends on "no leader".
func testElectionContention(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	cs := conns(t, s.proc.Addr, 4)
	dir := root(t)
	obsCtx, stopObs := context.WithCancel(ctx)
	defer stopObs()
	observed := recipe.NewElection(connect(t, s.proc.Addr), dir).Observe(obsCtx)
	first := <-observed
	if first.Node != "" {
		t.Fatalf("first observation %+v, want no leader", first)
	}
	const terms = 3
	h := newHistory()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i, c := range cs {
		id := fmt.Sprintf("cand-%d", i)
		e := recipe.NewElection(c, dir)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range terms {
				if err := e.Campaign(ctx, []byte(id)); err != nil {
					errs <- fmt.Errorf("%s: Campaign: %w", id, err)
					return
				}
				h.acquire(id, true)
				l, err := e.Leader(ctx)
				if err != nil || string(l.ID) != id {
					errs <- fmt.Errorf("%s leads but Leader = %+v, %v", id, l, err)
				}
				h.release(id, true)
				if err := e.Resign(ctx); err != nil {
					errs <- fmt.Errorf("%s: Resign: %w", id, err)
					return
				}
			}
		}()
	}
	// The observer's sequence: every leader's node sequence number rises.
	var seen []recipe.LeaderInfo
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var last int64 = -1
collect:
	for {
		select {
		case l, ok := <-observed:
			if !ok {
				t.Fatal("Observe channel closed early")
			}
			seen = append(seen, l)
			if l.Node != "" {
				n := seqOf(t, l.Node)
				if n <= last {
					t.Errorf("observed leader %s after one with sequence %d", l.Node, last)
				}
				last = n
			}
		case <-done:
			break collect
		}
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	h.check(t, len(cs)*terms)
	// Every candidate resigned: the observer ends on "no leader".
	for l := seenLast(seen); l.Node != ""; {
		select {
		case l = <-observed:
		case <-time.After(10 * time.Second):
			t.Fatalf("observer still reports %+v after every candidate resigned", l)
		}
	}
	if _, err := recipe.NewElection(cs[0], dir).Leader(ctx); !errors.Is(err, recipe.ErrNoLeader) {
		t.Errorf("Leader with no candidate: %v, want ErrNoLeader", err)
	}
	stopObs()
	for range observed {
	}
}

func seenLast(s []recipe.LeaderInfo) recipe.LeaderInfo {
	if len(s) == 0 {
		return recipe.LeaderInfo{Node: "?"}
	}
	return s[len(s)-1]
}

func seqOf(t *testing.T, node string) int64 {
	t.Helper()
	var n int64
	if len(node) < 10 {
		t.Fatalf("node %q has no sequence number", node)
	}
	if _, err := fmt.Sscanf(node[len(node)-10:], "%d", &n); err != nil {
		t.Fatalf("node %q: %v", node, err)
	}
	return n
}

// testElectionExpiry: the leader's session expires while it leads (its
// connection cut, redial refused). It learns it lost leadership before the
// next candidate is elected, and Leader then names the next candidate.
func testElectionExpiry(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	var fn faultNet
	a := connect(t, s.proc.Addr, fn.option(), zk.WithSessionTimeout(shortSession))
	b := connect(t, s.proc.Addr)
	dir := root(t)
	ea, eb := recipe.NewElection(a, dir), recipe.NewElection(b, dir)
	h := newHistory()
	if err := ea.Campaign(ctx, []byte("a")); err != nil {
		t.Fatal(err)
	}
	h.acquire("a", true)
	aLost := make(chan struct{})
	go func() {
		<-ea.Lost()
		h.release("a", true)
		close(aLost)
	}()
	berr := make(chan error, 1)
	go func() {
		err := eb.Campaign(ctx, []byte("b"))
		if err == nil {
			h.acquire("b", true)
		}
		berr <- err
	}()
	waitFor(t, 10*time.Second, "b's candidacy", func() bool { return len(children(t, b, dir)) == 2 })
	fn.cut(true)
	select {
	case <-aLost:
	case <-time.After(5 * a.SessionTimeout()):
		t.Fatal("the leader cut off never learnt it lost leadership")
	}
	if err := <-berr; err != nil {
		t.Fatalf("b's Campaign: %v", err)
	}
	l, err := eb.Leader(ctx)
	if err != nil || string(l.ID) != "b" {
		t.Errorf("Leader after a's expiry = %+v, %v; want b", l, err)
	}
	h.release("b", true)
	h.check(t, 2)
	eb.Resign(ctx)
}

// testLeaderLatch: three latches started in order lead in that order, one
// at a time: Await returns for the first only, IsLeader holds for exactly
// one, and closing the leader hands leadership to the next.
func testLeaderLatch(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	cs := conns(t, s.proc.Addr, 3)
	dir := root(t)
	latches := make([]*recipe.LeaderLatch, len(cs))
	for i, c := range cs {
		latches[i] = recipe.NewLeaderLatch(c, dir, []byte(fmt.Sprint(i)))
		if err := latches[i].Await(ctx); !errors.Is(err, recipe.ErrNotStarted) {
			t.Errorf("Await before Start: %v, want ErrNotStarted", err)
		}
		if err := latches[i].Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	h := newHistory()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	order := make(chan int, len(latches))
	for i, l := range latches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.Await(ctx); err != nil {
				errs <- fmt.Errorf("latch %d: Await: %w", i, err)
				return
			}
			h.acquire(fmt.Sprint(i), true)
			order <- i
			leaders := 0
			for _, o := range latches {
				if o.IsLeader() {
					leaders++
				}
			}
			if !l.IsLeader() || leaders != 1 {
				errs <- fmt.Errorf("latch %d leads: IsLeader %v, %d latches say they lead", i, l.IsLeader(), leaders)
			}
			lost := l.Lost()
			h.release(fmt.Sprint(i), true)
			if err := l.Close(ctx); err != nil {
				errs <- fmt.Errorf("latch %d: Close: %w", i, err)
			}
			if !isClosed(lost) || l.IsLeader() {
				errs <- fmt.Errorf("latch %d closed: Lost open or still leader", i)
			}
			if err := l.Await(ctx); !errors.Is(err, recipe.ErrClosed) {
				errs <- fmt.Errorf("latch %d: Await after Close: %v, want ErrClosed", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	close(order)
	for err := range errs {
		t.Error(err)
	}
	want := 0
	for i := range order {
		if i != want {
			t.Errorf("latch %d led as number %d; latches lead in the order they started", i, want)
		}
		want++
	}
	h.check(t, len(latches))
	if left := children(t, cs[0], dir); len(left) != 0 {
		t.Errorf("candidate nodes left after Close: %v", left)
	}
}

// testLeaderLatchExpiry: the leading latch's session expires; the latch
// stops leading (Lost closes, IsLeader false) before the other latch leads,
// and its Await reports the expiry.
func testLeaderLatchExpiry(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	var fn faultNet
	a := connect(t, s.proc.Addr, fn.option(), zk.WithSessionTimeout(shortSession))
	b := connect(t, s.proc.Addr)
	dir := root(t)
	la, lb := recipe.NewLeaderLatch(a, dir, []byte("a")), recipe.NewLeaderLatch(b, dir, []byte("b"))
	if err := la.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := la.Await(ctx); err != nil {
		t.Fatal(err)
	}
	if err := lb.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer lb.Close(ctx)
	h := newHistory()
	h.acquire("a", true)
	aLost := make(chan struct{})
	go func() {
		<-la.Lost()
		h.release("a", true)
		close(aLost)
	}()
	berr := make(chan error, 1)
	go func() {
		err := lb.Await(ctx)
		if err == nil {
			h.acquire("b", true)
		}
		berr <- err
	}()
	fn.cut(true)
	select {
	case <-aLost:
	case <-time.After(5 * a.SessionTimeout()):
		t.Fatal("the leading latch cut off never learnt it lost leadership")
	}
	if la.IsLeader() {
		t.Error("IsLeader after Lost")
	}
	if err := <-berr; err != nil {
		t.Fatalf("b's Await: %v", err)
	}
	h.release("b", true)
	h.check(t, 2)
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := la.Await(actx); !errors.Is(err, zk.ErrSessionExpired) {
		t.Errorf("Await of the expired latch: %v, want ErrSessionExpired", err)
	}
	la.Close(ctx)
}

// testLeaderLatchCloseDisconnected: a latch loses leadership to a
// disconnection longer than the grace, and is closed while still
// disconnected (its monitor trying to delete its node). Close returns by
// its ctx, the latch stops at once (Await says ErrClosed), and once the
// session is back the latch's goroutine ends having deleted its node and
// without entering the election again.
func testLeaderLatchCloseDisconnected(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	var fn faultNet
	a := connect(t, s.proc.Addr, fn.option())
	b := connect(t, s.proc.Addr)
	dir := root(t)
	l := recipe.NewLeaderLatch(a, dir, []byte("a"), recipe.WithDisconnectGrace(50*time.Millisecond))
	if err := l.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Await(ctx); err != nil {
		t.Fatal(err)
	}
	_, before, err := b.Exists(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	fn.cut(true)
	if !closedWithin(l.Lost(), 5*time.Second) {
		t.Fatal("leadership not lost after a disconnection longer than the grace")
	}
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	l.Close(cctx) // ctx's error: the node cannot be deleted while cut off
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v with a 100ms ctx", d)
	}
	actx, acancel := context.WithTimeout(ctx, time.Second)
	defer acancel()
	if err := l.Await(actx); !errors.Is(err, recipe.ErrClosed) {
		t.Errorf("Await after Close while disconnected: %v, want ErrClosed at once", err)
	}
	fn.heal()
	if !closedWithin(recipe.LatchDone(l), 10*time.Second) {
		t.Fatal("the closed latch's goroutine did not end after the session came back")
	}
	if kids := children(t, b, dir); len(kids) != 0 {
		t.Errorf("closed latch left %v", kids)
	}
	_, after, err := b.Exists(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	// One change to the children: the deletion of the latch's node.
	if n := after.Cversion - before.Cversion; n != 1 {
		t.Errorf("%d changes to the election's children after the loss, want 1 (the closed latch entered the election again)", n)
	}
}
