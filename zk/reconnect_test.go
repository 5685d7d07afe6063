package zk_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/zktest"
	"github.com/paddockhq/paddock/zk"
)

// Session lifecycle: against the scripted server of fakeserver_test.go
// (expiry in the handshake, lastZxid, pings and timeouts, Connect's ctx,
// Close), and against real servers (restarts, kills, changes made while a
// client is cut off, expiry, several servers, TLS and DNS). Each kind of real
// server is started here, not shared, because these tests stop and restart
// it, with tickTime 500 ms so that sessions may be as short as 1 s.

// lifecycleTests run in this order against one server of each kind; the
// ones that stop the server come last.
var lifecycleTests = []struct {
	name string
	run  func(t *testing.T, proc *zktest.Process)
}{
	{"MultiServerOneDown", testMultiServerOneDown},
	{"DNSHostProvider", testDNSHostProvider},
	{"TLS", testTLSProxy},
	{"CloseWhileDisconnected", testCloseWhileDisconnected},
	{"EventsWhileCutOff", testEventsWhileCutOff},
	{"PersistentWatchWhileCutOff", testPersistentWhileCutOff},
	{"ExpiryWhileCutOff", testExpiryWhileCutOff},
	{"ServerRestart", testServerRestart},
	{"ServerKilledMidStream", testServerKilled},
}

func TestSessionLifecycle(t *testing.T) {
	starters := []struct {
		kind  string
		start func(t *testing.T) *zktest.Process
	}{
		{"paddock", func(t *testing.T) *zktest.Process {
			return zktest.StartPaddock(t, zktest.PaddockOptions{TickTime: 500, ExtraConfig: lifecycleConfig})
		}},
		{"zookeeper", func(t *testing.T) *zktest.Process {
			return zktest.StartZooKeeper(t, zktest.ZKOptions{TickTime: 500, ExtraConfig: lifecycleConfig})
		}},
	}
	for _, s := range starters {
		t.Run(s.kind, func(t *testing.T) {
			proc := s.start(t)
			for _, tt := range lifecycleTests {
				t.Run(tt.name, func(t *testing.T) { tt.run(t, proc) })
			}
		})
	}
}

// mkdirs creates each path as an empty persistent znode.
func mkdirs(t *testing.T, c *zk.Conn, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := c.Create(testCtx(t), p, nil, zk.OpenACL, zk.ModePersistent); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
	}
}

// testMultiServerOneDown: a connect string naming a port nobody listens on
// and the real server connects, also when the dead one is tried first.
func testMultiServerOneDown(t *testing.T, proc *zktest.Process) {
	dead := fmt.Sprintf("127.0.0.1:%d", zktest.FreePort(t))
	c := connect(t, dead+","+proc.Addr)
	if got := c.Server(); got != proc.Addr {
		t.Errorf("Server() = %q, want %q", got, proc.Addr)
	}

	var mu sync.Mutex
	var dials []string
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dials = append(dials, addr)
		mu.Unlock()
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	c2 := connect(t, dead+","+proc.Addr, zk.WithHostProvider(newOrderedHosts), zk.WithDialer(dial))
	if _, _, err := c2.Exists(testCtx(t), "/"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dials) < 2 || dials[0] != dead || dials[len(dials)-1] != proc.Addr {
		t.Errorf("dialed %v, want %s first and %s last", dials, dead, proc.Addr)
	}
	if got := c2.Server(); got != proc.Addr {
		t.Errorf("Server() = %q, want %q", got, proc.Addr)
	}
}

// testDNSHostProvider: "localhost:<port>" resolved by NewDNSHostProvider.
func testDNSHostProvider(t *testing.T, proc *zktest.Process) {
	c := connect(t, fmt.Sprintf("localhost:%d", proc.Port),
		zk.WithHostProvider(func(hosts []string) zk.HostProvider { return zk.NewDNSHostProvider(hosts, nil) }))
	if got := c.Server(); got != proc.Addr {
		t.Errorf("Server() = %q, want the resolved %q", got, proc.Addr)
	}
	if _, _, err := c.Exists(testCtx(t), "/"); err != nil {
		t.Fatal(err)
	}
}

