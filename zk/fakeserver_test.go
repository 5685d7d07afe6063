package zk_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/zk"
)

// This file holds fakeZK, a scripted ZooKeeper server, the helpers the
// session tests share (eventLog, orderedHosts), and the client tests that
// need to control exactly what a server says and when: ordering of replies
// and notifications, read-only servers, broken frames and watch
// re-registration. reconnect_test.go has the session lifecycle tests.

// fakeWait bounds every wait of the fake server and of the tests using it.
const fakeWait = 10 * time.Second

// fakeZK is a ZooKeeper server whose answers the test writes. It accepts
// connections on 127.0.0.1, answers the "isro" four-letter word, reads each
// ConnectRequest, answers it with what handshake returns, and hands the
// connection to the test through accept. Everything it opened is closed when
// the test ends.
type fakeZK struct {
	t    testing.TB
	ln   net.Listener
	addr string

	// handshake decides the answer to the n-th ConnectRequest (n from 1);
	// ok false closes the connection without an answer. It runs on the
	// connection's own goroutine and may block until the test ends.
	handshake func(n int, req proto.ConnectRequest) (resp proto.ConnectResponse, ok bool)
	isro      atomic.Value // string: the answer to "isro"

	conns    chan *fakeConn
	requests atomic.Int32 // ConnectRequests read
	probes   atomic.Int32 // "isro" probes answered

	mu     sync.Mutex
	open   []net.Conn
	closed bool
	wg     sync.WaitGroup
	once   sync.Once     // shutdown
	quit   chan struct{} // closed by shutdown
}

// fakeConn is one established connection of a fakeZK.
type fakeConn struct {
	nc   net.Conn
	br   *bufio.Reader
	req  proto.ConnectRequest  // what the client sent
	resp proto.ConnectResponse // what the server answered
}

// fakeRequest is one request frame read from the client.
type fakeRequest struct {
	xid int32
	op  proto.OpCode
	req proto.Request
	at  time.Time
}

// newFakeZK starts a fake server whose handshake grants what the client
// asks: a new session (id 0x5e55000+n, a password derived from it) when the
// client sends session id 0, the same session and password otherwise, with
// the requested timeout, and ReadOnly as given.
func newFakeZK(t testing.TB, readOnly bool) *fakeZK {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeZK{t: t, ln: ln, addr: ln.Addr().String(), conns: make(chan *fakeConn, 16), quit: make(chan struct{})}
	s.isro.Store(map[bool]string{false: "rw", true: "ro"}[readOnly])
	s.handshake = func(n int, req proto.ConnectRequest) (proto.ConnectResponse, bool) {
		return grant(req, 0x5e55000+int64(n), readOnly), true
	}
	s.wg.Add(1)
	go s.acceptLoop()
	t.Cleanup(s.shutdown)
	return s
}

// grant answers req: its session if it names one, else session id, with
// the requested timeout.
func grant(req proto.ConnectRequest, id int64, readOnly bool) proto.ConnectResponse {
	resp := proto.ConnectResponse{TimeOut: req.TimeOut, SessionID: req.SessionID, Passwd: req.Passwd, ReadOnly: readOnly}
	if req.SessionID == 0 {
		resp.SessionID = id
		resp.Passwd = bytes.Repeat([]byte{byte(id)}, 16)
	}
	return resp
}

func (s *fakeZK) acceptLoop() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return
		}
		s.open = append(s.open, nc)
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.greet(nc)
		}()
	}
}

// greet answers a four-letter word or a ConnectRequest on a new connection.
func (s *fakeZK) greet(nc net.Conn) {
	nc.SetReadDeadline(time.Now().Add(fakeWait))
	br := bufio.NewReader(nc)
	var first [4]byte
	if _, err := io.ReadFull(br, first[:]); err != nil {
		nc.Close()
		return
	}
	if cmd, ok := proto.IsFourLetterWord(first); ok {
		if cmd == "isro" {
			nc.Write([]byte(s.isro.Load().(string)))
			s.probes.Add(1)
		}
		nc.Close()
		return
	}
	payload, err := proto.ReadFramePayload(br, first, nil, proto.DefaultMaxBuffer)
	if err != nil {
		nc.Close()
		return
	}
	var req proto.ConnectRequest
	if err := proto.Unmarshal(payload, &req); err != nil {
		nc.Close()
		return
	}
	n := int(s.requests.Add(1))
	resp, ok := s.handshake(n, req)
	if !ok {
		nc.Close()
		return
	}
	if _, err := nc.Write(proto.AppendRecordFrame(nil, &resp)); err != nil {
		nc.Close()
		return
	}
	nc.SetReadDeadline(time.Time{})
	select {
	case s.conns <- &fakeConn{nc: nc, br: br, req: req, resp: resp}:
	case <-s.quit:
		nc.Close()
	}
}

