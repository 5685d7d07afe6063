package robust_test

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// tryNewSession dials addr and opens a session, reporting failure instead
// of failing the test.
func tryNewSession(t *testing.T, addr string) (*rawConn, error) {
	c := dialRaw(t, addr)
	resp, err := c.handshake(proto.ConnectRequest{TimeOut: 10000})
	if err != nil {
		c.nc.Close()
		return nil, err
	}
	if resp.SessionID == 0 {
		c.nc.Close()
		return nil, fmt.Errorf("ConnectResponse %+v", resp)
	}
	return c, nil
}

// TestLimitMaxClientCnxns checks that with maxClientCnxns=5 a sixth
// connection from 127.0.0.1 is closed at once, with a log line, while the
// five keep working, and that a slot freed by a closed connection can be
// taken again.
func TestLimitMaxClientCnxns(t *testing.T) {
	const limit = 5
	p := startPaddock(t, 2000, "maxClientCnxns="+strconv.Itoa(limit))
	conns := make([]*rawConn, limit)
	for i := range conns {
		// The start-up probe's four-letter-word connections may still be
		// counted for a moment, so retry.
		eventually(t, 5*time.Second, fmt.Sprintf("connection %d of %d", i+1, limit), func() error {
			c, err := tryNewSession(t, p.Addr)
			conns[i] = c
			return err
		})
	}

	reject := func(what string) {
		t.Helper()
		c := dialRaw(t, p.Addr)
		c.write(proto.AppendRecordFrame(nil, &proto.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)}))
		waited, err := c.expectClosed(ioTimeout)
		if err != nil {
			t.Fatalf("%s connection with %d open: %v", what, limit, err)
		}
		if waited > 2*time.Second {
			t.Errorf("%s connection with %d open: closed only after %v", what, limit, waited)
		}
		logLineWith(t, p, c.localAddr(), "maxClientCnxns")
	}
	reject("a sixth")
	for i, c := range conns {
		if err := c.ping(); err != nil {
			t.Fatalf("connection %d after the sixth was refused: %v", i+1, err)
		}
	}

	// Free a slot: a new connection gets in, then the limit holds again.
	conns[0].nc.Close()
	eventually(t, 5*time.Second, "a connection in the freed slot", func() error {
		c, err := tryNewSession(t, p.Addr)
		conns[0] = c
		return err
	})
	reject("another sixth")
	for i, c := range conns {
		if err := c.ping(); err != nil {
			t.Fatalf("connection %d at the end: %v", i+1, err)
		}
	}
}

// TestLimitJuteMaxBuffer checks that a request frame of exactly
// jute.maxbuffer bytes is served, and that one byte more closes the
// connection without applying the request.
func TestLimitJuteMaxBuffer(t *testing.T) {
	p := startPaddock(t, 2000)
	c := newSession(t, p.Addr, 10000)
	c.create("/big", "", proto.FlagPersistent)

	// setData frame payload: header 8, path 4+4, data 4+n, version 4.
	const overhead = 8 + 4 + len("/big") + 4 + 4
	fits := proto.DefaultMaxBuffer - overhead
	frame := proto.AppendRequestFrame(nil, 100, proto.OpSetData, &proto.SetDataRequest{Path: "/big", Data: make([]byte, fits), Version: -1})
	if got := len(frame) - 4; got != proto.DefaultMaxBuffer {
		t.Fatalf("built a %d-byte frame, want %d", got, proto.DefaultMaxBuffer)
	}
	var st proto.StatResponse
	c.mustCall(proto.OpSetData, &proto.SetDataRequest{Path: "/big", Data: make([]byte, fits), Version: -1}, &st, proto.ErrOK)
	if st.Stat.DataLength != int32(fits) || st.Stat.Version != 1 {
		t.Fatalf("setData in a %d-byte frame: stat %+v, want dataLength %d version 1", proto.DefaultMaxBuffer, st.Stat, fits)
	}
	if err := c.ping(); err != nil {
		t.Fatalf("connection after a %d-byte frame: %v", proto.DefaultMaxBuffer, err)
	}

	c.mustCall(proto.OpSetData, &proto.SetDataRequest{Path: "/big", Data: []byte("small"), Version: -1}, nil, proto.ErrOK)
	if _, err := c.send(proto.OpSetData, &proto.SetDataRequest{Path: "/big", Data: make([]byte, fits+1), Version: -1}); err != nil {
		t.Logf("sending the oversized frame: %v (the server may close before reading it all)", err)
	}
	if _, err := c.expectClosed(ioTimeout); err != nil {
		t.Fatalf("frame of %d bytes: %v", proto.DefaultMaxBuffer+1, err)
	}
	logLineWith(t, p, c.localAddr(), strconv.Itoa(proto.DefaultMaxBuffer+1))

	other := newSession(t, p.Addr, 10000)
	var got proto.GetDataResponse
	other.mustCall(proto.OpGetData, &proto.GetDataRequest{Path: "/big"}, &got, proto.ErrOK)
	if string(got.Data) != "small" || got.Stat.Version != 2 {
		t.Fatalf("/big after the oversized frame: %d bytes, version %d; want \"small\", version 2", len(got.Data), got.Stat.Version)
	}
}

