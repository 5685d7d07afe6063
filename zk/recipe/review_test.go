package recipe_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/zk"
	"github.com/paddockhq/paddock/zk/recipe"
)

func init() {
	addServerTests(
		serverTest{"MembershipLeaveTwice", testMembershipLeaveTwice},
		serverTest{"ObserveRemovesWatch", testObserveRemovesWatch},
		serverTest{"TreeCacheOneTimeCloseRemovesWatches", testTreeCacheOneTimeCloseRemovesWatches},
		serverTest{"LeaderLatchNodeDeletedWhileWaiting", testLeaderLatchNodeDeletedWhileWaiting},
		serverTest{"UnlockAfterAuthFailure", testUnlockAfterAuthFailure},
		serverTest{"HoldGraceWhileCheckWaits", testHoldGraceWhileCheckWaits},
	)
}

// noWatcher reports whether conn has no watcher of any kind registered on
// path (RemoveWatches of every watcher, locally, finds none).
func noWatcher(t *testing.T, conn *zk.Conn, path string) bool {
	t.Helper()
	err := conn.RemoveWatches(testCtx(t), path, nil, zk.WatcherAny, true)
	if err != nil && !errors.Is(err, zk.ErrNoWatcher) {
		t.Fatalf("RemoveWatches %s: %v", path, err)
	}
	return errors.Is(err, zk.ErrNoWatcher)
}

// testMembershipLeaveTwice: Leave on a membership already left has nothing
// to release and says so with ErrNotHeld, as Unlock and Resign do.
func testMembershipLeaveTwice(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	conn := connect(t, s.proc.Addr)
	m, err := recipe.NewGroup(conn, root(t)).Join(ctx, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Leave(ctx); err != nil {
		t.Fatalf("first Leave: %v", err)
	}
	if err := m.Leave(ctx); !errors.Is(err, recipe.ErrNotHeld) {
		t.Errorf("second Leave: %v, want ErrNotHeld", err)
	}
}

// testObserveRemovesWatch: once Observe's ctx ends and its channel is
// closed, the observer leaves no watcher behind on its Conn (neither on the
// leader's node nor on the directory).
func testObserveRemovesWatch(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	a, b := connect(t, s.proc.Addr), connect(t, s.proc.Addr)
	dir := root(t)
	cand := recipe.NewElection(b, dir)
	if err := cand.Campaign(ctx, []byte("b")); err != nil {
		t.Fatal(err)
	}
	defer cand.Resign(ctx)
	for _, tc := range []struct {
		name string
		path string
	}{
		{"leader", ""},
		{"missing directory", dir + "/missing"},
	} {
		obsDir := dir
		if tc.path != "" {
			obsDir = tc.path
		}
		octx, cancel := context.WithCancel(ctx)
		ch := recipe.NewElection(a, obsDir).Observe(octx)
		var first recipe.LeaderInfo
		select {
		case first = <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no first observation", tc.name)
		}
		watched := first.Node
		if watched == "" {
			watched = obsDir
		}
		cancel()
		deadline := time.After(10 * time.Second)
		for open := true; open; {
			select {
			case _, open = <-ch:
			case <-deadline:
				t.Fatalf("%s: Observe's channel not closed after its ctx ended", tc.name)
			}
		}
		if !noWatcher(t, a, watched) {
			t.Errorf("%s: a watcher is left on %s after Observe ended", tc.name, watched)
		}
	}
}

// testTreeCacheOneTimeCloseRemovesWatches: a TreeCache kept by one-time
// watches removes them when closed, as its Close says, on every node.
func testTreeCacheOneTimeCloseRemovesWatches(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	conn := connect(t, s.proc.Addr)
	p := root(t)
	paths := []string{p, p + "/a", p + "/a/b", p + "/c"}
	for _, q := range paths {
		if _, err := conn.Create(ctx, q, []byte("x"), zk.OpenACL, zk.ModePersistent); err != nil {
			t.Fatal(err)
		}
	}
	c := recipe.NewTreeCache(conn, p, recipe.WithOneTimeWatches())
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if c.PersistentWatch() {
		t.Fatal("the cache uses a persistent watch despite WithOneTimeWatches")
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, q := range paths {
		if !noWatcher(t, conn, q) {
			t.Errorf("a watcher is left on %s after Close", q)
		}
	}
}

// testLeaderLatchNodeDeletedWhileWaiting: a latch waiting for its turn
// whose node is deleted by someone else stays in the election (as
// Curator's LeaderLatch, which makes a new node): it leads once the
// leader leaves.
func testLeaderLatchNodeDeletedWhileWaiting(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	a, b := connect(t, s.proc.Addr), connect(t, s.proc.Addr)
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
	kids := children(t, a, dir)
	if len(kids) != 2 {
		t.Fatalf("children %v, want two candidates", kids)
	}
	slices.SortFunc(kids, func(x, y string) int { return int(seqOf(t, x) - seqOf(t, y)) })
	if err := a.Delete(ctx, dir+"/"+kids[1], -1); err != nil {
		t.Fatal(err)
	}
	// b's latch watches a's node: it finds its own node gone once a leaves.
	if err := la.Close(ctx); err != nil {
		t.Fatal(err)
	}
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := lb.Await(actx); err != nil {
		t.Fatalf("b's Await after its node was deleted and a left: %v, want leadership", err)
	}
	if err := lb.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if left := children(t, a, dir); len(left) != 0 {
		t.Errorf("nodes left after both latches closed: %v", left)
	}
}

// testUnlockAfterAuthFailure: a hold lost because the session failed
// authentication is cleaned up by Unlock, which returns nil as after any
// other loss.
func testUnlockAfterAuthFailure(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	conn := connect(t, s.proc.Addr)
	l := recipe.NewLock(conn, root(t))
	if err := l.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn.AddAuth(actx, "no-such-scheme", []byte("x")) // fails the session
	if !closedWithin(l.Lost(), 10*time.Second) {
		t.Fatal("the hold was not lost after the session failed authentication")
	}
	if st := conn.State(); st != zk.StateAuthFailed {
		t.Fatalf("session state %v, want AuthFailed", st)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Errorf("Unlock after the loss: %v, want nil", err)
	}
}

// opCutter is a dialer whose connection, once armed, is closed instead of
// writing the first request with opcode op; from then on, until healed, new
// connections go to a server that accepts them and never answers, so that
// each connection attempt takes the Conn's whole connect timeout.
type opCutter struct {
	mu      sync.Mutex
	op      uint32
	armed   bool
	blocked bool
	hole    net.Listener
}

func newOpCutter(t *testing.T, op uint32) *opCutter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, nc := range conns {
			nc.Close()
		}
	})
	return &opCutter{op: op, hole: ln}
}

