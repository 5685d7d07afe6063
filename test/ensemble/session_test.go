package ensemble_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
	"github.com/paddockhq/paddock/zk"
)

// The session tests use a shorter tick, so that session timeouts and
// expiry happen within seconds, and an explicit election timeout that
// stays clear of scheduling hiccups on a busy machine.
const (
	sessTick    = 1000 // tickTime, ms
	sessTimeout = 4 * time.Second
)

var sessExtra = []string{"paddock.raft.electionTimeoutMs=500"}

// tick is sessTick as a duration.
const tick = sessTick * time.Millisecond

// eventLog records watch events with the time they arrived.
type eventLog struct {
	mu     sync.Mutex
	events []timedEvent
	notify chan struct{}
}

type timedEvent struct {
	zk.Event
	at time.Time
}

func newEventLog() *eventLog { return &eventLog{notify: make(chan struct{}, 1)} }

func (l *eventLog) Process(ev zk.Event) {
	l.mu.Lock()
	l.events = append(l.events, timedEvent{ev, time.Now()})
	l.mu.Unlock()
	select {
	case l.notify <- struct{}{}:
	default:
	}
}

// of returns the events of type typ for path.
func (l *eventLog) of(typ zk.EventType, path string) []timedEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []timedEvent
	for _, ev := range l.events {
		if ev.Type == typ && ev.Path == path {
			out = append(out, ev)
		}
	}
	return out
}

// wait waits until an event of type typ for path has arrived and returns
// the first.
func (l *eventLog) wait(t testing.TB, typ zk.EventType, path string, timeout time.Duration) timedEvent {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		if evs := l.of(typ, path); len(evs) > 0 {
			return evs[0]
		}
		select {
		case <-l.notify:
		case <-deadline.C:
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Fatalf("no %v event for %s within %v; events: %v", typ, path, timeout, l.events)
		}
	}
}