// testTLSProxy: WithTLSConfig through a TLS-terminating proxy in front of
// the plain server; a client without TLS cannot talk to the proxy.
func testTLSProxy(t *testing.T, proc *zktest.Process) {
	serverCfg, roots := selfSignedTLS(t)
	p := startProxy(t, proc.Addr, serverCfg)
	c := connect(t, p.addr, zk.WithTLSConfig(&tls.Config{RootCAs: roots}))
	ctx := testCtx(t)
	if _, err := c.Create(ctx, "/lc-tls", []byte("one"), zk.OpenACL, zk.ModePersistent); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set(ctx, "/lc-tls", []byte("two"), 0); err != nil {
		t.Fatal(err)
	}
	if data, _, err := c.Get(ctx, "/lc-tls"); err != nil || string(data) != "two" {
		t.Fatalf("Get = %q, %v; want \"two\"", data, err)
	}
	if p.handshakes.Load() == 0 {
		t.Fatal("the proxy completed no TLS handshake")
	}

	plainCtx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	if pc, err := zk.Connect(plainCtx, p.addr); err == nil {
		pc.Close()
		t.Fatal("a client without TLS connected to the TLS port")
	} else if !errors.Is(err, zk.ErrNoServer) {
		t.Errorf("plain client: %v, want ErrNoServer", err)
	}
}

// testCloseWhileDisconnected: Close returns at once while no server can be
// reached; the call waiting for a connection and later calls fail.
func testCloseWhileDisconnected(t *testing.T, proc *zktest.Process) {
	p := startProxy(t, proc.Addr, nil)
	log := newEventLog()
	c := connect(t, p.addr, zk.WithDefaultWatcher(log))
	p.setCut(true)
	log.state(t, 0, zk.StateDisconnected)

	queued := make(chan error, 2)
	c.GetAsync(testCtx(t), "/", nil, func(_ []byte, _ *zk.Stat, err error) { queued <- err })
	start := time.Now()
	c.Close()
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Close took %v while disconnected", took)
	}
	select {
	case err := <-queued:
		if !errors.Is(err, zk.ErrClosed) && !errors.Is(err, zk.ErrConnectionLoss) {
			t.Errorf("call waiting for a connection: %v, want ErrClosed or ErrConnectionLoss", err)
		}
	case <-time.After(fakeWait):
		t.Fatal("the call waiting for a connection never completed")
	}
	if _, _, err := c.Get(testCtx(t), "/"); !errors.Is(err, zk.ErrClosed) {
		t.Errorf("call after Close: %v, want ErrClosed", err)
	}
	log.state(t, 0, zk.StateClosed)
	if st := c.State(); st != zk.StateClosed {
		t.Errorf("State() = %s, want Closed", st)
	}
	if len(queued) != 0 {
		t.Error("the waiting call completed twice")
	}
}

// testEventsWhileCutOff: client A watches nodes, loses its connection
// (through a proxy; the server stays up), client B changes the nodes, and
// A's watches fire when it is back, through setWatches.
func testEventsWhileCutOff(t *testing.T, proc *zktest.Process) {
	p := startProxy(t, proc.Addr, nil)
	alog := newEventLog()
	a := connect(t, p.addr, zk.WithDefaultWatcher(alog))
	b := connect(t, proc.Addr)
	ctx := testCtx(t)
	root := "/lc-cut"
	x, del, created, kids := root+"/x", root+"/del", root+"/new", root+"/kids"
	mkdirs(t, b, root, x, del, kids)

	w := newEventLog()
	if _, _, err := a.GetW(ctx, x, w); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.GetW(ctx, del, w); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := a.ExistsW(ctx, created, w); err != nil || ok {
		t.Fatalf("ExistsW %s = %v, %v", created, ok, err)
	}
	if _, _, err := a.ChildrenW(ctx, kids, w); err != nil {
		t.Fatal(err)
	}
	sid := a.SessionID()

	p.setCut(true)
	i := alog.state(t, 0, zk.StateDisconnected)
	if _, err := b.Set(ctx, x, []byte("changed"), -1); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, del, -1); err != nil {
		t.Fatal(err)
	}
	mkdirs(t, b, created, kids+"/c")
	if len(w.nodeEvents()) != 0 {
		t.Fatalf("events while cut off: %v", w.nodeEvents())
	}
	p.setCut(false)
	alog.state(t, i, zk.StateSyncConnected)

	for _, want := range []struct {
		typ  zk.EventType
		path string
	}{
		{zk.EventNodeDataChanged, x},
		{zk.EventNodeDeleted, del},
		{zk.EventNodeCreated, created},
		{zk.EventNodeChildrenChanged, kids},
	} {
		w.wait(t, 0, fakeWait, want.typ.String()+" "+want.path, isNode(want.typ, want.path))
	}
	if evs := w.nodeEvents(); len(evs) != 4 {
		t.Errorf("watch events %v, want exactly the 4 changes", evs)
	}
	if got := a.SessionID(); got != sid {
		t.Errorf("session %#x after reconnect, want %#x", got, sid)
	}
}