func (o *opCutter) option() zk.Option {
	return zk.WithDialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
		o.mu.Lock()
		blocked := o.blocked
		o.mu.Unlock()
		if blocked {
			addr = o.hole.Addr().String()
		}
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &filterConn{Conn: nc, filter: func(frame []byte) verdict {
			o.mu.Lock()
			defer o.mu.Unlock()
			if o.armed && opcode(frame) == o.op {
				o.armed, o.blocked = false, true
				return cut
			}
			return send
		}}, nil
	})
}

func (o *opCutter) heal() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.blocked, o.armed = false, false
}

// testHoldGraceWhileCheckWaits: the hold monitor's check of its node fails
// with connection loss, and the attempts to connect again hang (a server
// that never answers) for the connect timeout, a third of the session
// timeout: the retried check waits for them, and the hold must still be
// lost once the grace has passed.
func testHoldGraceWhileCheckWaits(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	cut := newOpCutter(t, 3) // exists: the monitor's first call
	a := connect(t, s.proc.Addr, cut.option(), zk.WithSessionTimeout(longSession))
	if a.SessionTimeout() < 3*time.Second {
		t.Fatalf("negotiated session timeout %v, want about %v", a.SessionTimeout(), longSession)
	}
	l := recipe.NewLock(a, root(t), recipe.WithDisconnectGrace(100*time.Millisecond))
	// No contender is ahead: Lock sends no exists; the first one is the
	// monitor's.
	cut.mu.Lock()
	cut.armed = true
	cut.mu.Unlock()
	if err := l.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer cut.heal()
	// A connection attempt takes a third of the session timeout (over
	// 1.3 s): a hold lost within 800 ms was lost by the grace.
	if !closedWithin(l.Lost(), 800*time.Millisecond) {
		t.Fatalf("Lost not closed 800ms into a disconnection, with a 100ms grace (session state %v)", a.State())
	}
}