// accept returns the next connection whose handshake was answered.
func (s *fakeZK) accept(t testing.TB) *fakeConn {
	t.Helper()
	select {
	case fc := <-s.conns:
		return fc
	case <-time.After(fakeWait):
		t.Fatalf("fake server %s: no connection within %v", s.addr, fakeWait)
		return nil
	}
}

// closeListener stops accepting: from then on nobody listens on addr.
func (s *fakeZK) closeListener() { s.ln.Close() }

// shutdown closes the listener and every connection, and waits for the
// server's goroutines. It may be called more than once.
func (s *fakeZK) shutdown() {
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		open := s.open
		s.mu.Unlock()
		close(s.quit)
		s.ln.Close()
		for _, nc := range open {
			nc.Close()
		}
		s.wg.Wait()
	})
}

// next reads the next request frame, failing the test if none comes within
// fakeWait or it does not decode.
func (fc *fakeConn) next(t testing.TB) fakeRequest {
	t.Helper()
	r, err := fc.read(fakeWait)
	if err != nil {
		t.Fatalf("fake server: reading a request: %v", err)
	}
	return r
}

func (fc *fakeConn) read(wait time.Duration) (fakeRequest, error) {
	fc.nc.SetReadDeadline(time.Now().Add(wait))
	frame, err := proto.ReadFrame(fc.br, nil, proto.DefaultMaxBuffer)
	if err != nil {
		return fakeRequest{}, err
	}
	var hdr proto.RequestHeader
	d := proto.NewDecoder(frame)
	hdr.Decode(d)
	if err := d.Err(); err != nil {
		return fakeRequest{}, err
	}
	req, err := proto.DecodeRequest(hdr.Op, frame[proto.RequestHeaderSize:])
	if err != nil {
		return fakeRequest{}, err
	}
	return fakeRequest{xid: hdr.Xid, op: hdr.Op, req: req, at: time.Now()}, nil
}

// write sends raw bytes, failing the test on error.
func (fc *fakeConn) write(t testing.TB, b []byte) {
	t.Helper()
	if _, err := fc.nc.Write(b); err != nil {
		t.Fatalf("fake server: write: %v", err)
	}
}

// reply answers the request with xid.
func (fc *fakeConn) reply(t testing.TB, xid int32, zxid int64, code proto.ErrCode, resp proto.Response) {
	t.Helper()
	fc.write(t, replyFrame(nil, xid, zxid, code, resp))
}

func replyFrame(b []byte, xid int32, zxid int64, code proto.ErrCode, resp proto.Response) []byte {
	return proto.AppendReplyFrame(b, proto.ReplyHeader{Xid: xid, Zxid: zxid, Err: code}, resp)
}

func notifyFrame(b []byte, zxid int64, typ proto.EventType, path string) []byte {
	return proto.AppendReplyFrame(b, proto.ReplyHeader{Xid: proto.XidNotification, Zxid: zxid},
		&proto.WatcherEvent{Type: typ, State: proto.StateSyncConnected, Path: path})
}

// okResponse is an empty successful response for op.
func okResponse(t testing.TB, op proto.OpCode) proto.Response {
	t.Helper()
	resp, err := proto.NewResponse(op)
	if err != nil {
		t.Fatalf("no response record for %s: %v", op, err)
	}
	return resp
}

func (fc *fakeConn) close() { fc.nc.Close() }

// requestPath returns the path a request carries ("" if none).
func requestPath(r proto.Request) string {
	switch r := r.(type) {
	case *proto.GetDataRequest:
		return r.Path
	case *proto.ExistsRequest:
		return r.Path
	case *proto.GetChildren2Request:
		return r.Path
	case *proto.SetDataRequest:
		return r.Path
	case *proto.AddWatchRequest:
		return r.Path
	case *proto.DeleteRequest:
		return r.Path
	case *proto.SyncRequest:
		return r.Path
	}
	return ""
}

