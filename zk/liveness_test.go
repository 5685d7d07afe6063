package zk_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/zk"
)

// Tests of how the client judges a connection alive, against the scripted
// server: a server that stops reading, and one that is slow to send a
// large reply.

// TestFakeServerStopsReading: a server that completes the handshake and then
// never reads again (a frozen process: the socket stays open) lets the
// client's writes fill the socket buffers, and the writer blocks. When the
// reader gives up on the silent server, the blocked write must be
// interrupted: the client reports Disconnected about the read timeout
// later, and every call in flight fails with ErrConnectionLoss.
func TestFakeServerStopsReading(t *testing.T) {
	const (
		granted = 900 * time.Millisecond // read timeout 600 ms
		calls   = 24
		size    = 1000 << 10 // below the server's 1 MiB jute.maxbuffer
	)
	s := newFakeZK(t, false)
	s.handshake = func(n int, req proto.ConnectRequest) (proto.ConnectResponse, bool) {
		resp := grant(req, 0x5709, false)
		resp.TimeOut = int32(granted / time.Millisecond)
		return resp, true
	}
	log := newEventLog()
	// The client asks for more than granted, so that the session does not
	// expire locally before the checks.
	c, _ := connectFake(t, s, zk.WithDefaultWatcher(log), zk.WithSessionTimeout(10*time.Second))
	start := time.Now()
	value := make([]byte, size)
	var wg sync.WaitGroup
	wg.Add(calls)
	var mu sync.Mutex
	var errs []error
	for range calls {
		c.SetAsync(testCtx(t), "/big", value, -1, func(_ *zk.Stat, err error) {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			wg.Done()
		})
	}
	_, at := log.wait(t, 0, fakeWait, "Disconnected", isState(zk.StateDisconnected))
	if d := at.Sub(start); d > granted*2/3+2*time.Second {
		t.Errorf("Disconnected %v after the server stopped reading, want about the read timeout %v", d, granted*2/3)
	}
	waitGroup(t, &wg, "callbacks of the writes in flight")
	mu.Lock()
	defer mu.Unlock()
	for i, err := range errs {
		if !errors.Is(err, zk.ErrConnectionLoss) {
			t.Errorf("callback %d: %v, want ErrConnectionLoss", i, err)
		}
	}
}

// TestFakeSlowLargeReply: a server sends a reply of a few MiB in pieces,
// with pauses shorter than a third of the read timeout, so that the whole
// transfer takes about twice the read timeout. As in ZooKeeper's client,
// any bytes received show the server alive: the call succeeds.
func TestFakeSlowLargeReply(t *testing.T) {
	const (
		granted = 900 * time.Millisecond // read timeout 600 ms
		size    = 3 << 20
		pieces  = 12
		gap     = 100 * time.Millisecond // pieces*gap = 2 read timeouts
	)
	s := newFakeZK(t, false)
	s.handshake = func(n int, req proto.ConnectRequest) (proto.ConnectResponse, bool) {
		resp := grant(req, 0x510e, false)
		resp.TimeOut = int32(granted / time.Millisecond)
		return resp, true
	}
	c, fc := connectFake(t, s, zk.WithSessionTimeout(10*time.Second))
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i)
	}
	type result struct {
		data []byte
		err  error
	}
	got := make(chan result, 1)
	go func() {
		d, _, err := c.Get(testCtx(t), "/large")
		got <- result{d, err}
	}()
	r := fc.next(t)
	if r.op != proto.OpGetData {
		t.Fatalf("request %s, want getData", r.op)
	}
	frame := replyFrame(nil, r.xid, 7, proto.ErrOK, &proto.GetDataResponse{Data: data})
	start := time.Now()
	step := (len(frame) + pieces - 1) / pieces
	for off := 0; off < len(frame); off += step {
		if off > 0 {
			time.Sleep(gap) // pacing the server's sends is the point here
		}
		if _, err := fc.nc.Write(frame[off:min(off+step, len(frame))]); err != nil {
			t.Logf("fake server: write after %v: %v", time.Since(start), err)
			break
		}
	}
	res := recv(t, got, "the getData call")
	if res.err != nil {
		t.Fatalf("Get of a reply that arrived steadily over %v (read timeout %v): %v", time.Since(start), granted*2/3, res.err)
	}
	if len(res.data) != size || res.data[size-1] != data[size-1] {
		t.Fatalf("Get returned %d bytes, want %d", len(res.data), size)
	}
}
