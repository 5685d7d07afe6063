package recipe_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/zk"
	"github.com/paddockhq/paddock/zk/recipe"
)

func init() {
	addServerTests(
		serverTest{"StartAgainAfterFailedStart", testStartAgainAfterFailedStart},
		serverTest{"UnlockAfterDisconnectLoss", testUnlockAfterDisconnectLoss},
		serverTest{"ReleaseDeletesLateTwin", testReleaseDeletesLateTwin},
		serverTest{"TakeSettlesAfterCtxEnds", testTakeSettlesAfterCtxEnds},
	)
}

// startable is what ConfigWatcher, NodeCache and TreeCache share.
type startable interface {
	Start(ctx context.Context) error
	Close(ctx context.Context) error
}

// testStartAgainAfterFailedStart: a Start that fails (here its ctx ends
// while no server can be reached) leaves the watcher or cache not started,
// as ErrNotStarted's doc says ("whose Start has not succeeded"), so that
// Start may be called again; Start after Close says ErrClosed.
func testStartAgainAfterFailedStart(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	fn := &faultNet{}
	conn := connect(t, s.proc.Addr, fn.option())
	p := root(t)
	if _, err := conn.Create(ctx, p, []byte("v1"), zk.OpenACL, zk.ModePersistent); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		make  func() startable
		value func(startable) (recipe.Node, error) // nil: no Value
	}{
		{"ConfigWatcher", func() startable { return recipe.NewConfigWatcher(conn, p) },
			func(x startable) (recipe.Node, error) { return x.(*recipe.ConfigWatcher).Value(ctx) }},
		{"NodeCache", func() startable { return recipe.NewNodeCache(conn, p) },
			func(x startable) (recipe.Node, error) { return x.(*recipe.NodeCache).Value(ctx) }},
		{"TreeCache", func() startable { return recipe.NewTreeCache(conn, p) }, nil},
	} {
		w := tc.make()
		fn.cut(true)
		sctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		err := w.Start(sctx)
		cancel()
		fn.heal()
		if err == nil {
			t.Fatalf("%s: Start succeeded with no server reachable", tc.name)
		}
		if tc.value != nil {
			if _, err := tc.value(w); !errors.Is(err, recipe.ErrNotStarted) {
				t.Errorf("%s: Value after a failed Start: %v, want ErrNotStarted", tc.name, err)
			}
		}
		if err := w.Start(ctx); err != nil {
			t.Errorf("%s: Start again after a failed Start: %v, want nil", tc.name, err)
			continue
		}
		if tc.value != nil {
			n, err := tc.value(w)
			if err != nil || string(n.Data) != "v1" {
				t.Errorf("%s: Value after the second Start: %q, %v", tc.name, n.Data, err)
			}
		} else if n, ok := w.(*recipe.TreeCache).Get(p); !ok || string(n.Data) != "v1" {
			t.Errorf("%s: Get after the second Start: %q, %v", tc.name, n.Data, ok)
		}
		if err := w.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if err := w.Start(ctx); !errors.Is(err, recipe.ErrClosed) {
			t.Errorf("%s: Start after Close: %v, want ErrClosed", tc.name, err)
		}
	}
}

// testUnlockAfterDisconnectLoss: a hold lost because the Conn stayed
// disconnected longer than the grace is cleaned up by Unlock, which returns
// nil as its doc says ("After a loss, Unlock only cleans up and returns
// nil"), even while the Conn is still disconnected; the node is deleted
// once the session is back, so that it blocks nobody.
func testUnlockAfterDisconnectLoss(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	fn := &faultNet{}
	a := connect(t, s.proc.Addr, fn.option())
	checker := connect(t, s.proc.Addr)
	dir := root(t)
	l := recipe.NewLock(a, dir, recipe.WithDisconnectGrace(100*time.Millisecond))
	if err := l.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	fn.cut(true)
	if !closedWithin(l.Lost(), 5*time.Second) {
		fn.heal()
		t.Fatal("the hold was not lost while disconnected")
	}
	uctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err := l.Unlock(uctx)
	cancel()
	fn.heal()
	if err != nil {
		t.Errorf("Unlock after a loss, while disconnected: %v, want nil", err)
	}
	if err := l.Unlock(ctx); !errors.Is(err, recipe.ErrNotHeld) {
		t.Errorf("second Unlock: %v, want ErrNotHeld", err)
	}
	waitFor(t, 10*time.Second, "the lost hold's node deleted", func() bool { return len(children(t, checker, dir)) == 0 })
}