// testPersistentWhileCutOff: with a persistent watch the client re-registers
// through setWatches2; a one-time watch fires for the change missed while
// cut off, and the persistent watch is re-armed without a replay of what
// it missed (ZooKeeper's documented behaviour).
func testPersistentWhileCutOff(t *testing.T, proc *zktest.Process) {
	p := startProxy(t, proc.Addr, nil)
	alog := newEventLog()
	a := connect(t, p.addr, zk.WithDefaultWatcher(alog))
	b := connect(t, proc.Addr)
	ctx := testCtx(t)
	root := "/lc-persist"
	x, pp := root+"/x", root+"/p"
	mkdirs(t, b, root, x)

	w, pw := newEventLog(), newEventLog()
	if err := a.AddWatch(ctx, pp, pw, zk.AddWatchPersistent); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.GetW(ctx, x, w); err != nil {
		t.Fatal(err)
	}

	p.setCut(true)
	i := alog.state(t, 0, zk.StateDisconnected)
	mkdirs(t, b, pp) // missed by the persistent watch
	if _, err := b.Set(ctx, x, []byte("changed"), -1); err != nil {
		t.Fatal(err)
	}
	p.setCut(false)
	alog.state(t, i, zk.StateSyncConnected)

	w.wait(t, 0, fakeWait, "NodeDataChanged "+x, isNode(zk.EventNodeDataChanged, x))
	if _, err := b.Set(ctx, pp, []byte("after"), -1); err != nil {
		t.Fatal(err)
	}
	pw.wait(t, 0, fakeWait, "NodeDataChanged "+pp, isNode(zk.EventNodeDataChanged, pp))
	if evs := pw.nodeEvents(); evs[0].Type != zk.EventNodeDataChanged {
		t.Errorf("persistent watch events %v: the first should be the change made after the reconnect", evs)
	}
}

// testExpiryWhileCutOff: cut off for longer than its session timeout, A's
// session expires: B sees A's ephemeral go, A ends in StateExpired (told by
// the server or found by itself) and its calls fail with ErrSessionExpired.
func testExpiryWhileCutOff(t *testing.T, proc *zktest.Process) {
	const timeout = 2 * time.Second
	p := startProxy(t, proc.Addr, nil)
	alog := newEventLog()
	a := connect(t, p.addr, zk.WithSessionTimeout(timeout), zk.WithDefaultWatcher(alog))
	if got := a.SessionTimeout(); got != timeout {
		t.Fatalf("negotiated session timeout %v, want %v (minSessionTimeout is 2*tickTime = 1s)", got, timeout)
	}
	b := connect(t, proc.Addr)
	ctx := testCtx(t)
	root := "/lc-expiry"
	eph := root + "/eph"
	mkdirs(t, b, root)
	if _, err := a.Create(ctx, eph, nil, zk.OpenACL, zk.ModeEphemeral); err != nil {
		t.Fatal(err)
	}
	bw := newEventLog()
	if ok, _, err := b.ExistsW(ctx, eph, bw); err != nil || !ok {
		t.Fatalf("ExistsW %s = %v, %v", eph, ok, err)
	}

	p.setCut(true)
	bw.wait(t, 0, 4*timeout, "NodeDeleted "+eph, isNode(zk.EventNodeDeleted, eph))
	p.setCut(false)
	alog.state(t, 0, zk.StateExpired)
	if st := a.State(); st != zk.StateExpired {
		t.Errorf("State() = %s, want Expired", st)
	}
	if _, _, err := a.Get(ctx, root); !errors.Is(err, zk.ErrSessionExpired) {
		t.Errorf("call after expiry: %v, want ErrSessionExpired", err)
	}
	if ok, _, err := b.Exists(ctx, eph); err != nil || ok {
		t.Errorf("ephemeral of the expired session: exists %v, %v", ok, err)
	}
}

