package zk_test

import (
	"context"
	"crypto/tls"
	"errors"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/zk"
)

// TestFakeAuthFailedPendingCalls: when the server refuses credentials, the
// calls still waiting for a reply fail with ErrAuthFailed, as the Java
// client fails them (conLossPacket in state AUTH_FAILED), not with
// ErrConnectionLoss, which would invite a retry of a session that is over.
func TestFakeAuthFailedPendingCalls(t *testing.T) {
	s := newFakeZK(t, false)
	log := newEventLog()
	c, fc := connectFake(t, s, zk.WithDefaultWatcher(log))
	got := make(chan error, 1)
	c.GetAsync(testCtx(t), "/a", nil, func(_ []byte, _ *zk.Stat, err error) { got <- err })
	if r := fc.next(t); r.op != proto.OpGetData {
		t.Fatalf("request %s, want getData", r.op)
	}
	authErr := make(chan error, 1)
	go func() { authErr <- c.AddAuth(testCtx(t), "digest", []byte("u:p")) }()
	if r := fc.next(t); r.op != proto.OpAuth {
		t.Fatalf("request %s, want auth", r.op)
	}
	fc.reply(t, proto.XidAuth, 0, proto.ErrAuthFailed, nil)
	fc.close()
	if err := recv(t, authErr, "AddAuth"); !errors.Is(err, zk.ErrAuthFailed) {
		t.Errorf("AddAuth: %v, want ErrAuthFailed", err)
	}
	if err := recv(t, got, "the pending call's callback"); !errors.Is(err, zk.ErrAuthFailed) {
		t.Errorf("call pending when the credentials were refused: %v, want ErrAuthFailed", err)
	}
	log.state(t, 0, zk.StateAuthFailed)
	for _, e := range log.all() {
		if e.State == zk.StateDisconnected {
			t.Errorf("events %v: Disconnected before AuthFailed", log.all())
		}
	}
}

// TestFakeClosePendingCalls: Close fails the calls still waiting with
// ErrClosed (docs/client.md, "Close"): those waiting for a reply when the
// server does not answer closeSession in time, and those waiting for a
// connection.
func TestFakeClosePendingCalls(t *testing.T) {
	t.Run("waiting for a reply", func(t *testing.T) {
		s := newFakeZK(t, false)
		c, fc := connectFake(t, s, zk.WithSessionTimeout(1500*time.Millisecond))
		got := make(chan error, 1)
		c.GetAsync(testCtx(t), "/a", nil, func(_ []byte, _ *zk.Stat, err error) { got <- err })
		fc.next(t)
		closed := make(chan error, 1)
		go func() { closed <- c.Close() }()
		if r := fc.next(t); r.op != proto.OpCloseSession {
			t.Fatalf("request %s, want closeSession", r.op)
		}
		// The server answers nothing (it keeps reading; pings go unanswered).
		go func() {
			for {
				if _, err := fc.read(fakeWait); err != nil {
					return
				}
			}
		}()
		recv(t, closed, "Close")
		if err := recv(t, got, "the pending call's callback"); !errors.Is(err, zk.ErrClosed) {
			t.Errorf("call waiting for its reply at Close: %v, want ErrClosed", err)
		}
	})
	t.Run("waiting for a connection", func(t *testing.T) {
		s := newFakeZK(t, false)
		hold := make(chan struct{})
		defer close(hold)
		s.handshake = func(n int, req proto.ConnectRequest) (proto.ConnectResponse, bool) {
			if n == 1 {
				return grant(req, 0xc105e, false), true
			}
			select { // the reconnection is never answered
			case <-hold:
			case <-s.quit:
			}
			return proto.ConnectResponse{}, false
		}
		log := newEventLog()
		// A long session timeout: the unanswered reconnection must not
		// time out (failing the queued call) before Close.
		c, fc := connectFake(t, s, zk.WithDefaultWatcher(log), zk.WithSessionTimeout(60*time.Second))
		fc.close()
		log.state(t, 0, zk.StateDisconnected)
		got := make(chan error, 1)
		c.GetAsync(testCtx(t), "/a", nil, func(_ []byte, _ *zk.Stat, err error) { got <- err })
		deadline := time.Now().Add(fakeWait)
		for s.requests.Load() < 2 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond) // nothing to wait on but the counter; bounded
		}
		if s.requests.Load() < 2 {
			t.Fatal("the client did not try to reconnect")
		}
		c.Close()
		if err := recv(t, got, "the queued call's callback"); !errors.Is(err, zk.ErrClosed) {
			t.Errorf("call waiting for a connection at Close: %v, want ErrClosed", err)
		}
	})
}

