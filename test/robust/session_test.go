package robust_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// sessionTick is the tickTime of the session tests, in ms: short, so that
// expiry is quick, and the defaults give [400, 4000] ms session timeouts.
const sessionTick = 200

// TestSessionTimeoutNegotiation checks that the timeout a client asks for
// is clamped to [minSessionTimeout, maxSessionTimeout], with the defaults
// (2 and 20 ticks) and with explicit bounds, and that the ConnectResponse
// has the readOnly byte exactly when the request had it.
func TestSessionTimeoutNegotiation(t *testing.T) {
	configs := []struct {
		name   string
		extra  []string
		lo, hi int32
	}{
		{"defaults", nil, 2 * sessionTick, 20 * sessionTick},
		{"explicit", []string{"minSessionTimeout=1000", "maxSessionTimeout=3000"}, 1000, 3000},
	}
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			p := startPaddock(t, sessionTick, cfg.extra...)
			requests := []struct {
				name string
				ask  int32
				want int32
			}{
				{"negative", -5, cfg.lo},
				{"zero", 0, cfg.lo},
				{"below min", cfg.lo - 1, cfg.lo},
				{"min", cfg.lo, cfg.lo},
				{"within", (cfg.lo + cfg.hi) / 2, (cfg.lo + cfg.hi) / 2},
				{"max", cfg.hi, cfg.hi},
				{"above max", cfg.hi + 1, cfg.hi},
				{"far above max", 1 << 30, cfg.hi},
			}
			for _, rq := range requests {
				for _, omit := range []bool{false, true} {
					name := fmt.Sprintf("%s/omitReadOnly=%v", rq.name, omit)
					c := dialRaw(t, p.Addr)
					resp, err := c.handshake(proto.ConnectRequest{TimeOut: rq.ask, OmitReadOnly: omit})
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if resp.TimeOut != rq.want {
						t.Errorf("%s: asked for %d ms, got %d ms, want %d", name, rq.ask, resp.TimeOut, rq.want)
					}
					if resp.SessionID == 0 || len(resp.Passwd) != 16 {
						t.Errorf("%s: ConnectResponse %+v has no session", name, resp)
					}
					if resp.OmitReadOnly != omit {
						t.Errorf("%s: response omits readOnly = %v, want %v (as the request)", name, resp.OmitReadOnly, omit)
					}
					if err := c.ping(); err != nil {
						t.Errorf("%s: ping on the new session: %v", name, err)
					}
					c.mustCall(proto.OpCloseSession, nil, nil, proto.ErrOK)
				}
			}
		})
	}
}

// waitGone polls, on c, until path does not exist, and returns when it
// noticed.
func waitGone(t *testing.T, c *rawConn, path string, timeout time.Duration) time.Time {
	t.Helper()
	eventually(t, timeout, path+" is deleted", func() error {
		if st := c.exists(path, false); st != nil {
			return fmt.Errorf("still there, owner 0x%x", st.EphemeralOwner)
		}
		return nil
	})
	return time.Now()
}

// TestSessionExpiredReattach checks that a client reattaching to a session
// that expired gets the zero ConnectResponse and a closed connection.
func TestSessionExpiredReattach(t *testing.T) {
	p := startPaddock(t, sessionTick)
	a := newSession(t, p.Addr, 2*sessionTick)
	a.create("/expiring", "", proto.FlagEphemeral)
	id, passwd := a.SessionID, a.Passwd
	a.nc.Close() // gone without closeSession
	watcher := newSession(t, p.Addr, 4000)
	waitGone(t, watcher, "/expiring", 10*time.Second)

	for _, omit := range []bool{false, true} {
		c := dialRaw(t, p.Addr)
		resp, err := c.handshake(proto.ConnectRequest{TimeOut: 2 * sessionTick, SessionID: id, Passwd: passwd, OmitReadOnly: omit})
		if err != nil {
			t.Fatalf("reattach to expired session 0x%x (omitReadOnly=%v): %v", id, omit, err)
		}
		if err := zeroConnectResponse(resp); err != nil {
			t.Errorf("reattach to expired session 0x%x (omitReadOnly=%v): %v", id, omit, err)
		}
		if _, err := c.expectClosed(ioTimeout); err != nil {
			t.Errorf("reattach to expired session 0x%x: %v", id, err)
		}
	}
}