// lifecycleConfig lets a session outlive a slow restart: short timeouts for
// the expiry tests (tickTime 500, minimum 1 s), and up to 60 s for the
// restart test, whose server (a JVM, next to a test binary under the race
// detector on a loaded machine) has taken more than 30 s to stop and come
// back.
var lifecycleConfig = []string{"maxSessionTimeout=60000"}

// restartSessionTimeout is the restart test's session timeout: the client
// gives the session up once no server was heard from for that long.
const restartSessionTimeout = 60 * time.Second

// testServerRestart: the session survives a restart of its only server,
// with its ephemeral, and a watch set before the restart fires for a change
// made after it.
func testServerRestart(t *testing.T, proc *zktest.Process) {
	alog := newEventLog()
	a := connect(t, proc.Addr, zk.WithDefaultWatcher(alog), zk.WithSessionTimeout(restartSessionTimeout))
	ctx := testCtx(t)
	root := "/lc-restart"
	eph, watched := root+"/eph", root+"/w"
	mkdirs(t, a, root, watched)
	if _, err := a.Create(ctx, eph, nil, zk.OpenACL, zk.ModeEphemeral); err != nil {
		t.Fatal(err)
	}
	w := newEventLog()
	if _, _, err := a.GetW(ctx, watched, w); err != nil {
		t.Fatal(err)
	}
	sid := a.SessionID()

	proc.Restart(t)
	i := alog.state(t, 0, zk.StateDisconnected)
	alog.wait(t, i, restartSessionTimeout+10*time.Second, "SyncConnected", isState(zk.StateSyncConnected))
	if got := a.SessionID(); got != sid {
		t.Errorf("session %#x after the restart, want %#x", got, sid)
	}

	ctx = testCtx(t) // the restart may have outlasted the first one
	b := connect(t, proc.Addr)
	ok, st, err := b.Exists(ctx, eph)
	if err != nil || !ok || st.EphemeralOwner != sid {
		t.Fatalf("ephemeral after the restart: exists %v, %v, owner %#x; want owned by %#x", ok, err, ownerOf(st), sid)
	}
	if _, err := b.Set(ctx, watched, []byte("after"), -1); err != nil {
		t.Fatal(err)
	}
	w.wait(t, 0, fakeWait, "NodeDataChanged "+watched, isNode(zk.EventNodeDataChanged, watched))
}

func ownerOf(st *zk.Stat) int64 {
	if st == nil {
		return 0
	}
	return st.EphemeralOwner
}