// holdFor checks cond every 100 ms for d: for asserting that something
// does not happen during a span of time.
func holdFor(t testing.TB, d time.Duration, what string, cond func() error) {
	t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if err := cond(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// existsOwned returns nil if path exists as an ephemeral of session sid.
func existsOwned(t testing.TB, c *zk.Conn, path string, sid int64) error {
	ok, st, err := c.Exists(ctx(t), path)
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("%s is gone", path)
	case st.EphemeralOwner != sid:
		return fmt.Errorf("%s is owned by 0x%x, want 0x%x", path, st.EphemeralOwner, sid)
	}
	return nil
}

// TestEphemeralSurvivesLeaderChange keeps a session busy on the leader for
// longer than its timeout (so the followers' own view of it is stale),
// then kills the leader: the client moves to another member with the same
// session, its ephemeral stays for more than a timeout after the change,
// and its data watch fires for a change made after the move.
func TestEphemeralSurvivesLeaderChange(t *testing.T) {
	t.Parallel()
	e := startEnsemble(t, 0, sessTick, sessExtra...)
	leader := e.Leader(t, waitFor)
	rest := others(e, leader)

	d := &cutDialer{}
	d.Refuse(rest[0].Addr, rest[1].Addr) // start on the leader
	states := newStateRecorder()
	a := connect(t, e.ConnectString(), zk.WithDialer(d.dial), zk.WithSessionTimeout(sessTimeout), zk.WithDefaultWatcher(states))
	if a.Server() != leader.Addr {
		t.Fatalf("client on %s, want the leader %s", a.Server(), leader.Addr)
	}
	d.Refuse()
	sid := a.SessionID()
	eph := mustCreate(t, a, "/survivor", "a", zk.ModeEphemeral)
	mustCreate(t, a, "/watched", "0", zk.ModePersistent)
	dataW := newEventLog()
	if _, _, err := a.GetW(ctx(t), "/watched", dataW); err != nil {
		t.Fatal(err)
	}

	// Busy on the leader for a timeout and two ticks: only the leader
	// has heard from the session in that time.
	holdFor(t, sessTimeout+2*tick, "ephemeral while on the leader", func() error { return existsOwned(t, a, eph, sid) })

	connected := states.count(zk.StateSyncConnected)
	killed := time.Now()
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	states.waitCount(t, zk.StateSyncConnected, connected+1)
	t.Logf("client moved from the killed leader %s to %s in %v", leader.Addr, a.Server(), time.Since(killed).Round(time.Millisecond))
	if a.Server() == leader.Addr || a.SessionID() != sid {
		t.Fatalf("after the leader died the client is on %s with session 0x%x; want another member, session 0x%x", a.Server(), a.SessionID(), sid)
	}

	b := connect(t, connectString(rest...))
	if _, err := b.Set(ctx(t), "/watched", []byte("1"), -1); err != nil {
		t.Fatal(err)
	}
	dataW.wait(t, zk.EventNodeDataChanged, "/watched", waitFor)

	holdFor(t, sessTimeout+2*tick, "ephemeral after the leader change", func() error {
		if err := existsOwned(t, b, eph, sid); err != nil {
			return err
		}
		return existsOwned(t, a, eph, sid)
	})
}

// TestSessionMovesBetweenMembers moves a client from one follower to
// another member (its connection dropped, the follower left alive): it
// keeps its session and ephemeral, and its watches fire both for a change
// made while it was away and for one made after the move.
func TestSessionMovesBetweenMembers(t *testing.T) {
	t.Parallel()
	e := startEnsemble(t, 0, sessTick, sessExtra...)
	leader := e.Leader(t, waitFor)
	fs := followers(e, leader)
	from := fs[0]

	d := &cutDialer{}
	d.Refuse(others(e, from)[0].Addr, others(e, from)[1].Addr)
	states := newStateRecorder()
	a := connect(t, e.ConnectString(), zk.WithDialer(d.dial), zk.WithSessionTimeout(sessTimeout), zk.WithDefaultWatcher(states))
	if a.Server() != from.Addr {
		t.Fatalf("client on %s, want follower %s", a.Server(), from.Addr)
	}
	sid := a.SessionID()
	eph := mustCreate(t, a, "/mover", "a", zk.ModeEphemeral)
	mustCreate(t, a, "/away", "0", zk.ModePersistent)
	mustCreate(t, a, "/after", "0", zk.ModePersistent)
	w := newEventLog()
	if _, _, err := a.GetW(ctx(t), "/away", w); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.GetW(ctx(t), "/after", w); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.ChildrenW(ctx(t), "/after", w); err != nil {
		t.Fatal(err)
	}

	// Away: no member reachable while another client changes /away.
	connected := states.count(zk.StateSyncConnected)
	d.Refuse(e.Addrs()...)
	d.Drop()
	states.waitCount(t, zk.StateDisconnected, 1)
	b := connect(t, from.Addr)
	if _, err := b.Set(ctx(t), "/away", []byte("1"), -1); err != nil {
		t.Fatal(err)
	}
	// Back, on another member.
	d.Refuse(from.Addr)
	states.waitCount(t, zk.StateSyncConnected, connected+1)
	if a.Server() == from.Addr || a.SessionID() != sid {
		t.Fatalf("after the move the client is on %s with session 0x%x; want another member, session 0x%x", a.Server(), a.SessionID(), sid)
	}
	w.wait(t, zk.EventNodeDataChanged, "/away", waitFor)
	if err := existsOwned(t, a, eph, sid); err != nil {
		t.Fatalf("through the new member: %v", err)
	}
	if err := existsOwned(t, b, eph, sid); err != nil {
		t.Fatalf("through the old member: %v", err)
	}
	// Changes made after the move, through the old member.
	if _, err := b.Set(ctx(t), "/after", []byte("1"), -1); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, b, "/after/child", "", zk.ModePersistent)
	w.wait(t, zk.EventNodeDataChanged, "/after", waitFor)
	w.wait(t, zk.EventNodeChildrenChanged, "/after", waitFor)
	for _, typ := range []zk.EventType{zk.EventNodeDataChanged, zk.EventNodeChildrenChanged} {
		for _, p := range []string{"/away", "/after"} {
			if n := len(w.of(typ, p)); n > 1 {
				t.Errorf("%v for %s delivered %d times", typ, p, n)
			}
		}
	}
}

// TestCutClientExpiry cuts a client's connection without a closeSession
// (its dialer closes the socket and refuses every later dial, as if its
// machine had died): its ephemerals go away only after its session
// timeout, within a few ticks of it, and exactly once: one expiry logged
// by the ensemble, one NodeDeleted per ephemeral. When the leader is killed
// meanwhile, the new leader gives the session a fresh timeout from when it
// took over, as ZooKeeper's does.
func TestCutClientExpiry(t *testing.T) {
	t.Parallel()
	for _, killLeader := range []bool{false, true} {
		name := "steady"
		if killLeader {
			name = "leader killed meanwhile"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testCutClientExpiry(t, killLeader)
		})
	}
}