// ---- helpers shared with the real-server tests ----

// eventLog is a Watcher that records every event; tests wait on it for
// an event matching a condition. A *eventLog is comparable, so registering
// it on several paths invokes it once per event.
type eventLog struct {
	mu     sync.Mutex
	events []zk.Event
	at     []time.Time
	signal chan struct{} // closed and replaced at each event
}

func newEventLog() *eventLog { return &eventLog{signal: make(chan struct{})} }

func (l *eventLog) Process(e zk.Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.at = append(l.at, time.Now())
	close(l.signal)
	l.signal = make(chan struct{})
	l.mu.Unlock()
}

// wait returns the index and time of the first event at index from or
// later that matches, failing the test if none comes within d.
func (l *eventLog) wait(t testing.TB, from int, d time.Duration, what string, match func(zk.Event) bool) (int, time.Time) {
	t.Helper()
	deadline := time.After(d)
	for {
		l.mu.Lock()
		for i := from; i < len(l.events); i++ {
			if match(l.events[i]) {
				at := l.at[i]
				l.mu.Unlock()
				return i, at
			}
		}
		from = max(from, len(l.events))
		sig := l.signal
		l.mu.Unlock()
		select {
		case <-sig:
		case <-deadline:
			t.Fatalf("no %s event within %v; events: %v", what, d, l.all())
			return 0, time.Time{}
		}
	}
}

// state waits for the session event st at index from or later.
func (l *eventLog) state(t testing.TB, from int, st zk.State) int {
	t.Helper()
	i, _ := l.wait(t, from, fakeWait, st.String(), isState(st))
	return i
}

func (l *eventLog) all() []zk.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

// nodeEvents returns the recorded events that are not session events.
func (l *eventLog) nodeEvents() []zk.Event {
	var out []zk.Event
	for _, e := range l.all() {
		if e.Type != zk.EventNone {
			out = append(out, e)
		}
	}
	return out
}

func isState(st zk.State) func(zk.Event) bool {
	return func(e zk.Event) bool { return e.Type == zk.EventNone && e.State == st }
}

func isNode(typ zk.EventType, path string) func(zk.Event) bool {
	return func(e zk.Event) bool { return e.Type == typ && e.Path == path }
}

// orderedHosts is a HostProvider that goes round the hosts in the order
// given, without shuffling, so a test can choose which server comes first.
type orderedHosts struct {
	mu    sync.Mutex
	addrs []string
	next  int
	tried int
}

func newOrderedHosts(addrs []string) zk.HostProvider { return &orderedHosts{addrs: addrs} }

func (p *orderedHosts) Next(context.Context) (string, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	addr := p.addrs[p.next]
	p.next = (p.next + 1) % len(p.addrs)
	p.tried++
	round := p.tried > len(p.addrs)
	if round {
		p.tried = 1
	}
	return addr, round, nil
}

func (p *orderedHosts) Connected() {
	p.mu.Lock()
	p.tried = 0
	p.mu.Unlock()
}

func (p *orderedHosts) Len() int { return len(p.addrs) }

// connectFake connects to the fake server, which must answer one handshake.
func connectFake(t *testing.T, s *fakeZK, opts ...zk.Option) (*zk.Conn, *fakeConn) {
	t.Helper()
	return connectFakeString(t, s, s.addr, opts...)
}

// connectFakeString is connectFake with a connect string naming s.
func connectFakeString(t *testing.T, s *fakeZK, connectString string, opts ...zk.Option) (*zk.Conn, *fakeConn) {
	t.Helper()
	type result struct {
		c   *zk.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), fakeWait)
		defer cancel()
		c, err := zk.Connect(ctx, connectString, opts...)
		done <- result{c, err}
	}()
	fc := s.accept(t)
	r := <-done
	if r.err != nil {
		t.Fatalf("connect %s: %v", s.addr, r.err)
	}
	// The server goes first: a Conn still connected would wait for the
	// answer to closeSession, which the scripted server never sends.
	t.Cleanup(func() {
		s.shutdown()
		r.c.Close()
	})
	return r.c, fc
}

// ---- tests ----