// testServerKilled: the server is killed while asynchronous creates stream;
// every callback runs exactly once with nil or ErrConnectionLoss, every
// acknowledged create survives, and after a restart the session resumes.
func testServerKilled(t *testing.T, proc *zktest.Process) {
	const (
		maxCalls = 50000
		window   = 256
	)
	alog := newEventLog()
	// The long timeout lets the session outlive a slow restart, as in
	// testServerRestart: a ZooKeeper JVM restarting on a machine busy
	// with other tests once took longer than the default.
	a := connect(t, proc.Addr, zk.WithDefaultWatcher(alog), zk.WithSessionTimeout(restartSessionTimeout))
	ctx := testCtx(t)
	root := "/lc-kill"
	eph := root + "/eph"
	mkdirs(t, a, root)
	if _, err := a.Create(ctx, eph, nil, zk.OpenACL, zk.ModeEphemeral); err != nil {
		t.Fatal(err)
	}
	sid := a.SessionID()

	runs := make([]atomic.Int32, maxCalls)
	errs := make([]error, maxCalls)
	var wg sync.WaitGroup
	var completed atomic.Int32
	sem := make(chan struct{}, window)
	stop := make(chan struct{})
	submitted := make(chan int, 1)
	streaming := make(chan struct{}) // closed at the 200th callback
	go func() {
		n := 0
	loop:
		for ; n < maxCalls; n++ {
			select {
			case <-stop:
				break loop
			case sem <- struct{}{}:
			}
			wg.Add(1)
			i := n
			a.CreateAsync(ctx, root+"/n-", nil, zk.OpenACL, zk.ModePersistentSequential, func(_ string, err error) {
				if runs[i].Add(1) == 1 {
					errs[i] = err
					if completed.Add(1) == 200 {
						close(streaming)
					}
					<-sem
					wg.Done()
				}
			})
		}
		submitted <- n
	}()
	select {
	case <-streaming:
	case <-time.After(fakeWait):
		t.Fatal("the creates are not coming back")
	}
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	down := alog.state(t, 0, zk.StateDisconnected)
	close(stop)
	n := recv(t, submitted, "the submitting goroutine")
	waitGroup(t, &wg, "callbacks")

	ok, lost := 0, 0
	for i := range n {
		if r := runs[i].Load(); r != 1 {
			t.Errorf("callback %d ran %d times", i, r)
		}
		switch {
		case errs[i] == nil:
			ok++
		case errors.Is(errs[i], zk.ErrConnectionLoss):
			lost++
		default:
			t.Errorf("call %d: %v, want nil or ErrConnectionLoss", i, errs[i])
		}
	}
	if ok == 0 || lost == 0 {
		t.Errorf("%d calls succeeded and %d were lost, want some of each", ok, lost)
	}

	proc.Restart(t)
	alog.wait(t, down, restartSessionTimeout+10*time.Second, "SyncConnected", isState(zk.StateSyncConnected))
	ctx = testCtx(t) // the restart may have outlasted the first one
	if got := a.SessionID(); got != sid {
		t.Errorf("session %#x after the restart, want %#x", got, sid)
	}
	if exists, _, err := a.Exists(ctx, eph); err != nil || !exists {
		t.Errorf("own ephemeral after the restart: %v, %v", exists, err)
	}
	kids, _, err := a.Children(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if created := len(kids) - 1; created < ok {
		t.Errorf("%d creates acknowledged before the kill, only %d znodes after the restart", ok, created)
	}
	t.Logf("%d calls: %d acknowledged, %d lost; %d znodes after the restart", n, ok, lost, len(kids)-1)
}

// ---- session lifecycle against the scripted server ----

// TestFakeExpiredHandshake drops the connection and has the server answer the
// reconnect with timeOut 0: the session is expired, the call queued while
// disconnected and every later call fail with ErrSessionExpired.
func TestFakeExpiredHandshake(t *testing.T) {
	s := newFakeZK(t, false)
	hello := make(chan proto.ConnectRequest, 1)
	release := make(chan struct{})
	s.handshake = func(n int, req proto.ConnectRequest) (proto.ConnectResponse, bool) {
		if n == 1 {
			return grant(req, 0xe1, false), true
		}
		hello <- req
		select {
		case <-release:
		case <-time.After(fakeWait):
		}
		return proto.ConnectResponse{TimeOut: 0, Passwd: make([]byte, 16)}, true
	}
	log := newEventLog()
	c, fc := connectFake(t, s, zk.WithDefaultWatcher(log))
	fc.close()
	log.state(t, 0, zk.StateDisconnected)
	var req proto.ConnectRequest
	select {
	case req = <-hello:
	case <-time.After(fakeWait):
		t.Fatal("no reconnect")
	}
	if req.SessionID != 0xe1 || !bytes.Equal(req.Passwd, fc.resp.Passwd) {
		t.Errorf("reconnect: session %#x password %x, want %#x %x", req.SessionID, req.Passwd, 0xe1, fc.resp.Passwd)
	}
	queued := make(chan error, 1)
	c.GetAsync(testCtx(t), "/q", nil, func(_ []byte, _ *zk.Stat, err error) { queued <- err })
	close(release)

	log.state(t, 0, zk.StateExpired)
	select {
	case err := <-queued:
		if !errors.Is(err, zk.ErrSessionExpired) {
			t.Errorf("call queued while disconnected: %v, want ErrSessionExpired", err)
		}
	case <-time.After(fakeWait):
		t.Fatal("queued call never completed")
	}
	if _, _, err := c.Get(testCtx(t), "/q"); !errors.Is(err, zk.ErrSessionExpired) {
		t.Errorf("call after expiry: %v, want ErrSessionExpired", err)
	}
	if st := c.State(); st != zk.StateExpired {
		t.Errorf("State() = %s, want Expired", st)
	}
}

// TestFakeSilentHandshake: a server accepts the reconnect and never answers
// it (a ZooKeeper server still loading its data does that). The attempt must
// give up well before the session timeout, so that the next attempt resumes
// the session instead of the client taking it as expired.
func TestFakeSilentHandshake(t *testing.T) {
	const timeout = 3 * time.Second
	s := newFakeZK(t, false)
	s.handshake = func(n int, req proto.ConnectRequest) (proto.ConnectResponse, bool) {
		if n == 2 {
			select { // silent until the server shuts down
			case <-s.quit:
			case <-time.After(fakeWait):
			}
			return proto.ConnectResponse{}, false
		}
		return grant(req, 0x51, false), true
	}
	log := newEventLog()
	c, fc := connectFake(t, s, zk.WithDefaultWatcher(log), zk.WithSessionTimeout(timeout))
	fc.close()
	down := log.state(t, 0, zk.StateDisconnected)
	i, _ := log.wait(t, down, fakeWait, "SyncConnected or Expired", func(e zk.Event) bool {
		return e.Type == zk.EventNone && (e.State == zk.StateSyncConnected || e.State == zk.StateExpired)
	})
	if got := log.all()[i].State; got != zk.StateSyncConnected {
		t.Fatalf("after a silent handshake the session ended %s, want it resumed; events: %v", got, log.all())
	}
	if n := s.requests.Load(); n < 3 {
		t.Errorf("%d ConnectRequests, want at least 3 (the silent one and the one that resumed)", n)
	}
	if got := c.SessionID(); got != 0x51 {
		t.Errorf("session %#x after the reconnect, want 0x51", got)
	}
}

// TestFakeExpiredAtConnect: a server that answers the first handshake with
// timeOut 0 makes Connect fail with ErrSessionExpired.
func TestFakeExpiredAtConnect(t *testing.T) {
	s := newFakeZK(t, false)
	s.handshake = func(int, proto.ConnectRequest) (proto.ConnectResponse, bool) {
		return proto.ConnectResponse{Passwd: make([]byte, 16)}, true
	}
	_, err := zk.Connect(testCtx(t), s.addr)
	if !errors.Is(err, zk.ErrSessionExpired) {
		t.Fatalf("Connect: %v, want an error wrapping ErrSessionExpired", err)
	}
}

// TestFakeLastZxid: after replies carrying zxids, a reconnect sends the last
// one as lastZxidSeen with the same session id and password.
func TestFakeLastZxid(t *testing.T) {
	s := newFakeZK(t, false)
	c, fc := connectFake(t, s, zk.WithSessionTimeout(6*time.Second))
	ctx := testCtx(t)
	zxids := []int64{0x10, 0x2a, 0x100000042}
	errs := make(chan error, len(zxids))
	for range zxids {
		c.SetAsync(ctx, "/z", []byte("v"), -1, func(_ *zk.Stat, err error) { errs <- err })
	}
	for _, z := range zxids {
		r := fc.next(t)
		fc.reply(t, r.xid, z, proto.ErrOK, &proto.StatResponse{})
	}
	for range zxids {
		if err := recv(t, errs, "a setData callback"); err != nil {
			t.Fatal(err)
		}
	}
	want := zxids[len(zxids)-1]
	if got := c.LastZxid(); got != want {
		t.Errorf("LastZxid() = %#x, want %#x", got, want)
	}
	fc.close()
	fc2 := s.accept(t)
	if fc2.req.LastZxidSeen != want {
		t.Errorf("reconnect LastZxidSeen = %#x, want %#x", fc2.req.LastZxidSeen, want)
	}
	if fc2.req.SessionID != fc.resp.SessionID || !bytes.Equal(fc2.req.Passwd, fc.resp.Passwd) {
		t.Errorf("reconnect session %#x/%x, want %#x/%x", fc2.req.SessionID, fc2.req.Passwd, fc.resp.SessionID, fc.resp.Passwd)
	}
	if fc2.req.TimeOut != 6000 {
		t.Errorf("reconnect TimeOut = %d, want the requested 6000", fc2.req.TimeOut)
	}
}

// TestFakePings: an idle client pings every third of the negotiated timeout;
// when the server goes silent it drops the connection two thirds of the
// timeout after it last heard from it; with no server to reconnect to, the
// session expires on the client after the whole timeout.
func TestFakePings(t *testing.T) {
	const granted = 1500 * time.Millisecond
	s := newFakeZK(t, false)
	s.handshake = func(n int, req proto.ConnectRequest) (proto.ConnectResponse, bool) {
		resp := grant(req, 0x9, false)
		resp.TimeOut = int32(granted / time.Millisecond)
		return resp, true
	}
	log := newEventLog()
	c, fc := connectFake(t, s, zk.WithDefaultWatcher(log), zk.WithSessionTimeout(30*time.Second))
	if got := c.SessionTimeout(); got != granted {
		t.Fatalf("SessionTimeout() = %v, want the granted %v", got, granted)
	}
	prev := time.Now() // the handshake, about: the client's last write
	var last time.Time
	for i := range 2 {
		r := fc.next(t)
		if r.op != proto.OpPing || r.xid != proto.XidPing {
			t.Fatalf("idle client sent %s xid %d, want ping xid -2", r.op, r.xid)
		}
		// A third of the timeout after the client's previous write, give
		// or take scheduling.
		if d := r.at.Sub(prev); d < granted/3-100*time.Millisecond || d > granted*2/3 {
			t.Errorf("ping %d came %v after the previous one, want about %v", i, d, granted/3)
		}
		prev = r.at
		fc.reply(t, proto.XidPing, 0, proto.ErrOK, nil)
		last = time.Now()
	}
	// The server goes silent, and nobody listens any more.
	s.closeListener()
	_, lost := log.wait(t, 0, fakeWait, "Disconnected", isState(zk.StateDisconnected))
	if d := lost.Sub(last); d < granted*2/3-50*time.Millisecond || d > granted {
		t.Errorf("connection dropped %v after the server went silent, want about %v (2/3 of the timeout)", d, granted*2/3)
	}
	_, expired := log.wait(t, 0, fakeWait, "Expired", isState(zk.StateExpired))
	if d := expired.Sub(last); d < granted-50*time.Millisecond || d > granted+2500*time.Millisecond {
		t.Errorf("session expired %v after the server was last heard, want a little over %v", d, granted)
	}
	if _, err := c.Sync(testCtx(t), "/"); !errors.Is(err, zk.ErrSessionExpired) {
		t.Errorf("call after client-side expiry: %v, want ErrSessionExpired", err)
	}
}

// TestFakeConnectContext: Connect gives up when its ctx ends while no
// server answers, promptly, with an error wrapping ErrNoServer and the ctx's.
func TestFakeConnectContext(t *testing.T) {
	silent := newFakeZK(t, false) // reads the ConnectRequest, never answers
	silent.handshake = func(int, proto.ConnectRequest) (proto.ConnectResponse, bool) {
		<-t.Context().Done()
		return proto.ConnectResponse{}, false
	}
	refused := newFakeZK(t, false)
	refused.closeListener()
	for _, tt := range []struct{ name, addr string }{
		{"nobody listens", refused.addr},
		{"server never answers", silent.addr},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const wait = 400 * time.Millisecond
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			start := time.Now()
			c, err := zk.Connect(ctx, tt.addr, zk.WithSessionTimeout(30*time.Second))
			took := time.Since(start)
			if err == nil {
				c.Close()
				t.Fatal("Connect succeeded")
			}
			if !errors.Is(err, zk.ErrNoServer) || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Connect: %v, want an error wrapping ErrNoServer and DeadlineExceeded", err)
			}
			if took > wait+time.Second {
				t.Errorf("Connect returned %v after its ctx ended", took-wait)
			}
		})
	}
}

