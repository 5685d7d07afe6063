package recipe_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
	"github.com/paddockhq/paddock/zk"
)

// serverTest is a test that runs against every server kind: TestRecipes
// starts Apache ZooKeeper 3.8 and Paddock once, with a 200 ms tick (so that
// sessions may last from 0.4 s to 4 s), and runs each test against both, in
// parallel, as TestRecipes/<server>/<name>.
type serverTest struct {
	name string
	run  func(t *testing.T, s *testServer)
}

var serverTests []serverTest

// addServerTests registers tests; call it from init.
func addServerTests(tests ...serverTest) { serverTests = append(serverTests, tests...) }

type testServer struct {
	kind string // "paddock" or "zookeeper"
	proc *zktest.Process
}

const tickMS = 200

// Session timeouts: long enough that a busy machine (-race, two cores)
// never expires a session by accident, and short for the tests that expire
// sessions on purpose.
const (
	longSession  = 4 * time.Second
	shortSession = time.Second
)

func TestRecipes(t *testing.T) {
	servers := []*testServer{
		{kind: "paddock", proc: zktest.StartPaddock(t, zktest.PaddockOptions{TickTime: tickMS})},
		{kind: "zookeeper", proc: zktest.StartZooKeeper(t, zktest.ZKOptions{TickTime: tickMS})},
	}
	for _, s := range servers {
		t.Run(s.kind, func(t *testing.T) {
			t.Parallel()
			for _, st := range serverTests {
				t.Run(st.name, func(t *testing.T) {
					t.Parallel()
					st.run(t, s)
				})
			}
		})
	}
}

// root returns a fresh path for the test, so that tests sharing a server
// do not meet. It is not created.
func root(t *testing.T) string {
	return "/" + strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
}

// testCtx returns a context that ends with the test or after 60 s.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// testCtxTimeout returns a context that ends after d.
func testCtxTimeout(t *testing.T, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(testCtx(t), d)
}

// connect opens a session to addr (a connect string), with longSession
// unless opts say otherwise, and closes it when the test ends.
func connect(t *testing.T, addr string, opts ...zk.Option) *zk.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := zk.Connect(ctx, addr, append([]zk.Option{zk.WithSessionTimeout(longSession)}, opts...)...)
	if err != nil {
		t.Fatalf("connect %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// conns opens n sessions.
func conns(t *testing.T, addr string, n int) []*zk.Conn {
	out := make([]*zk.Conn, n)
	for i := range out {
		out[i] = connect(t, addr)
	}
	return out
}

// faultNet is a dialer whose connections the test can cut, as a network
// failure would (no closeSession is sent), and whose new dials it can
// refuse for as long as it likes: refused longer than the session timeout,
// the session expires.
type faultNet struct {
	mu      sync.Mutex
	conns   []net.Conn
	blocked bool
}

var errBlocked = errors.New("faultNet: dial blocked")

func (f *faultNet) option() zk.Option {
	return zk.WithDialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
		f.mu.Lock()
		blocked := f.blocked
		f.mu.Unlock()
		if blocked {
			return nil, errBlocked
		}
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.blocked {
			nc.Close()
			return nil, errBlocked
		}
		f.conns = append(f.conns, nc)
		return nc, nil
	})
}

// cut closes every connection; with block, new dials fail until heal.
func (f *faultNet) cut(block bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.blocked = block
	for _, c := range f.conns {
		c.Close()
	}
	f.conns = nil
}

func (f *faultNet) heal() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.blocked = false
}

// stateLog records a Conn's session states, for waiting on them.
type stateLog struct {
	mu     sync.Mutex
	states []zk.State
	wake   chan struct{}
}

func newStateLog() *stateLog { return &stateLog{wake: make(chan struct{}, 1)} }

func (l *stateLog) option() zk.Option {
	return zk.WithDefaultWatcher(zk.WatcherFunc(func(e zk.Event) {
		if e.Type != zk.EventNone {
			return
		}
		l.mu.Lock()
		l.states = append(l.states, e.State)
		l.mu.Unlock()
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}))
}

// await waits until the states from index from on include want, and
// returns the index after it.
func (l *stateLog) await(t *testing.T, from int, want zk.State, timeout time.Duration) int {
	t.Helper()
	deadline := time.After(timeout)
	for {
		l.mu.Lock()
		for i := from; i < len(l.states); i++ {
			if l.states[i] == want {
				l.mu.Unlock()
				return i + 1
			}
		}
		got := append([]zk.State(nil), l.states...)
		l.mu.Unlock()
		select {
		case <-l.wake:
		case <-deadline:
			t.Fatalf("no %s after state %d within %v; states %v", want, from, timeout, got)
		}
	}
}

func (l *stateLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.states)
}

// history records acquisitions and releases of a lock-like resource under
// a mutex, with a counter for order, and checks online that no two
// exclusive holds (or an exclusive and a shared one) overlap. An
// acquisition is recorded after the recipe says it holds and a release
// before the recipe is told to release, so the recorded intervals lie
// inside the real ones: an overlap recorded is an overlap that happened.
type history struct {
	mu         sync.Mutex
	seq        int
	events     []string
	exclusive  int
	shared     int
	maxShared  int
	holders    map[string]bool
	violations []string
}

func newHistory() *history { return &history{holders: map[string]bool{}} }

func (h *history) acquire(who string, exclusive bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	h.events = append(h.events, fmt.Sprintf("%d +%s", h.seq, who))
	if h.holders[who] {
		h.violations = append(h.violations, fmt.Sprintf("%d: %s acquires again", h.seq, who))
	}
	if h.exclusive > 0 || (exclusive && h.shared > 0) {
		h.violations = append(h.violations, fmt.Sprintf("%d: %s acquires (exclusive %v) while held by %v", h.seq, who, exclusive, h.holdersLocked()))
	}
	h.holders[who] = true
	if exclusive {
		h.exclusive++
	} else {
		h.shared++
		h.maxShared = max(h.maxShared, h.shared)
	}
}

func (h *history) release(who string, exclusive bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	h.events = append(h.events, fmt.Sprintf("%d -%s", h.seq, who))
	if !h.holders[who] {
		h.violations = append(h.violations, fmt.Sprintf("%d: %s releases without holding", h.seq, who))
		return
	}
	delete(h.holders, who)
	if exclusive {
		h.exclusive--
	} else {
		h.shared--
	}
}

func (h *history) holdersLocked() []string {
	var out []string
	for w := range h.holders {
		out = append(out, w)
	}
	return out
}

// check fails t if the history has a violation, or does not have
// wantAcquires acquisitions (-1: any number).
func (h *history) check(t *testing.T, wantAcquires int) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, v := range h.violations {
		t.Errorf("history: %s", v)
	}
	n := 0
	for _, e := range h.events {
		if strings.Contains(e, " +") {
			n++
		}
	}
	if wantAcquires >= 0 && n != wantAcquires {
		t.Errorf("history has %d acquisitions, want %d", n, wantAcquires)
	}
	if t.Failed() {
		t.Logf("history: %s", strings.Join(h.events, ", "))
	}
}

// waitFor polls cond until it holds or timeout passes (for conditions with
// no event to wait on).
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// closedWithin reports whether ch is closed within d.
func closedWithin(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// children lists path's children (nil if it does not exist).
func children(t *testing.T, c *zk.Conn, path string) []string {
	t.Helper()
	ch, _, err := c.Children(testCtx(t), path)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("children %s: %v", path, err)
	}
	return ch
}