// TestSessionMoved checks that reattaching a live session on a new
// connection keeps its ephemerals and closes the old connection, and that a
// wrong password gets the zero response and, as in ZooKeeper, closes the
// session's connection without ending the session.
func TestSessionMoved(t *testing.T) {
	p := startPaddock(t, sessionTick)
	a := newSession(t, p.Addr, 2000)
	a.create("/moved", "x", proto.FlagEphemeral)

	// Wrong password: zero response, closed, and the session lives on.
	bad := append([]byte(nil), a.Passwd...)
	bad[0] ^= 0xff
	w, resp, err := reattach(t, p.Addr, a, bad, 2000)
	if err != nil {
		t.Fatalf("reattach with a wrong password: %v", err)
	}
	if err := zeroConnectResponse(resp); err != nil {
		t.Errorf("reattach with a wrong password: %v", err)
	}
	if _, err := w.expectClosed(ioTimeout); err != nil {
		t.Errorf("reattach with a wrong password: %v", err)
	}
	// As in ZooKeeper (processConnectRequest closes the session's
	// connection before it checks the password), the live connection is
	// closed, but the session itself is untouched.
	if _, err := a.expectClosed(ioTimeout); err != nil {
		t.Errorf("live connection after a wrong-password attempt: %v", err)
	}

	// Right password on a new connection: the session moves there.
	b, resp, err := reattach(t, p.Addr, a, nil, 2000)
	if err != nil {
		t.Fatalf("reattach: %v", err)
	}
	if resp.SessionID != a.SessionID || resp.TimeOut != 2000 || string(resp.Passwd) != string(a.Passwd) {
		t.Fatalf("reattach of 0x%x answered %+v", a.SessionID, resp)
	}
	if a.ping() == nil {
		t.Errorf("old connection still answers after the session moved")
	}
	st := b.exists("/moved", false)
	if st == nil || st.EphemeralOwner != a.SessionID {
		t.Fatalf("ephemeral after the move: stat %+v, want owner 0x%x", st, a.SessionID)
	}
	b.create("/moved2", "", proto.FlagEphemeral)
	if st := b.exists("/moved2", false); st == nil || st.EphemeralOwner != a.SessionID {
		t.Fatalf("ephemeral created after the move: stat %+v, want owner 0x%x", st, a.SessionID)
	}
}

// TestSessionCloseRemovesEphemerals checks closeSession: the reply, the
// closed connection, the ephemerals gone, a NodeDeleted to a watcher on
// another session, and no way back into the closed session.
func TestSessionCloseRemovesEphemerals(t *testing.T) {
	p := startPaddock(t, sessionTick)
	a := newSession(t, p.Addr, 2000)
	a.create("/closing", "", proto.FlagEphemeral)
	b := newSession(t, p.Addr, 2000)
	if st := b.exists("/closing", true); st == nil {
		t.Fatal("ephemeral /closing missing before close")
	}

	hdr := a.mustCall(proto.OpCloseSession, nil, nil, proto.ErrOK)
	if _, err := a.expectClosed(ioTimeout); err != nil {
		t.Errorf("connection after closeSession: %v", err)
	}
	ev, err := b.nextEvent(ioTimeout)
	if err != nil {
		t.Fatalf("watcher waiting for NodeDeleted: %v", err)
	}
	if ev.ev.Type != proto.EventNodeDeleted || ev.ev.Path != "/closing" || ev.ev.State != proto.StateSyncConnected {
		t.Errorf("watcher got %+v, want NodeDeleted /closing", ev.ev)
	}
	if ev.zxid != hdr.Zxid {
		t.Errorf("NodeDeleted carries zxid 0x%x, the closeSession reply 0x%x", ev.zxid, hdr.Zxid)
	}
	if st := b.exists("/closing", false); st != nil {
		t.Errorf("/closing still exists after closeSession: %+v", st)
	}
	c, resp, err := reattach(t, p.Addr, a, nil, 2000)
	if err != nil {
		t.Fatalf("reattach to a closed session: %v", err)
	}
	if err := zeroConnectResponse(resp); err != nil {
		t.Errorf("reattach to a closed session: %v", err)
	}
	if _, err := c.expectClosed(ioTimeout); err != nil {
		t.Errorf("reattach to a closed session: %v", err)
	}
}