// TestFakeAuthAsyncEarlyFailureOrder: an asynchronous call that fails before
// it is sent calls back after every asynchronous call made before it, even
// when one of those is an AddAuthAsync, whose reply a ZooKeeper server sends
// as soon as it reads the packet, ahead of the replies to earlier requests.
func TestFakeAuthAsyncEarlyFailureOrder(t *testing.T) {
	for _, authFirst := range []bool{true, false} {
		t.Run(map[bool]string{true: "auth answered first", false: "auth answered last"}[authFirst], func(t *testing.T) {
			s := newFakeZK(t, false)
			c, fc := connectFake(t, s)
			var mu sync.Mutex
			var order []string
			var wg sync.WaitGroup
			wg.Add(3)
			ran := make(chan struct{}, 3)
			rec := func(name string) {
				mu.Lock()
				order = append(order, name)
				mu.Unlock()
				ran <- struct{}{}
				wg.Done()
			}
			c.GetAsync(testCtx(t), "/a", nil, func(_ []byte, _ *zk.Stat, err error) { rec("get") })
			get := fc.next(t)
			c.AddAuthAsync(testCtx(t), "digest", []byte("u:p"), func(err error) { rec("auth") })
			if r := fc.next(t); r.op != proto.OpAuth {
				t.Fatalf("request %s, want auth", r.op)
			}
			// One of the two is answered, and its callback has run, before
			// the call that fails early is made.
			if authFirst {
				fc.reply(t, proto.XidAuth, 0, proto.ErrOK, nil)
			} else {
				fc.reply(t, get.xid, 3, proto.ErrOK, &proto.GetDataResponse{})
			}
			recv(t, ran, "the first callback")
			c.GetAsync(testCtx(t), "bad", nil, func(_ []byte, _ *zk.Stat, err error) { rec("bad") })
			if authFirst {
				fc.reply(t, get.xid, 3, proto.ErrOK, &proto.GetDataResponse{})
			} else {
				fc.reply(t, proto.XidAuth, 0, proto.ErrOK, nil)
			}
			waitGroup(t, &wg, "callbacks")
			mu.Lock()
			defer mu.Unlock()
			if order[2] != "bad" {
				t.Errorf("callbacks ran in the order %v: the call that failed early ran before an earlier call's", order)
			}
		})
	}
}

// TestFakeConnectWrapsLastError: when Connect gives up, its error wraps the
// last dial or handshake error as well as ErrNoServer and ctx's error, as
// ErrNoServer's documentation and docs/client.md say.
func TestFakeConnectWrapsLastError(t *testing.T) {
	refused := newFakeZK(t, false)
	refused.closeListener()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	c, err := zk.Connect(ctx, refused.addr)
	if err == nil {
		c.Close()
		t.Fatal("Connect succeeded")
	}
	if !errors.Is(err, zk.ErrNoServer) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Connect: %v, want an error wrapping ErrNoServer and DeadlineExceeded", err)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("Connect: %v, want an error wrapping the last dial error (ECONNREFUSED)", err)
	}
}

// wrapWatcher is a watcher passed by value whose type is comparable but
// whose values may not be: comparing two that hold a WatcherFunc panics.
type wrapWatcher struct {
	next zk.Watcher
	name string
}

func (w wrapWatcher) Process(e zk.Event) { w.next.Process(e) }

