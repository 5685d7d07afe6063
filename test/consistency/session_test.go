package consistency_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/paddocktest"
	"github.com/paddockhq/paddock/zk"
)

// cutDialer dials for one client and can cut it off as if its machine
// had died: every connection closed without a closeSession, every later
// dial refused.
type cutDialer struct {
	mu    sync.Mutex
	conns []net.Conn
	cut   bool
}

func (d *cutDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	cut := d.cut
	d.mu.Unlock()
	if cut {
		return nil, errors.New("cut off by the test")
	}
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cut {
		c.Close()
		return nil, errors.New("cut off by the test")
	}
	d.conns = append(d.conns, c)
	return c, nil
}

func (d *cutDialer) cutOff() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cut = true
	for _, c := range d.conns {
		c.Close()
	}
	d.conns = nil
}

func (d *cutDialer) reconnect() {
	d.mu.Lock()
	d.cut = false
	d.mu.Unlock()
}

// eventLog records events with the time they arrived.
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

// of returns the events of type typ for path (state for EventNone).
func (l *eventLog) of(typ zk.EventType, path string, state zk.State) []timedEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []timedEvent
	for _, ev := range l.events {
		if ev.Type == typ && ev.Path == path && (typ != zk.EventNone || ev.State == state) {
			out = append(out, ev)
		}
	}
	return out
}

// wait waits until an event of type typ for path (state for EventNone) has
// arrived, and returns the first.
func (l *eventLog) wait(t testing.TB, typ zk.EventType, path string, state zk.State, timeout time.Duration) timedEvent {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		if evs := l.of(typ, path, state); len(evs) > 0 {
			return evs[0]
		}
		select {
		case <-l.notify:
		case <-deadline.C:
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Fatalf("no %v (%v) event for %q within %v; events: %v", typ, state, path, timeout, l.events)
		}
	}
}

// ownedBy returns nil if path exists as an ephemeral of session sid.
func ownedBy(t testing.TB, c *zk.Conn, path string, sid int64) error {
	ok, st, err := c.Exists(callCtx(t), path)
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

// checkExpiryTime checks when the ephemeral of a session that was opened
// (its connect not yet sent) at opened, and cut off at cut, was seen
// deleted: not before the session can have timed out, which is timeout
// after the ensemble last heard from it, so after opened+timeout at the
// earliest; and, as a new leader gives every session a whole timeout from
// when it takes over and elections take well under a timeout, at most
// three timeouts after the cut.
func checkExpiryTime(opened, cut, deleted time.Time, timeout time.Duration) error {
	if lower := opened.Add(timeout); deleted.Before(lower) {
		return fmt.Errorf("ephemeral deleted %v after the session was opened (%v after the cut): before it can have timed out (%v)",
			deleted.Sub(opened), deleted.Sub(cut), timeout)
	}
	if upper := cut.Add(3 * timeout); deleted.After(upper) {
		return fmt.Errorf("ephemeral deleted %v after the cut, later than %v", deleted.Sub(cut), upper.Sub(cut))
	}
	return nil
}

// leaderAndFollowers returns the leader and the other members.
func leaderAndFollowers(t *testing.T, e *env) (*paddocktest.Member, []*paddocktest.Member) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), recoverTimeout)
	defer cancel()
	leader, err := e.ens.Leader(ctx)
	if err != nil {
		t.Fatalf("no leader: %v", err)
	}
	var fs []*paddocktest.Member
	for _, m := range e.ens.Members() {
		if m != leader {
			fs = append(fs, m)
		}
	}
	return leader, fs
}

