package ensemble_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
	"github.com/paddockhq/paddock/zk"
)

const (
	// waitFor bounds every wait for a leader, a reconnect or replication.
	waitFor = 30 * time.Second
	// callTimeout bounds one client call.
	callTimeout = 15 * time.Second
	// pollEvery is the interval between checks of a polled condition.
	pollEvery = 20 * time.Millisecond
	// loadSessionTimeout is the writers' session timeout: short enough
	// that a writer on a paused member gives up on it (after two thirds of
	// it) within a few seconds.
	loadSessionTimeout = 4 * time.Second
)

// startEnsemble starts a Paddock ensemble with three voters, observers
// observers, tickTime tick (ms) and extra zoo.cfg lines.
func startEnsemble(t *testing.T, observers, tick int, extra ...string) *zktest.Ensemble {
	t.Helper()
	return zktest.StartPaddockEnsemble(t, zktest.EnsembleOptions{Observers: observers, TickTime: tick, ExtraConfig: extra})
}

// ctx returns a context for one call.
func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(t.Context(), callTimeout)
	t.Cleanup(cancel)
	return c
}

// connect opens a session through connectString and closes it at cleanup.
func connect(t testing.TB, connectString string, opts ...zk.Option) *zk.Conn {
	t.Helper()
	c, err := zk.Connect(ctx(t), connectString, opts...)
	if err != nil {
		t.Fatalf("connect to %s: %v", connectString, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// eventually polls cond every pollEvery until it returns nil or timeout
// passes, then fails t with cond's last error.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true after %v: %v", what, timeout, err)
		}
		<-tick.C
	}
}

// others returns the members other than the given ones.
func others(e *zktest.Ensemble, not ...*zktest.Process) []*zktest.Process {
	var out []*zktest.Process
	for _, p := range e.Members {
		if !slices.Contains(not, p) {
			out = append(out, p)
		}
	}
	return out
}

// followers returns the voting members other than leader.
func followers(e *zktest.Ensemble, leader *zktest.Process) []*zktest.Process {
	var out []*zktest.Process
	for _, p := range e.Voters() {
		if p != leader {
			out = append(out, p)
		}
	}
	return out
}

// connectString joins the members' addresses.
func connectString(members ...*zktest.Process) string {
	addrs := make([]string, len(members))
	for i, p := range members {
		addrs[i] = p.Addr
	}
	return strings.Join(addrs, ",")
}

// mustCreate creates path with data (parents must exist).
func mustCreate(t testing.TB, c *zk.Conn, path, data string, mode zk.CreateMode) string {
	t.Helper()
	name, err := c.Create(ctx(t), path, []byte(data), zk.OpenACL, mode)
	if err != nil {
		t.Fatalf("create %s through %s: %v", path, c.Server(), err)
	}
	return name
}

// status returns a member's srvr status or fails t.
func status(t testing.TB, e *zktest.Ensemble, p *zktest.Process) zktest.MemberStatus {
	t.Helper()
	st, err := e.Status(p)
	if err != nil {
		t.Fatalf("member %d: %v; log ends:\n%s", e.ID(p), err, p.LogTail())
	}
	return st
}

// waitCaughtUp waits until p has applied as much as the leader, by srvr
// Zxid, with no write in between.
func waitCaughtUp(t testing.TB, e *zktest.Ensemble, p, leader *zktest.Process) {
	t.Helper()
	eventually(t, waitFor, fmt.Sprintf("member %d catches up with leader %d", e.ID(p), e.ID(leader)), func() error {
		lst, err := e.Status(leader)
		if err != nil {
			return err
		}
		st, err := e.Status(p)
		if err != nil {
			return err
		}
		if st.Zxid != lst.Zxid {
			return fmt.Errorf("zxid 0x%x, leader's 0x%x", st.Zxid, lst.Zxid)
		}
		return nil
	})
}