// TestFakeOrdering pipelines many asynchronous calls that leave watches, and
// has the server answer them in order with notifications for those watches
// interleaved: callbacks and watcher invocations must run in exactly the
// order the server sent replies and notifications.
func TestFakeOrdering(t *testing.T) {
	const n = 200
	s := newFakeZK(t, false)
	c, fc := connectFake(t, s)

	var mu sync.Mutex
	var got []string
	record := func(s string) {
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
	}
	seen := make(chan struct{}, 2*n)
	w := zk.WatcherFunc(func(e zk.Event) {
		if e.Type == zk.EventNone {
			return
		}
		record(fmt.Sprintf("event %s %s", e.Type, e.Path))
		seen <- struct{}{}
	})
	ctx := testCtx(t)
	expectedOps := make([]proto.OpCode, n)
	for i := range n {
		p := fmt.Sprintf("/n%d", i)
		done := func(err error) {
			record(fmt.Sprintf("reply %d %d", i, zk.ErrorCode(err)))
			seen <- struct{}{}
		}
		switch i % 4 {
		case 0:
			expectedOps[i] = proto.OpGetData
			c.GetAsync(ctx, p, w, func(_ []byte, _ *zk.Stat, err error) { done(err) })
		case 1:
			expectedOps[i] = proto.OpExists
			c.ExistsAsync(ctx, p, w, func(_ bool, _ *zk.Stat, err error) { done(err) })
		case 2:
			expectedOps[i] = proto.OpGetChildren2
			c.ChildrenAsync(ctx, p, w, func(_ []string, _ *zk.Stat, err error) { done(err) })
		case 3:
			expectedOps[i] = proto.OpDelete
			c.DeleteAsync(ctx, p, -1, done)
		}
	}

	// The server reads every request, checks they come in call order,
	// then answers with notifications mixed in at random points after the
	// reply that set each watch.
	reqs := make([]fakeRequest, n)
	for i := range n {
		reqs[i] = fc.next(t)
		if reqs[i].op != expectedOps[i] || requestPath(reqs[i].req) != fmt.Sprintf("/n%d", i) {
			t.Fatalf("request %d: %s %q, want %s /n%d", i, reqs[i].op, requestPath(reqs[i].req), expectedOps[i], i)
		}
		if i > 0 && reqs[i].xid <= reqs[i-1].xid {
			t.Fatalf("request %d: xid %d after %d", i, reqs[i].xid, reqs[i-1].xid)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var want []string
	var armed []int // requests whose watch is set and has not fired
	var buf []byte
	zxid := int64(100)
	fire := func() {
		k := rng.IntN(len(armed))
		i := armed[k]
		armed = slices.Delete(armed, k, k+1)
		typ := []proto.EventType{proto.EventNodeDataChanged, proto.EventNodeCreated, proto.EventNodeChildrenChanged}[i%4]
		zxid++
		buf = notifyFrame(buf, zxid, typ, fmt.Sprintf("/n%d", i))
		want = append(want, fmt.Sprintf("event %s /n%d", zk.EventType(typ), i))
	}
	for i, r := range reqs {
		zxid++
		switch i % 4 {
		case 0:
			buf = replyFrame(buf, r.xid, zxid, proto.ErrOK, &proto.GetDataResponse{Data: []byte("d")})
			want = append(want, fmt.Sprintf("reply %d 0", i))
			armed = append(armed, i)
		case 1: // exists reports NoNode as "does not exist", no error
			buf = replyFrame(buf, r.xid, zxid, proto.ErrNoNode, nil)
			want = append(want, fmt.Sprintf("reply %d 0", i))
			armed = append(armed, i)
		case 2:
			buf = replyFrame(buf, r.xid, zxid, proto.ErrOK, &proto.GetChildren2Response{Children: []string{}})
			want = append(want, fmt.Sprintf("reply %d 0", i))
			armed = append(armed, i)
		case 3:
			code := []proto.ErrCode{proto.ErrOK, proto.ErrNoNode, proto.ErrNotEmpty}[rng.IntN(3)]
			buf = replyFrame(buf, r.xid, zxid, code, nil)
			want = append(want, fmt.Sprintf("reply %d %d", i, code))
		}
		for len(armed) > 0 && rng.IntN(3) == 0 {
			fire()
		}
		if rng.IntN(8) == 0 { // write in pieces of varying size
			fc.write(t, buf)
			buf = buf[:0]
		}
	}
	for len(armed) > 0 {
		fire()
	}
	fc.write(t, buf)

	for range want {
		select {
		case <-seen:
		case <-time.After(fakeWait):
			mu.Lock()
			t.Fatalf("only %d of %d callbacks and events ran", len(got), len(want))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("delivery differs from the server's order at %d: got %q, want %q (%d vs %d entries)", i, got[i], want[i], len(got), len(want))
			}
		}
		t.Fatalf("got %d deliveries, want %d", len(got), len(want))
	}
}

// TestFakeReadOnly connects through a read-only server first; the client must
// ask for read-only, report StateConnectedReadOnly, keep probing the other
// server with "isro", and move to it with a new session once it answers "rw".
func TestFakeReadOnly(t *testing.T) {
	ro := newFakeZK(t, true)
	rw := newFakeZK(t, false)
	rw.isro.Store("ro") // not serving writes yet
	rw.handshake = func(n int, req proto.ConnectRequest) (proto.ConnectResponse, bool) {
		return grant(req, 0x77000+int64(n), false), true
	}
	log := newEventLog()
	c, err := zk.Connect(testCtx(t), ro.addr+","+rw.addr, zk.WithReadOnly(true),
		zk.WithHostProvider(newOrderedHosts), zk.WithDefaultWatcher(log), zk.WithSessionTimeout(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ro.shutdown()
		rw.shutdown()
		c.Close()
	})

	first := ro.accept(t)
	if !first.req.ReadOnly || first.req.SessionID != 0 {
		t.Errorf("ConnectRequest to the read-only server: ReadOnly %v, SessionID %#x; want true, 0", first.req.ReadOnly, first.req.SessionID)
	}
	i := log.state(t, 0, zk.StateConnectedReadOnly)
	// Calls go to the read-only server meanwhile.
	got := make(chan error, 1)
	c.GetAsync(testCtx(t), "/r", nil, func(_ []byte, _ *zk.Stat, err error) { got <- err })
	r := first.next(t)
	first.reply(t, r.xid, 3, proto.ErrOK, &proto.GetDataResponse{})
	if err := recv(t, got, "the read's callback"); err != nil {
		t.Fatalf("read on the read-only server: %v", err)
	}
	// A probe answered "ro" leaves the client where it is.
	deadline := time.Now().Add(fakeWait)
	for rw.probes.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // nothing to wait on but the counter; bounded
	}
	if rw.probes.Load() == 0 {
		t.Fatal("the other server was never probed with isro")
	}
	if st := c.State(); st != zk.StateConnectedReadOnly {
		t.Errorf("State() = %s after a probe answered ro, want ConnectedReadOnly", st)
	}
	if rw.requests.Load() != 0 {
		t.Errorf("the client connected to a server that answered isro with ro")
	}

	rw.isro.Store("rw")
	log.state(t, i+1, zk.StateSyncConnected)
	moved := rw.accept(t)
	if moved.req.SessionID != 0 {
		t.Errorf("session made on a read-only server resumed on the read-write one: SessionID %#x, want 0", moved.req.SessionID)
	}
	if !moved.req.ReadOnly {
		t.Errorf("ConnectRequest to the read-write server: ReadOnly false, want true (WithReadOnly)")
	}
	if got := c.State(); got != zk.StateSyncConnected {
		t.Errorf("State() = %s, want SyncConnected", got)
	}
	if got, want := c.SessionID(), moved.resp.SessionID; got != want {
		t.Errorf("SessionID() = %#x, want the read-write server's %#x", got, want)
	}
	if got := c.Server(); got != rw.addr {
		t.Errorf("Server() = %q, want %q", got, rw.addr)
	}
}