// TestCutClientExpiresOnce cuts a client off without a closeSession while
// the ensemble is partitioned: its ephemeral goes away only once its
// session has timed out, and exactly once (one NodeDeleted, and its
// parent's child version moved by its creation and its deletion only),
// on every member, also after the partition heals and the member cut off
// from the others catches up.
func TestCutClientExpiresOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		// isolate returns the member to isolate a quarter of a session
		// timeout after the cut, given the leader and the member the
		// client was on.
		isolate func(leader, victimOn *paddocktest.Member) *paddocktest.Member
	}{
		{"leader isolated", func(leader, _ *paddocktest.Member) *paddocktest.Member { return leader }},
		{"client's member isolated", func(_, victimOn *paddocktest.Member) *paddocktest.Member { return victimOn }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 3)
			leader, fs := leaderAndFollowers(t, e)
			victimOn, watcherOn := fs[0], fs[1]
			isolated := tc.isolate(leader, victimOn)
			if isolated == watcherOn {
				t.Fatal("the watcher's member would be isolated")
			}

			// The watcher stays on a member of the majority.
			watcher, err := e.dialOnly(callCtx(t), watcherOn.ID())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { watcher.Close() })
			mustCreate(t, watcher, "/expiry", nil)
			events := newEventLog()
			if err := watcher.AddWatch(callCtx(t), "/expiry", events, zk.AddWatchPersistentRecursive); err != nil {
				t.Fatal(err)
			}

			d := &cutDialer{}
			opened := time.Now()
			victim, err := e.dialOnly(callCtx(t), victimOn.ID(), zk.WithDialer(d.dial))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { victim.Close() })
			sid, timeout := victim.SessionID(), victim.SessionTimeout()
			eph, err := victim.Create(callCtx(t), "/expiry/e", nil, zk.OpenACL, zk.ModeEphemeral)
			if err != nil {
				t.Fatal(err)
			}
			events.wait(t, zk.EventNodeCreated, eph, 0, recoverTimeout)
			cut := time.Now()
			d.cutOff()

			if !sleepCtx(t.Context(), timeout/4) {
				t.Fatal(t.Context().Err())
			}
			e.ens.Isolate(isolated.ID())
			t.Logf("session 0x%x (timeout %v) cut on %v; %v (%s) isolated %v later",
				sid, timeout, victimOn, isolated, role(isolated, leader), time.Since(cut).Round(time.Millisecond))

			deleted := events.wait(t, zk.EventNodeDeleted, eph, 0, 2*timeout+recoverTimeout).at
			t.Logf("ephemeral deleted %v after the cut", deleted.Sub(cut).Round(time.Millisecond))
			if err := checkExpiryTime(opened, cut, deleted, timeout); err != nil {
				t.Error(err)
			}

			// Heal; the isolated member catches up. Then, seen from
			// every member, the ephemeral is gone and was deleted once.
			e.ens.HealAll()
			ctx, cancel := context.WithTimeout(t.Context(), recoverTimeout)
			defer cancel()
			if err := e.ens.WaitServing(ctx); err != nil {
				t.Fatal(err)
			}
			for _, m := range e.ens.Members() {
				c, err := e.dialOnly(callCtx(t), m.ID())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.Sync(callCtx(t), "/expiry"); err != nil {
					t.Fatal(err)
				}
				ok, _, err := c.Exists(callCtx(t), eph)
				if err != nil || ok {
					t.Errorf("%v: %s exists %v (%v) after its session expired", m, eph, ok, err)
				}
				_, st, err := c.Get(callCtx(t), "/expiry")
				if err != nil {
					t.Fatal(err)
				}
				if st.Cversion != 2 {
					t.Errorf("%v: /expiry has child version %d, want 2 (one create, one delete)", m, st.Cversion)
				}
				c.Close()
			}
			if n := len(events.of(zk.EventNodeDeleted, eph, 0)); n != 1 {
				t.Errorf("%d NodeDeleted events for %s, want 1", n, eph)
			}
			if n := len(events.of(zk.EventNodeCreated, eph, 0)); n != 1 {
				t.Errorf("%d NodeCreated events for %s, want 1", n, eph)
			}

			// Let the victim back: its session is over.
			d.reconnect()
			eventually(t, recoverTimeout, "the cut client learns its session expired", func() error {
				if s := victim.State(); s != zk.StateExpired {
					return fmt.Errorf("state %v", s)
				}
				return nil
			})
		})
	}
}