// TestFakeCloseSession: Close asks the server to close the session and ends
// in StateClosed, even when the server closes the connection right after
// its answer, as ZooKeeper does, and would say "expired" to a reconnect.
func TestFakeCloseSession(t *testing.T) {
	for i := range 20 {
		s := newFakeZK(t, false)
		s.handshake = func(n int, req proto.ConnectRequest) (proto.ConnectResponse, bool) {
			if n == 1 {
				return grant(req, 0xc1, false), true
			}
			return proto.ConnectResponse{Passwd: make([]byte, 16)}, true // the session is gone
		}
		log := newEventLog()
		c, fc := connectFake(t, s, zk.WithDefaultWatcher(log))
		closed := make(chan error, 1)
		go func() { closed <- c.Close() }()
		r := fc.next(t)
		if r.op != proto.OpCloseSession {
			t.Fatalf("Close sent %s, want closeSession", r.op)
		}
		fc.reply(t, r.xid, 5, proto.ErrOK, nil)
		fc.close()
		select {
		case err := <-closed:
			if err != nil {
				t.Fatalf("Close: %v", err)
			}
		case <-time.After(fakeWait):
			t.Fatal("Close did not return")
		}
		log.state(t, 0, zk.StateClosed)
		for _, e := range log.all() {
			if e.State == zk.StateExpired {
				t.Fatalf("round %d: a closed session reported Expired: events %v", i, log.all())
			}
		}
		if st := c.State(); st != zk.StateClosed {
			t.Fatalf("round %d: State() = %s after Close, want Closed", i, st)
		}
	}
}

