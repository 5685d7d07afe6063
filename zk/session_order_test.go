package zk_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/zk"
)

// deliveryLog records, in the order they run on the delivery goroutine,
// the default watcher's session events and the callbacks of calls.
type deliveryLog struct {
	mu  sync.Mutex
	got []string
	ch  chan struct{}
}

func newDeliveryLog() *deliveryLog { return &deliveryLog{ch: make(chan struct{}, 64)} }

func (l *deliveryLog) add(s string) {
	l.mu.Lock()
	l.got = append(l.got, s)
	l.mu.Unlock()
	l.ch <- struct{}{}
}

func (l *deliveryLog) Process(e zk.Event) {
	if e.Type == zk.EventNone {
		l.add(e.State.String())
	}
}

// waitFor waits until entry s has been recorded and returns the log.
func (l *deliveryLog) waitFor(t *testing.T, s string) []string {
	t.Helper()
	deadline := time.After(fakeWait)
	for {
		l.mu.Lock()
		got := slices.Clone(l.got)
		l.mu.Unlock()
		if slices.Contains(got, s) {
			return got
		}
		select {
		case <-l.ch:
		case <-deadline:
			t.Fatalf("no %q within %v; delivered: %v", s, fakeWait, got)
		}
	}
}

// TestFakeAuthFailedEventBeforeFailedCallbacks: when the server refuses
// credentials, the Java client queues the AuthFailed event as it reads the
// refusal (ClientCnxn.readResponse), before the calls still waiting fail
// with AUTHFAILED (cleanup after its send loop ends): the default watcher
// learns that the session is over before those callbacks run.
func TestFakeAuthFailedEventBeforeFailedCallbacks(t *testing.T) {
	s := newFakeZK(t, false)
	log := newDeliveryLog()
	c, fc := connectFake(t, s, zk.WithDefaultWatcher(log))
	log.waitFor(t, "SyncConnected")
	c.GetAsync(testCtx(t), "/a", nil, func(_ []byte, _ *zk.Stat, err error) {
		log.add(fmt.Sprintf("get: %v", errors.Is(err, zk.ErrAuthFailed)))
	})
	if r := fc.next(t); r.op != proto.OpGetData {
		t.Fatalf("request %s, want getData", r.op)
	}
	c.AddAuthAsync(testCtx(t), "bad", []byte("x"), func(err error) {})
	if r := fc.next(t); r.op != proto.OpAuth {
		t.Fatalf("request %s, want auth", r.op)
	}
	fc.reply(t, proto.XidAuth, 0, proto.ErrAuthFailed, nil)
	fc.close()
	log.waitFor(t, "get: true")
	want := []string{"SyncConnected", "AuthFailed", "get: true"}
	got := log.waitFor(t, "AuthFailed")
	if !slices.Equal(got, want) {
		t.Errorf("delivered %v, want %v", got, want)
	}
}

// TestFakeExpiredEventBeforeFailedCallbacks: when a server answers the
// reconnection with "session expired", the Java client queues the Expired
// event at once (ClientCnxn.onConnected) and fails the calls queued while
// disconnected after it, with SESSIONEXPIRED.
func TestFakeExpiredEventBeforeFailedCallbacks(t *testing.T) {
	s := newFakeZK(t, false)
	release := make(chan struct{})
	asked := make(chan struct{}, 1)
	s.handshake = func(n int, req proto.ConnectRequest) (proto.ConnectResponse, bool) {
		if n == 1 {
			return grant(req, 0xe2, false), true
		}
		asked <- struct{}{}
		select {
		case <-release:
		case <-time.After(fakeWait):
		}
		return proto.ConnectResponse{TimeOut: 0, Passwd: make([]byte, 16)}, true
	}
	log := newDeliveryLog()
	c, fc := connectFake(t, s, zk.WithDefaultWatcher(log))
	fc.close()
	log.waitFor(t, "Disconnected")
	recv(t, asked, "the reconnection")
	c.GetAsync(testCtx(t), "/q", nil, func(_ []byte, _ *zk.Stat, err error) {
		log.add(fmt.Sprintf("get: %v", errors.Is(err, zk.ErrSessionExpired)))
	})
	close(release)
	log.waitFor(t, "get: true")
	got := log.waitFor(t, "Expired")
	want := []string{"SyncConnected", "Disconnected", "Expired", "get: true"}
	if !slices.Equal(got, want) {
		t.Errorf("delivered %v, want %v", got, want)
	}
}

