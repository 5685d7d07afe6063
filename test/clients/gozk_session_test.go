package clients_test

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// gozkWait bounds every wait for an event or a session state.
const gozkWait = 20 * time.Second

// gozkLogger sends go-zk's log lines to the test log.
type gozkLogger struct{ t testing.TB }

func (l gozkLogger) Printf(format string, args ...any) { l.t.Logf("go-zk: "+format, args...) }

// sessionStates records the session events of one connection. go-zk drops
// events when its channel is full, so they are collected by a callback.
type sessionStates struct {
	mu     sync.Mutex
	cond   *sync.Cond
	states []zk.State
}

func newSessionStates() *sessionStates {
	s := &sessionStates{}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func (s *sessionStates) callback(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	s.mu.Lock()
	s.states = append(s.states, ev.State)
	s.mu.Unlock()
	s.cond.Broadcast()
}

// waitCount waits until state has been seen at least n times.
func (s *sessionStates) waitCount(t *testing.T, state zk.State, n int) {
	t.Helper()
	deadline := time.Now().Add(gozkWait)
	stop := time.AfterFunc(gozkWait, s.cond.Broadcast)
	defer stop.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for countState(s.states, state) < n {
		if time.Now().After(deadline) {
			t.Fatalf("saw %v %d times within %v, want %d; states: %v", state, countState(s.states, state), gozkWait, n, s.states)
		}
		s.cond.Wait()
	}
}

func countState(states []zk.State, want zk.State) int {
	n := 0
	for _, s := range states {
		if s == want {
			n++
		}
	}
	return n
}

// gatedDialer dials normally, remembers the last connection so a test can
// break it, and can hold new dials until released.
type gatedDialer struct {
	mu     sync.Mutex
	conn   net.Conn
	closed bool          // gate closed: dials wait on open
	open   chan struct{} // closed when the gate opens
}

func newGatedDialer() *gatedDialer { return &gatedDialer{open: make(chan struct{})} }

func (d *gatedDialer) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	d.mu.Lock()
	wait, open := d.closed, d.open
	d.mu.Unlock()
	if wait {
		select {
		case <-open:
		case <-time.After(gozkWait):
			return nil, fmt.Errorf("gated dialer: gate stayed closed for %v", gozkWait)
		}
	}
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.conn = c
	d.mu.Unlock()
	return c, nil
}

// breakAndHold closes the current connection and makes new dials wait.
func (d *gatedDialer) breakAndHold() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	d.open = make(chan struct{})
	if d.conn != nil {
		d.conn.Close()
	}
}

// release lets waiting dials proceed.
func (d *gatedDialer) release() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = false
	close(d.open)
}

// gozkConn is a go-zk session with its recorded session states.
type gozkConn struct {
	*zk.Conn
	states *sessionStates
}

func gozkConnect(t *testing.T, addr string, dialer *gatedDialer) gozkConn {
	t.Helper()
	states := newSessionStates()
	var (
		conn *zk.Conn
		err  error
	)
	servers := []string{addr}
	if dialer != nil {
		conn, _, err = zk.Connect(servers, 10*time.Second, zk.WithLogger(gozkLogger{t}),
			zk.WithLogInfo(false), zk.WithEventCallback(states.callback), zk.WithDialer(dialer.dial))
	} else {
		conn, _, err = zk.Connect(servers, 10*time.Second, zk.WithLogger(gozkLogger{t}),
			zk.WithLogInfo(false), zk.WithEventCallback(states.callback))
	}
	if err != nil {
		t.Fatalf("connect to %s: %v", addr, err)
	}
	t.Cleanup(conn.Close)
	states.waitCount(t, zk.StateHasSession, 1)
	return gozkConn{conn, states}
}

// waitEvent waits for one event on a watch channel.
func waitEvent(t *testing.T, ch <-chan zk.Event, what string) zk.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatalf("%s: watch channel closed", what)
		}
		t.Logf("    saw %s: %v %s", what, ev.Type, ev.Path)
		return ev
	case <-time.After(gozkWait):
		t.Fatalf("%s: no event within %v", what, gozkWait)
	}
	return zk.Event{}
}