// logSize returns the current length of p's log, to read what comes after.
func logSize(t testing.TB, p *zktest.Process) int64 {
	t.Helper()
	fi, err := os.Stat(p.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// logSince returns p's log from byte offset from on.
func logSince(t testing.TB, p *zktest.Process, from int64) string {
	t.Helper()
	b, err := os.ReadFile(p.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	if from > int64(len(b)) {
		return ""
	}
	return string(b[from:])
}

// countLines returns the number of lines of log that contain all of want.
func countLines(log string, want ...string) int {
	n := 0
	for line := range strings.SplitSeq(log, "\n") {
		ok := true
		for _, w := range want {
			if !strings.Contains(line, w) {
				ok = false
				break
			}
		}
		if ok && line != "" {
			n++
		}
	}
	return n
}

// write is one create a writer attempted.
type write struct {
	data       string // unique per write: "w<writer>-<seq>"
	path       string // the created node, when acknowledged
	sent, done time.Time
	err        error
}

// load is a set of writers creating sequential znodes under root, each
// with its own session through the given connect string, until stopped.
// Each write has unique data; a failed write is never retried, so a
// znode's data says which write made it.
type load struct {
	t      *testing.T
	root   string
	conns  []*zk.Conn
	stop   chan struct{}
	wg     sync.WaitGroup
	notify chan struct{} // signalled after every finished write

	mu     sync.Mutex
	writes [][]write // per writer
	fatal  error     // a writer that cannot go on (session expired)
}

// startLoad creates root and starts n writers through connectString, with
// the given session timeout.
func startLoad(t *testing.T, connectString, root string, n int, sessionTimeout time.Duration) *load {
	t.Helper()
	l := &load{t: t, root: root, stop: make(chan struct{}), notify: make(chan struct{}, 1), writes: make([][]write, n)}
	setup := connect(t, connectString)
	mustCreate(t, setup, root, "", zk.ModePersistent)
	setup.Close()
	for range n {
		l.conns = append(l.conns, connect(t, connectString, zk.WithSessionTimeout(sessionTimeout)))
	}
	for w, c := range l.conns {
		l.wg.Go(func() { l.run(w, c) })
	}
	t.Cleanup(l.halt)
	return l
}

func (l *load) run(w int, c *zk.Conn) {
	for seq := 0; ; seq++ {
		select {
		case <-l.stop:
			return
		default:
		}
		wr := write{data: fmt.Sprintf("w%d-%d", w, seq), sent: time.Now()}
		cctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		wr.path, wr.err = c.Create(cctx, l.root+"/n-", []byte(wr.data), zk.OpenACL, zk.ModePersistentSequential)
		cancel()
		wr.done = time.Now()
		l.mu.Lock()
		l.writes[w] = append(l.writes[w], wr)
		if errors.Is(wr.err, zk.ErrSessionExpired) || errors.Is(wr.err, zk.ErrClosed) {
			l.fatal = fmt.Errorf("writer %d: %w", w, wr.err)
			l.mu.Unlock()
			l.signal()
			return
		}
		l.mu.Unlock()
		l.signal()
	}
}

func (l *load) signal() {
	select {
	case l.notify <- struct{}{}:
	default:
	}
}

// halt stops the writers and waits for them; it is idempotent.
func (l *load) halt() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
}

// all returns every write so far.
func (l *load) all() []write {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []write
	for _, ws := range l.writes {
		out = append(out, ws...)
	}
	return out
}

// waitAcked waits until cond holds for the writes so far, failing t after
// timeout or when a writer has stopped for good.
func (l *load) waitAcked(timeout time.Duration, what string, cond func(per [][]write) bool) {
	l.t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		ok, fatal := cond(l.writes), l.fatal
		l.mu.Unlock()
		if fatal != nil {
			l.t.Fatalf("%s: %v", what, fatal)
		}
		if ok {
			return
		}
		select {
		case <-l.notify:
		case <-deadline.C:
			l.t.Fatalf("%s: not within %v; writes per writer: %s", what, timeout, l.summary())
		}
	}
}

// waitAckedAfter waits until n writes sent after since are acknowledged
// (by any writers) and returns the earliest acknowledgement among them.
func (l *load) waitAckedAfter(since time.Time, n int, timeout time.Duration) time.Time {
	l.t.Helper()
	var first time.Time
	l.waitAcked(timeout, fmt.Sprintf("%d writes sent after %s acknowledged", n, since.Format("15:04:05.000")), func(per [][]write) bool {
		count := 0
		first = time.Time{}
		for _, ws := range per {
			for _, w := range ws {
				if w.err == nil && w.sent.After(since) {
					count++
					if first.IsZero() || w.done.Before(first) {
						first = w.done
					}
				}
			}
		}
		return count >= n
	})
	return first
}

// waitEveryWriterAckedAfter waits until every writer has an acknowledged
// write sent after since: every session has found a serving member.
func (l *load) waitEveryWriterAckedAfter(since time.Time, timeout time.Duration) {
	l.t.Helper()
	l.waitAcked(timeout, "every writer acknowledged after "+since.Format("15:04:05.000"), func(per [][]write) bool {
		for _, ws := range per {
			if !slices.ContainsFunc(ws, func(w write) bool { return w.err == nil && w.sent.After(since) }) {
				return false
			}
		}
		return true
	})
}

// errorsAfter returns the failed writes sent after since, by writer.
func (l *load) errorsAfter(since time.Time) map[int][]error {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[int][]error{}
	for w, ws := range l.writes {
		for _, wr := range ws {
			if wr.err != nil && wr.sent.After(since) {
				out[w] = append(out[w], wr.err)
			}
		}
	}
	return out
}

func (l *load) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for w, ws := range l.writes {
		acked, failed := 0, 0
		var last error
		for _, wr := range ws {
			if wr.err == nil {
				acked++
			} else {
				failed++
				last = wr.err
			}
		}
		fmt.Fprintf(&b, "[w%d on %s: %d acked, %d failed, last error %v] ", w, l.conns[w].Server(), acked, failed, last)
	}
	return b.String()
}

// memberView is what one member serves under the load's root: data by
// child name.
type memberView map[string]string