// TestFakeBrokenFrames: a reply that does not match the oldest request, or a
// frame that is not a reply, drops the connection; every call in flight
// completes once with ErrConnectionLoss, and the client reconnects.
func TestFakeBrokenFrames(t *testing.T) {
	header := func(xid int32) []byte { // a reply header with no body, unframed
		h := proto.ReplyHeader{Xid: xid, Zxid: 1}
		return h.Append(nil)
	}
	frame := func(payload []byte) []byte { return append(proto.AppendInt32(nil, int32(len(payload))), payload...) }
	tests := []struct {
		name  string
		frame func(firstXid int32) []byte
		first error // what the first call gets; the others get ErrConnectionLoss
	}{
		{"xid mismatch", func(x int32) []byte { return replyFrame(nil, x+7, 1, proto.ErrOK, &proto.GetDataResponse{}) }, zk.ErrConnectionLoss},
		{"xid of a later call", func(x int32) []byte { return replyFrame(nil, x+1, 1, proto.ErrOK, &proto.GetDataResponse{}) }, zk.ErrConnectionLoss},
		{"frame shorter than a reply header", func(int32) []byte { return frame([]byte{1, 2, 3}) }, zk.ErrConnectionLoss},
		{"negative length", func(int32) []byte { return proto.AppendInt32(nil, -16) }, zk.ErrConnectionLoss},
		{"length above the maximum", func(int32) []byte { return proto.AppendInt32(nil, 1<<30) }, zk.ErrConnectionLoss},
		{"undecodable notification", func(int32) []byte {
			return frame(append(header(proto.XidNotification), 0, 0, 0)) // 3 bytes where an int32 starts
		}, zk.ErrConnectionLoss},
		{"undecodable reply body", func(x int32) []byte {
			return frame(append(header(x), 0x7f, 0, 0, 0)) // a data length far beyond the frame
		}, zk.ErrMarshallingError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFakeZK(t, false)
			log := newEventLog()
			c, fc := connectFake(t, s, zk.WithDefaultWatcher(log))
			const n = 5
			var runs [n]atomic.Int32
			var errs [n]error
			var wg sync.WaitGroup
			wg.Add(n)
			for i := range n {
				c.GetAsync(testCtx(t), fmt.Sprintf("/b%d", i), nil, func(_ []byte, _ *zk.Stat, err error) {
					if runs[i].Add(1) == 1 {
						errs[i] = err
						wg.Done()
					}
				})
			}
			var first int32
			for i := range n {
				if r := fc.next(t); i == 0 {
					first = r.xid
				}
			}
			fc.write(t, tt.frame(first))
			waitGroup(t, &wg, "callbacks")
			for i, err := range errs {
				var want error = zk.ErrConnectionLoss
				if i == 0 {
					want = tt.first
				}
				if !errors.Is(err, want) {
					t.Errorf("call %d: %v, want %v", i, err, want)
				}
			}
			log.state(t, 0, zk.StateDisconnected)
			again := s.accept(t)
			if again.req.SessionID != fc.resp.SessionID {
				t.Errorf("reconnect with session %#x, want %#x", again.req.SessionID, fc.resp.SessionID)
			}
			log.state(t, 0, zk.StateSyncConnected)
			for i := range runs {
				if got := runs[i].Load(); got != 1 {
					t.Errorf("callback of call %d ran %d times", i, got)
				}
			}
		})
	}
}