// TestSessionExpiryRemovesEphemeralsAtOnce checks that a client that stops
// sending expires after its timeout (not before, and within two ticks and
// some slack after), that its connection is closed, and that all its
// ephemerals go in one log entry: a one-time child watch fires once, a
// persistent watch sees one NodeChildrenChanged per ephemeral all with the
// same zxid, and the parent's pzxid is that zxid.
func TestSessionExpiryRemovesEphemeralsAtOnce(t *testing.T) {
	const timeout = 1000
	p := startPaddock(t, sessionTick)
	watcher := newSession(t, p.Addr, 4000)
	watcher.create("/parent", "", proto.FlagPersistent)
	persistent := newSession(t, p.Addr, 4000)
	persistent.mustCall(proto.OpAddWatch, &proto.AddWatchRequest{Path: "/parent", Mode: proto.AddWatchPersistent}, nil, proto.ErrOK)

	a := newSession(t, p.Addr, timeout)
	if a.Timeout != timeout {
		t.Fatalf("negotiated %d ms, want %d", a.Timeout, timeout)
	}
	const n = 3
	for i := range n {
		a.create(fmt.Sprintf("/parent/e%d", i), "", proto.FlagEphemeral)
	}
	var kids proto.GetChildrenResponse
	watcher.mustCall(proto.OpGetChildren, &proto.GetChildrenRequest{Path: "/parent", Watch: true}, &kids, proto.ErrOK)
	if len(kids.Children) != n {
		t.Fatalf("children before expiry: %q", kids.Children)
	}
	// The persistent watcher saw the creates; forget them.
	for i := range n {
		if _, err := persistent.nextEvent(ioTimeout); err != nil {
			t.Fatalf("persistent watch, create event %d: %v", i, err)
		}
	}
	// a's last message: from now on it sends nothing.
	lastSent := time.Now()
	if err := a.ping(); err != nil {
		t.Fatal(err)
	}

	ev, err := watcher.nextEvent(time.Duration(timeout)*time.Millisecond + 3*time.Second)
	if err != nil {
		t.Fatalf("child watch after a went silent: %v", err)
	}
	fired := time.Since(lastSent)
	if ev.ev.Type != proto.EventNodeChildrenChanged || ev.ev.Path != "/parent" {
		t.Fatalf("child watch got %+v, want NodeChildrenChanged /parent", ev.ev)
	}
	if min := time.Duration(timeout) * time.Millisecond; fired < min {
		t.Errorf("session expired %v after its last message, before its %v timeout", fired, min)
	}
	if max := time.Duration(timeout+2*sessionTick)*time.Millisecond + time.Second; fired > max {
		t.Errorf("session expired %v after its last message, want at most %v", fired, max)
	}
	// The read after the event sees every ephemeral gone, and no second
	// event came before its reply.
	var after proto.GetChildren2Response
	watcher.mustCall(proto.OpGetChildren2, &proto.GetChildren2Request{Path: "/parent"}, &after, proto.ErrOK)
	if len(after.Children) != 0 {
		t.Errorf("children right after the expiry event: %q, want none (one log entry removes them all)", after.Children)
	}
	if len(watcher.events) != 0 {
		t.Errorf("one-time child watch fired again: %+v", watcher.events)
	}
	if after.Stat.Pzxid != ev.zxid {
		t.Errorf("/parent pzxid 0x%x, the event's zxid 0x%x", after.Stat.Pzxid, ev.zxid)
	}
	for i := range n {
		pev, err := persistent.nextEvent(ioTimeout)
		if err != nil {
			t.Fatalf("persistent watch, delete event %d: %v", i, err)
		}
		if pev.ev.Type != proto.EventNodeChildrenChanged || pev.zxid != ev.zxid {
			t.Errorf("persistent watch event %d: %+v zxid 0x%x, want NodeChildrenChanged at 0x%x", i, pev.ev, pev.zxid, ev.zxid)
		}
	}
	if _, err := a.expectClosed(ioTimeout); err != nil {
		t.Errorf("connection of the expired session: %v", err)
	}
}