// testReleaseDeletesLateTwin: a twin of a contender's node (what a
// protected create whose answer was lost makes when a server applies it
// late, after the contender found or made its node) that appears while the
// contender holds is deleted when it releases: it neither blocks the
// contenders after it until the session ends nor shows as the leader.
func testReleaseDeletesLateTwin(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	a, b := connect(t, s.proc.Addr), connect(t, s.proc.Addr)
	twin := func(node string) {
		t.Helper()
		i := strings.LastIndexByte(node, '/')
		given, ok := zk.ParseProtectedName(node[i+1:])
		if !ok {
			t.Fatalf("node %s is not a protected name", node)
		}
		prefix := node[:len(node)-len(given)]
		name := strings.TrimRight(given, "0123456789")
		if _, err := a.Create(ctx, prefix+name, nil, zk.OpenACL, zk.ModeEphemeralSequential); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("lock", func(t *testing.T) {
		dir := root(t)
		la, lb := recipe.NewLock(a, dir), recipe.NewLock(b, dir)
		if err := la.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		twin(la.Node())
		done := make(chan error, 1)
		bctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		go func() { done <- lb.Lock(bctx) }()
		waitFor(t, 10*time.Second, "b's node", func() bool { return len(children(t, a, dir)) == 3 })
		if err := la.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("b's Lock after a released: %v (nodes %v)", err, children(t, a, dir))
		}
		if err := lb.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("election", func(t *testing.T) {
		dir := root(t)
		e := recipe.NewElection(a, dir)
		if err := e.Campaign(ctx, []byte("a")); err != nil {
			t.Fatal(err)
		}
		l, err := e.Leader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		twin(l.Node)
		if err := e.Resign(ctx); err != nil {
			t.Fatal(err)
		}
		if l, err := recipe.NewElection(b, dir).Leader(ctx); !errors.Is(err, recipe.ErrNoLeader) {
			t.Errorf("Leader after the only candidate resigned: %+v, %v; want ErrNoLeader", l, err)
		}
	})
}

// opHolder is a dialer whose connection, once armed, keeps back the first
// request with opcode op, and every request after it, instead of sending
// them: the request is in flight, unanswered, until the test cuts the
// connection (then it was never applied) and applies it itself, late.
type opHolder struct {
	mu    sync.Mutex
	op    uint32
	armed bool
	held  []byte // the frame kept back
	hit   chan struct{}
	conns []net.Conn
}

func newOpHolder(op uint32) *opHolder { return &opHolder{op: op, hit: make(chan struct{})} }

func (o *opHolder) option() zk.Option {
	return zk.WithDialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		o.mu.Lock()
		o.conns = append(o.conns, nc)
		o.mu.Unlock()
		return &filterConn{Conn: nc, filter: func(frame []byte) verdict {
			o.mu.Lock()
			defer o.mu.Unlock()
			if o.armed && opcode(frame) == o.op {
				o.armed, o.held = false, frame
				close(o.hit)
				return hold
			}
			return send
		}}, nil
	})
}

func (o *opHolder) arm() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.armed = true
}

// cut closes every connection.
func (o *opHolder) cut() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range o.conns {
		c.Close()
	}
	o.conns = nil
}

// heldString returns the string field of the held frame that starts with
// prefix (a jute string: a 4-byte length, then the bytes).
func heldString(t *testing.T, frame []byte, prefix string) string {
	t.Helper()
	i := bytes.Index(frame, []byte(prefix))
	if i < 4 {
		t.Fatalf("no %q in the held request", prefix)
	}
	n := int(binary.BigEndian.Uint32(frame[i-4:]))
	if i+n > len(frame) {
		t.Fatalf("bad string length %d in the held request", n)
	}
	return string(frame[i : i+n])
}

// testTakeSettlesAfterCtxEnds: Take's ctx ends while its delete-and-claim
// multi is in flight, and the connection is then lost: the multi may still
// be applied (here the test applies it, late, as a server could). Take
// must not return without knowing whether it took the item: the item is
// then either returned or still in the queue, never dropped.
func testTakeSettlesAfterCtxEnds(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	hold := newOpHolder(14) // multi
	c := connect(t, s.proc.Addr, hold.option())
	checker := connect(t, s.proc.Addr)
	dir := root(t)
	q := recipe.NewQueue(c, dir)
	if err := q.Offer(ctx, []byte("item")); err != nil {
		t.Fatal(err)
	}
	items := children(t, checker, dir)
	if len(items) != 1 {
		t.Fatalf("queue %v, want one item", items)
	}
	item := dir + "/" + items[0]
	hold.arm()
	tctx, cancel := context.WithCancel(ctx)
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := q.Take(tctx)
		done <- result{data, err}
	}()
	select {
	case <-hold.hit:
	case <-time.After(10 * time.Second):
		t.Fatal("Take sent no multi")
	}
	cancel()
	hold.cut()
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Take did not return after its ctx ended")
	}
	hold.mu.Lock()
	frame := hold.held
	hold.mu.Unlock()
	claim := heldString(t, frame, dir+"/claim-")
	// The held multi, applied late (on the consumer's session, as the
	// server would have).
	_, lateErr := c.Multi(ctx,
		&zk.DeleteOp{Path: item, Version: 0},
		&zk.CreateOp{Path: claim, ACL: zk.OpenACL, Mode: zk.ModeEphemeral},
	)
	t.Logf("Take: %v; the late multi: %v", r.err, lateErr)
	inQueue := 0
	for _, ch := range children(t, checker, dir) {
		if ch == items[0] {
			inQueue++
		}
	}
	returned := 0
	if r.err == nil {
		returned = 1
		if string(r.data) != "item" {
			t.Errorf("Take returned %q", r.data)
		}
	}
	if returned+inQueue != 1 {
		t.Errorf("item returned %d times and in the queue %d times (Take: %v; late multi: %v)", returned, inQueue, r.err, lateErr)
	}
}