// TestFakeCloseDuringHandshake: Close returns promptly while the Conn waits
// for a server that accepted the reconnection and never answers it.
func TestFakeCloseDuringHandshake(t *testing.T) {
	s := newFakeZK(t, false)
	hello := make(chan struct{}, 1)
	s.handshake = func(n int, req proto.ConnectRequest) (proto.ConnectResponse, bool) {
		if n == 1 {
			return grant(req, 0xc2, false), true
		}
		hello <- struct{}{}
		<-t.Context().Done()
		return proto.ConnectResponse{}, false
	}
	log := newEventLog()
	c, fc := connectFake(t, s, zk.WithDefaultWatcher(log), zk.WithSessionTimeout(30*time.Second))
	fc.close()
	select {
	case <-hello:
	case <-time.After(fakeWait):
		t.Fatal("no reconnect")
	}
	start := time.Now()
	c.Close()
	if took := time.Since(start); took > time.Second {
		t.Errorf("Close took %v during a handshake the server never answers", took)
	}
	log.state(t, 0, zk.StateClosed)
}

// ---- a TCP proxy that can be cut ----

// cutProxy forwards connections to target. While cut, it drops its
// connections and closes new ones at once, so a client loses its server
// while the server stays up. With a TLS config it terminates TLS.
type cutProxy struct {
	ln         net.Listener
	addr       string
	target     string
	tls        *tls.Config
	handshakes atomic.Int32

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func startProxy(t *testing.T, target string, cfg *tls.Config) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, addr: ln.Addr().String(), target: target, tls: cfg, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.acceptLoop()
	t.Cleanup(func() {
		ln.Close()
		p.setCut(true)
		p.wg.Wait()
	})
	return p
}