// TestLimitGlobalOutstanding pipelines 1000 requests on each of three
// connections with globalOutstandingLimit=10: every request is answered,
// in order, and each getData sees the setData its session sent just before
// it (back-pressure, not loss or reordering).
func TestLimitGlobalOutstanding(t *testing.T) {
	const (
		sessions = 3
		requests = 1000
	)
	p := startPaddock(t, 2000, "globalOutstandingLimit=10")
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	conns := make([]*rawConn, sessions)
	for i := range conns {
		conns[i] = newSession(t, p.Addr, 10000)
		conns[i].create(fmt.Sprintf("/bp%d", i), "", proto.FlagPersistent)
	}
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- pipeline(c, fmt.Sprintf("/bp%d", i), requests)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	checkAlive(t, p)
}

// pipeline writes n requests on c without waiting, alternating setData and
// getData of path, while reading the replies, and checks them. It runs on
// its own goroutine and reports instead of failing the test.
func pipeline(c *rawConn, path string, n int) error {
	first := c.xid + 1
	var batch []byte
	for k := range n {
		xid := first + int32(k)
		if k%2 == 0 {
			batch = proto.AppendRequestFrame(batch, xid, proto.OpSetData, &proto.SetDataRequest{Path: path, Data: []byte("v" + strconv.Itoa(k)), Version: -1})
		} else {
			batch = proto.AppendRequestFrame(batch, xid, proto.OpGetData, &proto.GetDataRequest{Path: path})
		}
	}
	c.xid += int32(n)
	werr := make(chan error, 1)
	go func() {
		c.nc.SetWriteDeadline(time.Now().Add(60 * time.Second))
		_, err := c.nc.Write(batch)
		werr <- err
	}()
	deadline := time.Now().Add(60 * time.Second)
	for k := range n {
		r, err := c.recv(time.Until(deadline), false)
		if err != nil {
			return fmt.Errorf("%s: reply %d of %d: %w", path, k+1, n, err)
		}
		if want := first + int32(k); r.hdr.Xid != want || r.hdr.Err != proto.ErrOK {
			return fmt.Errorf("%s: reply %d has xid %d err %v, want xid %d err 0", path, k+1, r.hdr.Xid, r.hdr.Err, want)
		}
		if k%2 == 1 {
			var got proto.GetDataResponse
			if err := proto.Unmarshal(r.body, &got); err != nil {
				return fmt.Errorf("%s: reply %d: %w", path, k+1, err)
			}
			if want := "v" + strconv.Itoa(k-1); string(got.Data) != want || got.Stat.Version != int32(k/2+1) {
				return fmt.Errorf("%s: getData #%d = %q version %d, want %q version %d (the setData just before it)",
					path, k, got.Data, got.Stat.Version, want, k/2+1)
			}
		}
	}
	if err := <-werr; err != nil {
		return fmt.Errorf("%s: writing %d requests: %w", path, n, err)
	}
	return nil
}