// recv receives from ch, failing the test after fakeWait.
func recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(fakeWait):
		t.Fatalf("%s: nothing within %v", what, fakeWait)
		var zero T
		return zero
	}
}

// waitGroup waits for wg, failing the test after fakeWait.
func waitGroup(t testing.TB, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(fakeWait):
		t.Fatalf("%s did not all complete within %v", what, fakeWait)
	}
}

// TestFakeSetWatchesBatches registers watches on more than 128 KiB of paths
// under a chroot and drops the connection: the reconnect re-registers them in
// several setWatches frames, ahead of any other request, relative to the last
// zxid, chroot included. As in ZooKeeper's client, a frame that holds
// persistent watches is a setWatches2, the others setWatches.
func TestFakeSetWatchesBatches(t *testing.T) {
	const (
		maxBatch = 128 << 10
		n        = 1500
		zxid     = 0x4242
	)
	long := strings.Repeat("p", 90)
	for _, persistent := range []bool{false, true} {
		name := "one-time"
		if persistent {
			name = "with persistent"
		}
		t.Run(name, func(t *testing.T) {
			s := newFakeZK(t, false)
			log := newEventLog()
			c, fc := connectFakeString(t, s, s.addr+"/chroot", zk.WithSessionTimeout(20*time.Second), zk.WithDefaultWatcher(log))
			ctx := testCtx(t)
			w := newEventLog()
			want := map[string]string{} // server path -> kind of watch
			var wg sync.WaitGroup
			var failed atomic.Int32
			done := func(err error) {
				if err != nil {
					failed.Add(1)
				}
				wg.Done()
			}
			if persistent {
				wg.Add(2)
				want["/chroot/pp"] = "persistent"
				want["/chroot/pr"] = "recursive"
				c.AddWatchAsync(ctx, "/pp", w, zk.AddWatchPersistent, done)
				c.AddWatchAsync(ctx, "/pr", w, zk.AddWatchPersistentRecursive, done)
			}
			for i := range n {
				p := fmt.Sprintf("/w/%s%d", long, i)
				wg.Add(1)
				switch i % 3 {
				case 0:
					want["/chroot"+p] = "data"
					c.GetAsync(ctx, p, w, func(_ []byte, _ *zk.Stat, err error) { done(err) })
				case 1:
					want["/chroot"+p] = "exist"
					c.ExistsAsync(ctx, p, w, func(_ bool, _ *zk.Stat, err error) { done(err) })
				case 2:
					want["/chroot"+p] = "child"
					c.ChildrenAsync(ctx, p, w, func(_ []string, _ *zk.Stat, err error) { done(err) })
				}
			}
			var buf []byte
			for range len(want) {
				r := fc.next(t)
				if r.op == proto.OpExists {
					buf = replyFrame(buf, r.xid, zxid, proto.ErrNoNode, nil)
				} else {
					buf = replyFrame(buf, r.xid, zxid, proto.ErrOK, okResponse(t, r.op))
				}
			}
			fc.write(t, buf)
			waitGroup(t, &wg, "watching calls")
			if f := failed.Load(); f > 0 {
				t.Fatalf("%d watching calls failed", f)
			}

			fc.close()
			log.state(t, 0, zk.StateDisconnected)
			// A call made while disconnected goes after the watches.
			synced := make(chan error, 1)
			c.SyncAsync(ctx, "/s", func(_ string, err error) { synced <- err })

			fc2 := s.accept(t)
			got := map[string]string{}
			frames, frames2 := 0, 0
			for len(got) < len(want) {
				r := fc2.next(t)
				if r.xid != proto.XidSetWatches || (r.op != proto.OpSetWatches && r.op != proto.OpSetWatches2) {
					t.Fatalf("after %d of %d watches: request %s xid %d, want setWatches xid %d", len(got), len(want), r.op, r.xid, proto.XidSetWatches)
				}
				frames++
				var rel int64
				lists := map[string][]string{}
				switch req := r.req.(type) {
				case *proto.SetWatches:
					rel = req.RelativeZxid
					lists["data"], lists["exist"], lists["child"] = req.DataWatches, req.ExistWatches, req.ChildWatches
				case *proto.SetWatches2:
					frames2++
					rel = req.RelativeZxid
					lists["data"], lists["exist"], lists["child"] = req.DataWatches, req.ExistWatches, req.ChildWatches
					lists["persistent"], lists["recursive"] = req.PersistentWatches, req.PersistentRecursiveWatches
					if len(req.PersistentWatches)+len(req.PersistentRecursiveWatches) == 0 {
						t.Errorf("frame %d: setWatches2 without persistent watches, want setWatches", frames)
					}
				}
				if rel != zxid {
					t.Errorf("frame %d: relativeZxid %#x, want the last zxid %#x", frames, rel, zxid)
				}
				size := 0
				for kind, ps := range lists {
					if ps == nil {
						t.Errorf("frame %d: %s list is null, want an empty list", frames, kind)
					}
					for _, p := range ps {
						size += len(p)
						if _, dup := got[p]; dup {
							t.Errorf("path %s re-registered twice", p)
						}
						got[p] = kind
					}
				}
				if size > maxBatch {
					t.Errorf("frame %d holds %d bytes of paths, more than %d", frames, size, maxBatch)
				}
				fc2.reply(t, proto.XidSetWatches, zxid, proto.ErrOK, nil)
			}
			if frames < 2 {
				t.Errorf("%d setWatches frames for %d watches, want several", frames, len(want))
			}
			if wantFrames2 := map[bool]int{false: 0, true: 1}[persistent]; frames2 != wantFrames2 {
				t.Errorf("%d setWatches2 frames, want %d", frames2, wantFrames2)
			}
			if !maps.Equal(got, want) {
				t.Errorf("re-registered watches differ: got %d, want %d", len(got), len(want))
			}
			r := fc2.next(t)
			if r.op != proto.OpSync {
				t.Fatalf("after the watches: %s, want the sync queued while disconnected", r.op)
			}
			fc2.reply(t, r.xid, zxid, proto.ErrOK, &proto.SyncResponse{Path: "/chroot/s"})
			if err := recv(t, synced, "the sync's callback"); err != nil {
				t.Errorf("sync: %v", err)
			}
		})
	}
}