func (p *cutProxy) acceptLoop() {
	defer p.wg.Done()
	for {
		nc, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(nc) {
			nc.Close()
			continue
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.forward(nc)
		}()
	}
}

// track registers nc unless the proxy is cut.
func (p *cutProxy) track(nc net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	p.conns[nc] = struct{}{}
	return true
}

func (p *cutProxy) forward(client net.Conn) {
	defer p.drop(client)
	if p.tls != nil {
		tc := tls.Server(client, p.tls)
		tc.SetDeadline(time.Now().Add(5 * time.Second))
		if err := tc.Handshake(); err != nil {
			return
		}
		tc.SetDeadline(time.Time{})
		p.handshakes.Add(1)
		client = tc
	}
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		return
	}
	if !p.track(server) {
		server.Close()
		return
	}
	defer p.drop(server)
	done := make(chan struct{}, 2)
	go func() {
		io.Copy(server, client)
		done <- struct{}{}
	}()
	go func() {
		io.Copy(client, server)
		done <- struct{}{}
	}()
	<-done
	client.Close()
	server.Close()
	<-done
}

func (p *cutProxy) drop(nc net.Conn) {
	nc.Close()
	p.mu.Lock()
	delete(p.conns, nc)
	p.mu.Unlock()
}

// setCut cuts (closing every forwarded connection) or restores the proxy.
func (p *cutProxy) setCut(cut bool) {
	p.mu.Lock()
	p.cut = cut
	var open []net.Conn
	if cut {
		for nc := range p.conns {
			open = append(open, nc)
		}
	}
	p.mu.Unlock()
	for _, nc := range open {
		nc.Close()
	}
}

// selfSignedTLS returns a server configuration with a fresh self-signed
// certificate for 127.0.0.1, and a pool that trusts it.
func selfSignedTLS(t *testing.T) (*tls.Config, *x509.CertPool) {
	return selfSignedTLSNaming(t, []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
}

// selfSignedTLSNaming returns a server configuration with a fresh
// self-signed certificate for the IP addresses and DNS names given, and a
// pool that trusts it.
func selfSignedTLSNaming(t *testing.T, ips []net.IP, names []string) (*tls.Config, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "paddock zk client test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  ips,
		DNSNames:     names,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}, pool
}