func wantErr(t *testing.T, err, want error, op string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: err = %v, want %v", op, err, want)
	}
	t.Logf("    %s: %v (as expected)", op, err)
}

// runGoZKSession exercises every operation of github.com/go-zookeeper/zk
// against addr. The transcript goes to the test log.
func runGoZKSession(t *testing.T, addr string) {
	root := fmt.Sprintf("/gozk-%d", time.Now().UnixNano())
	open := zk.WorldACL(zk.PermAll)
	dialer := newGatedDialer()
	c := gozkConnect(t, addr, dialer)
	other := gozkConnect(t, addr, nil)
	t.Logf("== go-zk session against %s, root %s, session 0x%x", addr, root, c.SessionID())
	if c.Server() != addr {
		t.Fatalf("Server() = %q, want %q", c.Server(), addr)
	}

	t.Log("== four-letter words")
	if ok := zk.FLWRuok([]string{addr}, 5*time.Second); len(ok) != 1 || !ok[0] {
		t.Fatalf("FLWRuok = %v, want [true]", ok)
	}
	// go-zk's srvr parser expects a pre-3.5 "built on" date (dd/mm/yyyy),
	// so it cannot parse Apache ZooKeeper 3.5+; only the exchange is checked.
	stats, _ := zk.FLWSrvr([]string{addr}, 5*time.Second)
	if len(stats) != 1 || (stats[0].Error != nil && !strings.Contains(stats[0].Error.Error(), "unable to parse")) {
		t.Fatalf("FLWSrvr = %+v; want one answer", stats)
	}
	t.Logf("    FLWSrvr: %+v", *stats[0])
	// cons also lists the asking connection, in a short form go-zk cannot
	// parse, so its "ok" is false even against Apache ZooKeeper; check that
	// both of our sessions are listed.
	clients, _ := zk.FLWCons([]string{addr}, 5*time.Second)
	if len(clients) != 1 {
		t.Fatalf("FLWCons = %+v; want one answer", clients)
	}
	listed := map[int64]bool{}
	for _, cl := range clients[0].Clients {
		listed[cl.SessionID] = true
	}
	if !listed[c.SessionID()] || !listed[other.SessionID()] {
		t.Fatalf("FLWCons lists sessions %v; want 0x%x and 0x%x", listed, c.SessionID(), other.SessionID())
	}

	t.Log("== create: every mode")
	try1(c.Create(root, []byte("root"), zk.FlagPersistent, open)).must(t, "create root")
	eph := try1(c.Create(root+"/e", []byte("e"), zk.FlagEphemeral, open)).must(t, "create ephemeral")
	seq := try1(c.Create(root+"/s-", nil, zk.FlagSequence, open)).must(t, "create sequential")
	eseq := try1(c.Create(root+"/es-", nil, zk.FlagEphemeralSequential, open)).must(t, "create ephemeral sequential")
	cont := try1(c.CreateContainer(root+"/c", nil, zk.FlagContainer, open)).must(t, "create container")
	ttl := try1(c.CreateTTL(root+"/t", []byte("t"), zk.FlagTTL, open, time.Hour)).must(t, "create TTL")
	sttl := try1(c.CreateTTL(root+"/st-", nil, zk.FlagPersistentSequentialWithTTL, open, time.Hour)).must(t, "create sequential TTL")
	prot := try1(c.CreateProtectedEphemeralSequential(root+"/p-", nil, open)).must(t, "create protected ephemeral sequential")
	for _, tc := range []struct{ got, want string }{
		{eph, root + "/e"}, {seq, root + "/s-0000000001"}, {eseq, root + "/es-0000000002"},
		{cont, root + "/c"}, {ttl, root + "/t"}, {sttl, root + "/st-0000000005"},
	} {
		if tc.got != tc.want {
			t.Fatalf("created %q, want %q", tc.got, tc.want)
		}
	}
	if !strings.HasPrefix(prot, root+"/_c_") || !strings.HasSuffix(prot, "p-0000000006") {
		t.Fatalf("protected ephemeral sequential created %q, want %s/_c_<guid>-p-0000000006", prot, root)
	}
	t.Logf("    created %s %s %s %s %s %s %s", eph, seq, eseq, cont, ttl, sttl, prot)

	_, err := c.Create(root, nil, 0, open)
	wantErr(t, err, zk.ErrNodeExists, "create existing")
	_, err = c.Create(root+"/missing/x", nil, 0, open)
	wantErr(t, err, zk.ErrNoNode, "create under missing parent")
	_, err = c.Create(eph+"/x", nil, 0, open)
	wantErr(t, err, zk.ErrNoChildrenForEphemerals, "create under ephemeral")
	_, err = c.CreateTTL(root+"/t0", nil, zk.FlagTTL, open, 0)
	wantErr(t, err, zk.ErrBadArguments, "create TTL 0")
	_, err = c.Create(root+"/bad", nil, 0, nil)
	wantErr(t, err, zk.ErrInvalidACL, "create with an empty ACL")

	t.Log("== get, set, exists, stat")
	data, st := try2(c.Get(eph)).must(t, "get ephemeral")
	if string(data) != "e" || st.EphemeralOwner != c.SessionID() || st.Version != 0 || st.DataLength != 1 {
		t.Fatalf("get %s = %q, %+v; want \"e\" owned by 0x%x", eph, data, st, c.SessionID())
	}
	for _, p := range []string{cont, ttl} {
		_, st = try2(c.Get(p)).must(t, "get "+p)
		if st.EphemeralOwner != 0 {
			t.Fatalf("%s: ephemeralOwner = 0x%x, want 0 for containers and TTL nodes", p, st.EphemeralOwner)
		}
	}
	st = try1(c.Set(eph, []byte("e1"), 0)).must(t, "set version 0")
	if st.Version != 1 || st.Mzxid <= st.Czxid {
		t.Fatalf("set: stat %+v, want version 1 and mzxid > czxid", st)
	}
	_, err = c.Set(eph, []byte("e2"), 0)
	wantErr(t, err, zk.ErrBadVersion, "set stale version")
	_, err = c.Set(root+"/missing", nil, -1)
	wantErr(t, err, zk.ErrNoNode, "set missing")
	_, _, err = c.Get(root + "/missing")
	wantErr(t, err, zk.ErrNoNode, "get missing")
	found, st, err := c.Exists(root)
	if err != nil || !found || st.NumChildren != 7 || st.Cversion != 7 {
		t.Fatalf("exists %s = %v, %+v, %v; want 7 children, cversion 7", root, found, st, err)
	}
	if found, _, err := c.Exists(root + "/missing"); err != nil || found {
		t.Fatalf("exists missing = %v, %v", found, err)
	}
	children, st := try2(c.Children(root)).must(t, "children")
	slices.Sort(children)
	want := []string{"c", "e", "es-0000000002", prot[len(root)+1:], "s-0000000001", "st-0000000005", "t"}
	slices.Sort(want)
	if !slices.Equal(children, want) || int(st.NumChildren) != len(want) {
		t.Fatalf("children = %v (stat %+v), want %v", children, st, want)
	}
	if p := try1(c.Sync(root)).must(t, "sync"); p != root {
		t.Fatalf("sync returned %q, want %q", p, root)
	}

	t.Log("== delete")
	wantErr(t, c.Delete(seq, 3), zk.ErrBadVersion, "delete stale version")
	if err := c.Delete(seq, 0); err != nil {
		t.Fatalf("delete %s version 0: %v", seq, err)
	}
	wantErr(t, c.Delete(seq, -1), zk.ErrNoNode, "delete again")
	wantErr(t, c.Delete(root, -1), zk.ErrNotEmpty, "delete non-empty")

	t.Log("== multi")
	tx := try1(c.Create(root+"/tx", []byte("0"), 0, open)).must(t, "create tx")
	res, err := c.Multi(
		&zk.CreateRequest{Path: tx + "/a", Data: []byte("a"), Acl: open},
		&zk.SetDataRequest{Path: tx, Data: []byte("1"), Version: 0},
		&zk.CheckVersionRequest{Path: tx, Version: 1},
		&zk.DeleteRequest{Path: tx + "/a", Version: 0},
	)
	if err != nil || len(res) != 4 || res[0].String != tx+"/a" || res[1].Stat == nil || res[1].Stat.Version != 1 {
		t.Fatalf("multi = %+v, %v", res, err)
	}
	for i, r := range res {
		if r.Error != nil {
			t.Fatalf("multi op %d: %v", i, r.Error)
		}
	}
	res, err = c.Multi(
		&zk.CreateRequest{Path: tx + "/never", Acl: open},
		&zk.CheckVersionRequest{Path: tx, Version: 0},
		&zk.SetDataRequest{Path: tx, Data: []byte("2"), Version: -1},
	)
	wantErr(t, err, zk.ErrBadVersion, "multi with a stale check")
	if len(res) != 3 || res[0].Error != nil || !errors.Is(res[1].Error, zk.ErrBadVersion) ||
		res[2].Error == nil || !strings.Contains(res[2].Error.Error(), "-2") {
		t.Fatalf("failed multi results = %+v; want ok (rolled back), bad version, runtime inconsistency (-2)", res)
	}
	if found, _, _ := c.Exists(tx + "/never"); found {
		t.Fatal("a failed multi created a node")
	}
	if data, _ := try2(c.Get(tx)).must(t, "get tx"); string(data) != "1" {
		t.Fatalf("a failed multi changed data to %q", data)
	}

	t.Log("== ACLs and auth")
	secret := try1(c.Create(root+"/secret", []byte("s"), 0, zk.DigestACL(zk.PermAll, "alice", "secret"))).must(t, "create digest-protected")
	_, _, err = c.Get(secret)
	wantErr(t, err, zk.ErrNoAuth, "get without auth")
	if err := c.AddAuth("digest", []byte("alice:secret")); err != nil {
		t.Fatalf("add auth: %v", err)
	}
	if data, _ := try2(c.Get(secret)).must(t, "get with auth"); string(data) != "s" {
		t.Fatalf("get with auth = %q", data)
	}
	acl, st := try2(c.GetACL(secret)).must(t, "get acl")
	if len(acl) != 1 || acl[0].Scheme != "digest" || !strings.HasPrefix(acl[0].ID, "alice:") || acl[0].Perms != zk.PermAll || st.Aversion != 0 {
		t.Fatalf("getACL = %+v (aversion %d)", acl, st.Aversion)
	}
	_, err = c.SetACL(secret, zk.WorldACL(zk.PermRead), 5)
	wantErr(t, err, zk.ErrBadVersion, "setACL stale version")
	st = try1(c.SetACL(secret, append(zk.AuthACL(zk.PermAll), zk.WorldACL(zk.PermRead)...), 0)).must(t, "setACL")
	if st.Aversion != 1 {
		t.Fatalf("setACL aversion = %d, want 1", st.Aversion)
	}
	if data, _ := try2(other.Get(secret)).must(t, "world read"); string(data) != "s" {
		t.Fatalf("world-readable get = %q", data)
	}
	_, err = other.Set(secret, nil, -1)
	wantErr(t, err, zk.ErrNoAuth, "set without write permission")
	if err := other.AddAuth("digest", []byte("super:test")); err != nil {
		t.Fatalf("add super auth: %v", err)
	}
	try1(other.Set(secret, []byte("super"), -1)).must(t, "set as super")

	t.Log("== watches")
	w := try1(c.Create(root+"/w", []byte("w"), 0, open)).must(t, "create w")
	_, _, dataCh := try3(c.GetW(w)).must(t, "getw")
	_, _, childCh := try3(c.ChildrenW(w)).must(t, "childrenw")
	found, _, existCh, err := c.ExistsW(w + "/x")
	if err != nil || found {
		t.Fatalf("existsw missing = %v, %v", found, err)
	}
	try1(other.Set(w, []byte("w1"), -1)).must(t, "set w")
	if ev := waitEvent(t, dataCh, "data watch"); ev.Type != zk.EventNodeDataChanged || ev.Path != w {
		t.Fatalf("data watch event %+v", ev)
	}
	try1(other.Create(w+"/x", nil, 0, open)).must(t, "create w/x")
	if ev := waitEvent(t, existCh, "exists watch"); ev.Type != zk.EventNodeCreated || ev.Path != w+"/x" {
		t.Fatalf("exists watch event %+v", ev)
	}
	if ev := waitEvent(t, childCh, "child watch"); ev.Type != zk.EventNodeChildrenChanged || ev.Path != w {
		t.Fatalf("child watch event %+v", ev)
	}
	_, _, delCh := try3(c.GetW(w+"/x")).must(t, "getw w/x")
	if err := other.Delete(w+"/x", -1); err != nil {
		t.Fatalf("delete w/x: %v", err)
	}
	if ev := waitEvent(t, delCh, "delete watch"); ev.Type != zk.EventNodeDeleted || ev.Path != w+"/x" {
		t.Fatalf("delete watch event %+v", ev)
	}

	t.Log("== lock recipe")
	lock := zk.NewLock(c.Conn, root+"/lock", open)
	if err := lock.Lock(); err != nil {
		t.Fatalf("lock: %v", err)
	}
	if kids, _ := try2(c.Children(root+"/lock")).must(t, "lock children"); len(kids) != 1 {
		t.Fatalf("lock nodes = %v, want one", kids)
	}
	if err := lock.Unlock(); err != nil {
		t.Fatalf("unlock: %v", err)
	}

	t.Log("== reconnect: same session, ephemerals kept, watches re-armed")
	_, _, dataCh = try3(c.GetW(w)).must(t, "getw before disconnect")
	sidBefore := c.SessionID()
	dialer.breakAndHold()
	c.states.waitCount(t, zk.StateDisconnected, 1)
	try1(other.Set(w, []byte("while-away"), -1)).must(t, "set while disconnected")
	dialer.release()
	c.states.waitCount(t, zk.StateHasSession, 2)
	if ev := waitEvent(t, dataCh, "watch re-armed after reconnect"); ev.Type != zk.EventNodeDataChanged || ev.Path != w {
		t.Fatalf("re-armed watch event %+v", ev)
	}
	if c.SessionID() != sidBefore {
		t.Fatalf("session 0x%x after reconnect, want the same session 0x%x", c.SessionID(), sidBefore)
	}
	if found, st, err := c.Exists(eph); err != nil || !found || st.EphemeralOwner != sidBefore {
		t.Fatalf("ephemeral after reconnect: %v, %+v, %v", found, st, err)
	}

	t.Log("== close: ephemerals go with the session")
	sid := c.SessionID()
	c.Close()
	for _, p := range []string{eph, eseq, prot} {
		if found, _, err := other.Exists(p); err != nil || found {
			t.Fatalf("%s after closing session 0x%x: exists=%v err=%v", p, sid, found, err)
		}
	}
	deleteTree(t, other.Conn, root)
	if found, _, _ := other.Exists(root); found {
		t.Fatalf("%s still exists after cleanup", root)
	}
}