// TestFakeUncomparableWatcherValues: watchers of a comparable type holding
// values that are not comparable (a struct with a WatcherFunc field) are
// registered, re-registered, fired and sent session events without a
// panic, each as its own watcher, as WatcherFunc values are.
func TestFakeUncomparableWatcherValues(t *testing.T) {
	s := newFakeZK(t, false)
	c, fc := connectFake(t, s)
	events := make(chan zk.Event, 16)
	f := zk.WatcherFunc(func(e zk.Event) { events <- e })
	errs := make(chan error, 2)
	c.GetAsync(testCtx(t), "/a", wrapWatcher{f, "a"}, func(_ []byte, _ *zk.Stat, err error) { errs <- err })
	c.GetAsync(testCtx(t), "/a", wrapWatcher{f, "b"}, func(_ []byte, _ *zk.Stat, err error) { errs <- err })
	for range 2 {
		r := fc.next(t)
		fc.reply(t, r.xid, 5, proto.ErrOK, &proto.GetDataResponse{})
	}
	for range 2 {
		if err := recv(t, errs, "getData callback"); err != nil {
			t.Fatal(err)
		}
	}
	fc.close() // every watcher gets Disconnected
	for range 2 {
		if e := recv(t, events, "Disconnected"); e.State != zk.StateDisconnected {
			t.Fatalf("event %+v, want Disconnected", e)
		}
	}
	fc2 := s.accept(t)
	if r := fc2.next(t); r.op != proto.OpSetWatches {
		t.Fatalf("request %s, want setWatches", r.op)
	} else {
		fc2.reply(t, r.xid, 6, proto.ErrOK, nil)
	}
	for range 2 {
		if e := recv(t, events, "SyncConnected"); e.State != zk.StateSyncConnected {
			t.Fatalf("event %+v, want SyncConnected", e)
		}
	}
	fc2.write(t, notifyFrame(nil, 7, proto.EventNodeDataChanged, "/a"))
	for range 2 {
		if e := recv(t, events, "NodeDataChanged"); e.Type != zk.EventNodeDataChanged || e.Path != "/a" {
			t.Fatalf("event %+v, want NodeDataChanged /a", e)
		}
	}
}

// TestFakeReadOnlyTLSProbe: connected read-only over TLS, the client asks the
// other servers whether they serve writes over TLS too (as ZooKeeper's client
// sends isro with its secure settings), so that it finds the read-write
// server behind a TLS port and moves to it.
func TestFakeReadOnlyTLSProbe(t *testing.T) {
	ro := newFakeZK(t, true)
	rw := newFakeZK(t, false)
	serverCfg, roots := selfSignedTLS(t)
	pro := startProxy(t, ro.addr, serverCfg)
	prw := startProxy(t, rw.addr, serverCfg)
	log := newEventLog()
	c, err := zk.Connect(testCtx(t), pro.addr+","+prw.addr, zk.WithReadOnly(true),
		zk.WithTLSConfig(&tls.Config{RootCAs: roots}), zk.WithHostProvider(newOrderedHosts),
		zk.WithDefaultWatcher(log), zk.WithSessionTimeout(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ro.shutdown()
		rw.shutdown()
		c.Close()
	})
	ro.accept(t)
	i := log.state(t, 0, zk.StateConnectedReadOnly)
	log.state(t, i+1, zk.StateSyncConnected)
	rw.accept(t)
	if rw.probes.Load() == 0 {
		t.Error("the read-write server was never asked isro")
	}
}

// TestFakeCloseReportsUnconfirmedClose: Close returns nil when the server
// confirms closeSession, and an error when it never answers (the session
// may live on until it expires); before, it returned nil either way.
func TestFakeCloseReportsUnconfirmedClose(t *testing.T) {
	t.Run("confirmed", func(t *testing.T) {
		s := newFakeZK(t, false)
		c, fc := connectFake(t, s, zk.WithSessionTimeout(1500*time.Millisecond))
		closed := make(chan error, 1)
		go func() { closed <- c.Close() }()
		r := fc.next(t)
		if r.op != proto.OpCloseSession {
			t.Fatalf("request %s, want closeSession", r.op)
		}
		fc.reply(t, r.xid, 1, proto.ErrOK, nil)
		if err := recv(t, closed, "Close"); err != nil {
			t.Errorf("Close after a confirmed closeSession: %v", err)
		}
	})
	t.Run("never answered", func(t *testing.T) {
		s := newFakeZK(t, false)
		c, fc := connectFake(t, s, zk.WithSessionTimeout(1500*time.Millisecond))
		closed := make(chan error, 1)
		go func() { closed <- c.Close() }()
		if r := fc.next(t); r.op != proto.OpCloseSession {
			t.Fatalf("request %s, want closeSession", r.op)
		}
		go func() {
			for {
				if _, err := fc.read(fakeWait); err != nil {
					return
				}
			}
		}()
		if err := recv(t, closed, "Close"); err == nil {
			t.Error("Close returned nil though the server never confirmed closeSession")
		}
		if err := c.Close(); err != nil {
			t.Errorf("second Close: %v, want nil", err)
		}
	})
}