func testCutClientExpiry(t *testing.T, killLeader bool) {
	e := startEnsemble(t, 0, sessTick, sessExtra...)
	leader := e.Leader(t, waitFor)
	fs := followers(e, leader)
	victimOn, watcherOn := fs[0], fs[1]

	watcher := connect(t, watcherOn.Addr)
	mustCreate(t, watcher, "/expiry", "", zk.ModePersistent)
	events := newEventLog()
	if err := watcher.AddWatch(ctx(t), "/expiry", events, zk.AddWatchPersistentRecursive); err != nil {
		t.Fatal(err)
	}

	d := &cutDialer{}
	a := connect(t, victimOn.Addr, zk.WithDialer(d.dial), zk.WithSessionTimeout(sessTimeout))
	timeout := a.SessionTimeout()
	sid := a.SessionID()
	ephs := []string{
		mustCreate(t, a, "/expiry/e1", "", zk.ModeEphemeral),
		mustCreate(t, a, "/expiry/e2", "", zk.ModeEphemeralSequential),
	}
	if _, _, err := a.Exists(ctx(t), ephs[0]); err != nil { // the server hears from it last now
		t.Fatal(err)
	}
	cut := time.Now()
	d.Cut()

	lower, upper := cut.Add(timeout-100*time.Millisecond), cut.Add(timeout+4*tick)
	if killLeader {
		holdFor(t, timeout/2, "ephemerals before the leader is killed", func() error { return existsOwned(t, watcher, ephs[0], sid) })
		killed := time.Now()
		if err := leader.Kill(); err != nil {
			t.Fatal(err)
		}
		next, err := e.WaitLeader(waitFor, func(p *zktest.Process) bool { return p != leader })
		if err != nil {
			t.Fatal(err)
		}
		elected := time.Now()
		t.Logf("leader %d killed %v after the cut; member %d seen leading %v later",
			e.ID(leader), killed.Sub(cut).Round(time.Millisecond), e.ID(next), elected.Sub(killed).Round(time.Millisecond))
		lower, upper = killed.Add(timeout), elected.Add(timeout+4*tick)
	}

	var deleted []time.Time
	for _, p := range ephs {
		deleted = append(deleted, events.wait(t, zk.EventNodeDeleted, p, time.Until(upper)+waitFor).at)
	}
	first, last := slices.MinFunc(deleted, time.Time.Compare), slices.MaxFunc(deleted, time.Time.Compare)
	t.Logf("session 0x%x (timeout %v) cut at %s; ephemerals deleted %v to %v after the cut (allowed %v to %v)",
		sid, timeout, cut.Format("15:04:05.000"), first.Sub(cut).Round(time.Millisecond), last.Sub(cut).Round(time.Millisecond),
		lower.Sub(cut).Round(time.Millisecond), upper.Sub(cut).Round(time.Millisecond))
	if first.Before(lower) {
		t.Errorf("ephemerals deleted %v after the cut, before the session timeout allows (%v)", first.Sub(cut), lower.Sub(cut))
	}
	if last.After(upper) {
		t.Errorf("ephemerals deleted %v after the cut, later than the allowed %v", last.Sub(cut), upper.Sub(cut))
	}

	// Exactly once: nothing more happens to them for a few ticks, every
	// member agrees they are gone, and the ensemble expired the session
	// once.
	holdFor(t, 3*tick, "after the expiry", func() error {
		for _, p := range ephs {
			if n := len(events.of(zk.EventNodeDeleted, p)); n != 1 {
				return fmt.Errorf("%d NodeDeleted events for %s", n, p)
			}
			if n := len(events.of(zk.EventNodeCreated, p)); n != 1 {
				return fmt.Errorf("%d NodeCreated events for %s, want only its creation", n, p)
			}
		}
		return nil
	})
	expiries := 0
	for _, p := range e.Members {
		expiries += countLines(logSince(t, p, 0), "expiring session", fmt.Sprintf("session=0x%x", sid))
		if p.Pid() == 0 {
			continue
		}
		c := connect(t, p.Addr)
		if _, err := c.Sync(ctx(t), "/expiry"); err != nil {
			t.Fatal(err)
		}
		for _, eph := range ephs {
			if ok, _, err := c.Exists(ctx(t), eph); err != nil || ok {
				t.Errorf("member %d: %s exists=%v err=%v after the expiry", e.ID(p), eph, ok, err)
			}
		}
		c.Close()
	}
	if expiries != 1 {
		t.Errorf("the ensemble logged %d expiries of session 0x%x, want 1", expiries, sid)
	}
}