// deleteTree removes path and everything below it.
func deleteTree(t *testing.T, c *zk.Conn, path string) {
	t.Helper()
	kids, _, err := c.Children(path)
	if err != nil {
		t.Fatalf("children of %s: %v", path, err)
	}
	for _, k := range kids {
		deleteTree(t, c, path+"/"+k)
	}
	if err := c.Delete(path, -1); err != nil {
		t.Fatalf("delete %s: %v", path, err)
	}
}

// try1, try2 and try3 capture an operation's results and error; must fails
// the test naming op if the error is not nil and otherwise returns the
// results: x := try1(c.Op(...)).must(t, "op").
func try1[A any](a A, err error) result1[A] { return result1[A]{a, err} }

type result1[A any] struct {
	a   A
	err error
}

func (r result1[A]) must(t *testing.T, op string) A {
	t.Helper()
	if r.err != nil {
		t.Fatalf("%s: %v", op, r.err)
	}
	return r.a
}

func try2[A, B any](a A, b B, err error) result2[A, B] { return result2[A, B]{a, b, err} }

type result2[A, B any] struct {
	a   A
	b   B
	err error
}

func (r result2[A, B]) must(t *testing.T, op string) (A, B) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("%s: %v", op, r.err)
	}
	return r.a, r.b
}

func try3[A, B, C any](a A, b B, c C, err error) result3[A, B, C] {
	return result3[A, B, C]{a, b, c, err}
}

type result3[A, B, C any] struct {
	a   A
	b   B
	c   C
	err error
}

func (r result3[A, B, C]) must(t *testing.T, op string) (A, B, C) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("%s: %v", op, r.err)
	}
	return r.a, r.b, r.c
}