// read syncs and reads every child of root through member p alone.
func readThrough(t *testing.T, e *zktest.Ensemble, p *zktest.Process, root string) memberView {
	t.Helper()
	c := connect(t, p.Addr)
	defer c.Close()
	if _, err := c.Sync(ctx(t), root); err != nil {
		t.Fatalf("sync %s through member %d: %v", root, e.ID(p), err)
	}
	kids, _, err := c.Children(ctx(t), root)
	if err != nil {
		t.Fatalf("children of %s through member %d: %v", root, e.ID(p), err)
	}
	view := make(memberView, len(kids))
	var mu sync.Mutex
	var wg sync.WaitGroup
	var firstErr error
	gctx := ctx(t)
	for _, k := range kids {
		wg.Add(1)
		c.GetAsync(gctx, root+"/"+k, nil, func(data []byte, _ *zk.Stat, err error) {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("get %s/%s: %w", root, k, err)
			}
			view[k] = string(data)
		})
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("reading through member %d: %v", e.ID(p), firstErr)
	}
	return view
}

// verify checks, through every member (each read after a sync through
// that member alone), that every acknowledged write exists exactly once,
// under the name its writer was told, that no write appears twice, and
// that every member serves the same children. It returns the number of
// acknowledged writes.
func (l *load) verify(t *testing.T, e *zktest.Ensemble) int {
	t.Helper()
	writes := l.all()
	acked := 0
	for _, w := range writes {
		if w.err == nil {
			acked++
		}
	}
	var first memberView
	for _, p := range e.Members {
		view := readThrough(t, e, p, l.root)
		byData := make(map[string][]string, len(view))
		for name, data := range view {
			byData[data] = append(byData[data], name)
		}
		for data, names := range byData {
			if len(names) > 1 {
				t.Errorf("member %d: write %q appears %d times: %v", e.ID(p), data, len(names), names)
			}
		}
		for _, w := range writes {
			if w.err != nil {
				continue
			}
			names := byData[w.data]
			if len(names) != 1 || l.root+"/"+names[0] != w.path {
				t.Errorf("member %d: acknowledged write %q (created %s at %s) found as %v",
					e.ID(p), w.data, w.path, w.done.Format("15:04:05.000"), names)
			}
		}
		if first == nil {
			first = view
		} else if len(view) != len(first) {
			t.Errorf("member %d serves %d children of %s, member 1 %d", e.ID(p), len(view), l.root, len(first))
		} else {
			for name, data := range view {
				if first[name] != data {
					t.Errorf("member %d: %s/%s = %q, member 1 has %q", e.ID(p), l.root, name, data, first[name])
				}
			}
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("verified %d acknowledged of %d attempted writes (%d znodes) on %d members", acked, len(writes), len(first), len(e.Members))
	return acked
}

// cutDialer dials for a client and can cut it off: Cut closes its current
// connection and makes every later dial fail, as if the client's machine had
// died (the server sees the connection drop without a closeSession). Refuse
// makes dials to some addresses fail, to steer a client to a member.
type cutDialer struct {
	mu      sync.Mutex
	conns   []net.Conn
	cut     bool
	refused map[string]bool
}

func (d *cutDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	cut, refused := d.cut, d.refused[addr]
	d.mu.Unlock()
	if cut || refused {
		return nil, fmt.Errorf("cut dialer: %s refused", addr)
	}
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cut {
		c.Close()
		return nil, fmt.Errorf("cut dialer: %s refused", addr)
	}
	d.conns = append(d.conns, c)
	return c, nil
}

// Refuse makes dials to exactly these addresses fail from now on.
func (d *cutDialer) Refuse(addrs ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.refused = map[string]bool{}
	for _, a := range addrs {
		d.refused[a] = true
	}
}

// Cut closes every connection and refuses every later dial.
func (d *cutDialer) Cut() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cut = true
	for _, c := range d.conns {
		c.Close()
	}
	d.conns = nil
}

// Drop closes the current connections but lets the client dial again.
func (d *cutDialer) Drop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.conns {
		c.Close()
	}
	d.conns = nil
}

// stateRecorder is a default watcher recording session state changes.
type stateRecorder struct {
	mu     sync.Mutex
	states []zk.State
	notify chan struct{}
}

func newStateRecorder() *stateRecorder { return &stateRecorder{notify: make(chan struct{}, 1)} }

func (r *stateRecorder) Process(ev zk.Event) {
	if ev.Type != zk.EventNone {
		return
	}
	r.mu.Lock()
	r.states = append(r.states, ev.State)
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

// count returns how many times st was seen.
func (r *stateRecorder) count(st zk.State) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.states {
		if s == st {
			n++
		}
	}
	return n
}

// waitCount waits until st has been seen n times.
func (r *stateRecorder) waitCount(t testing.TB, st zk.State, n int) {
	t.Helper()
	deadline := time.NewTimer(waitFor)
	defer deadline.Stop()
	for r.count(st) < n {
		select {
		case <-r.notify:
		case <-deadline.C:
			got := r.count(st)
			r.mu.Lock()
			states := slices.Clone(r.states)
			r.mu.Unlock()
			t.Fatalf("session state %v seen %d times within %v, want %d; states %v", st, got, waitFor, n, states)
		}
	}
}