// TestSessionSurvivesMemberFault makes the member a client is on go away
// (stopped, paused, or isolated from the others) while its session is
// young enough to survive: the client moves to another member with the
// same session and its ephemeral, is told Disconnected and SyncConnected
// and never Expired, and its data watch, set before the move, fires for a
// change made after it.
func TestSessionSurvivesMemberFault(t *testing.T) {
	type fault struct {
		inject, heal func(e *env, m *paddocktest.Member) error
	}
	stop := fault{
		inject: func(_ *env, m *paddocktest.Member) error { return m.Stop() },
		heal:   func(_ *env, m *paddocktest.Member) error { return m.Restart() },
	}
	pause := fault{
		inject: func(_ *env, m *paddocktest.Member) error { m.Pause(); return nil },
		heal:   func(_ *env, m *paddocktest.Member) error { m.Resume(); return nil },
	}
	isolate := fault{
		inject: func(e *env, m *paddocktest.Member) error { e.ens.Isolate(m.ID()); return nil },
		heal:   func(e *env, _ *paddocktest.Member) error { e.ens.HealAll(); return nil },
	}
	for _, tc := range []struct {
		name     string
		onLeader bool
		fault    fault
	}{
		{"follower stopped", false, stop},
		{"follower paused", false, pause},
		{"leader paused", true, pause},
		{"leader isolated", true, isolate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 3)
			leader, fs := leaderAndFollowers(t, e)
			on := fs[0]
			if tc.onLeader {
				on = leader
			}
			states := newEventLog()
			c := e.mustDial(on.ID(), zk.WithDefaultWatcher(states))
			if c.Server() != on.ClientAddr() {
				t.Fatalf("client on %s, want %v at %s", c.Server(), on, on.ClientAddr())
			}
			sid := c.SessionID()
			eph, err := c.Create(callCtx(t), "/mover", nil, zk.OpenACL, zk.ModeEphemeral)
			if err != nil {
				t.Fatal(err)
			}
			mustCreate(t, c, "/watched", []byte("0"))
			w := newEventLog()
			if _, _, err := c.GetW(callCtx(t), "/watched", w); err != nil {
				t.Fatal(err)
			}

			start := time.Now()
			if err := tc.fault.inject(e, on); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := tc.fault.heal(e, on); err != nil {
					t.Errorf("healing %v: %v", on, err)
				}
			})
			states.wait(t, zk.EventNone, "", zk.StateDisconnected, recoverTimeout)
			eventually(t, recoverTimeout, "the client moves to another member", func() error {
				if s, srv := c.State(), c.Server(); s != zk.StateSyncConnected || srv == "" || srv == on.ClientAddr() {
					return fmt.Errorf("state %v on %q", s, srv)
				}
				return nil
			})
			t.Logf("client moved from %v to %s in %v", on, c.Server(), time.Since(start).Round(time.Millisecond))
			if got := c.SessionID(); got != sid {
				t.Fatalf("session 0x%x after the move, want 0x%x", got, sid)
			}
			if err := ownedBy(t, c, eph, sid); err != nil {
				t.Fatalf("after the move: %v", err)
			}

			// A change after the move, through yet another member.
			var other *paddocktest.Member
			for _, m := range e.ens.Members() {
				if m != on && m.ClientAddr() != c.Server() {
					other = m
				}
			}
			o, err := e.dialOnly(callCtx(t), other.ID())
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if _, err := o.Set(callCtx(t), "/watched", []byte("1"), -1); err != nil {
				t.Fatal(err)
			}
			w.wait(t, zk.EventNodeDataChanged, "/watched", 0, recoverTimeout)
			if err := ownedBy(t, o, eph, sid); err != nil {
				t.Fatalf("through %v: %v", other, err)
			}
			if n := len(states.of(zk.EventNone, "", zk.StateExpired)); n > 0 {
				t.Fatalf("session expired during the move")
			}
		})
	}
}