// TestFakeRemoveWatchesLocalWhileDisconnected: RemoveWatches with local set
// removes the watch on this side when the connection is lost, returns nil,
// and the removed watcher's event says the session is disconnected, as the
// Java client's does (ClientCnxn.queueEvent: Disconnected for
// CONNECTIONLOSS).
func TestFakeRemoveWatchesLocalWhileDisconnected(t *testing.T) {
	s := newFakeZK(t, false)
	s.handshake = func(n int, req proto.ConnectRequest) (proto.ConnectResponse, bool) {
		if n == 1 {
			return grant(req, 0xe3, false), true
		}
		return proto.ConnectResponse{}, false // every reconnection fails
	}
	log := newEventLog()
	c, fc := connectFake(t, s, zk.WithDefaultWatcher(log), zk.WithSessionTimeout(30*time.Second))
	w := newEventLog()
	errs := make(chan error, 1)
	c.GetAsync(testCtx(t), "/a", w, func(_ []byte, _ *zk.Stat, err error) { errs <- err })
	r := fc.next(t)
	fc.reply(t, r.xid, 4, proto.ErrOK, &proto.GetDataResponse{})
	if err := recv(t, errs, "getData"); err != nil {
		t.Fatal(err)
	}
	fc.close()
	log.state(t, 0, zk.StateDisconnected)
	if err := c.RemoveWatches(testCtx(t), "/a", w, zk.WatcherData, true); err != nil {
		t.Fatalf("RemoveWatches local while disconnected: %v", err)
	}
	i, _ := w.wait(t, 0, fakeWait, "DataWatchRemoved", isNode(zk.EventDataWatchRemoved, "/a"))
	if e := w.all()[i]; e.State != zk.StateDisconnected {
		t.Errorf("removed event %+v, want state Disconnected", e)
	}
}

// TestFakeCloseDuringReconnect: Close called while the client is between
// servers, with a handshake under way that then succeeds, ends the Conn
// without serving that connection: the watchers see no SyncConnected after
// Close (the session ends at once; no closeSession can be sent any more).
func TestFakeCloseDuringReconnect(t *testing.T) {
	s := newFakeZK(t, false)
	release := make(chan struct{})
	s.handshake = func(n int, req proto.ConnectRequest) (proto.ConnectResponse, bool) {
		if n == 2 {
			select { // the reconnection's answer waits for the test
			case <-release:
			case <-time.After(fakeWait):
			}
		}
		return grant(req, 0xc105e, false), true
	}
	log := newEventLog()
	c, fc := connectFake(t, s, zk.WithDefaultWatcher(log), zk.WithSessionTimeout(30*time.Second))
	fc.close()
	from := log.state(t, 0, zk.StateDisconnected)
	deadline := time.Now().Add(fakeWait)
	for s.requests.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the client did not try to reconnect")
		}
		time.Sleep(5 * time.Millisecond)
	}
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	time.Sleep(100 * time.Millisecond) // Close is waiting for the Conn to end
	close(release)
	if err := recv(t, closed, "Close"); err != nil {
		t.Fatalf("Close while disconnected = %v, want nil", err)
	}
	log.state(t, from, zk.StateClosed)
	for _, e := range log.all()[from:] {
		if e.Type == zk.EventNone && e.State == zk.StateSyncConnected {
			t.Fatalf("SyncConnected delivered after Close: %+v", log.all())
		}
	}
}
