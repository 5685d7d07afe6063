package robust_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/zktest"
)

const (
	// ioTimeout bounds one read or write on a raw connection.
	ioTimeout = 5 * time.Second
	// pollEvery is the interval between checks of a polled condition.
	pollEvery = 20 * time.Millisecond
	// rawReadMax is the largest frame a raw connection accepts from the
	// server: above jute.maxbuffer, so tests can read big replies.
	rawReadMax = 4 << 20
)

var openACL = []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}

// startPaddock starts a Paddock server with tickTime tick (ms) and extra
// zoo.cfg lines.
func startPaddock(t *testing.T, tick int, extra ...string) *zktest.Process {
	t.Helper()
	return zktest.StartPaddock(t, zktest.PaddockOptions{TickTime: tick, ExtraConfig: extra})
}

// eventually polls cond every pollEvery until it returns nil or timeout
// passes, then fails t with cond's last error.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true after %v: %v", what, timeout, err)
		}
		<-tick.C
	}
}

// checkAlive fails t unless the server process is running and answers ruok
// with imok.
func checkAlive(t testing.TB, p *zktest.Process) {
	t.Helper()
	pid := p.Pid()
	if pid == 0 {
		t.Fatalf("paddock is not running; log ends:\n%s", p.LogTail())
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("paddock pid %d: %v; log ends:\n%s", pid, err, p.LogTail())
	}
	out, err := zktest.FourLetterWord(p.Addr, "ruok")
	if err != nil || out != "imok" {
		t.Fatalf("ruok = %q, %v; want imok; log ends:\n%s", out, err, p.LogTail())
	}
}

// readLog returns the whole server log.
func readLog(t testing.TB, p *zktest.Process) string {
	t.Helper()
	b, err := os.ReadFile(p.LogPath)
	if err != nil {
		t.Fatalf("read server log: %v", err)
	}
	return string(b)
}

// logLineWith polls the server log for a line containing every one of subs
// and returns it.
func logLineWith(t testing.TB, p *zktest.Process, subs ...string) string {
	t.Helper()
	var found string
	eventually(t, 5*time.Second, fmt.Sprintf("a server log line containing %q", subs), func() error {
		for _, line := range strings.Split(readLog(t, p), "\n") {
			ok := true
			for _, s := range subs {
				ok = ok && strings.Contains(line, s)
			}
			if ok {
				found = line
				return nil
			}
		}
		return errors.New("no such line")
	})
	return found
}

// zkLogger sends go-zk's log lines to the test log.
type zkLogger struct{ t testing.TB }

func (l zkLogger) Printf(format string, args ...any) { l.t.Logf("go-zk: "+format, args...) }

// sessionEvents records the session states a go-zk connection reports.
type sessionEvents struct {
	mu     sync.Mutex
	states []zk.State
}

func (s *sessionEvents) add(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	s.mu.Lock()
	s.states = append(s.states, ev.State)
	s.mu.Unlock()
}

// all returns the states seen so far.
func (s *sessionEvents) all() []zk.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]zk.State(nil), s.states...)
}

// count returns how many times state was seen.
func (s *sessionEvents) count(state zk.State) int {
	n := 0
	for _, st := range s.all() {
		if st == state {
			n++
		}
	}
	return n
}

// connectZK opens a go-zk session to addr, waits until it has a session and
// returns the connection and its recorded session events. The connection is
// closed at cleanup.
func connectZK(t testing.TB, addr string, timeout time.Duration) (*zk.Conn, *sessionEvents) {
	t.Helper()
	evs := &sessionEvents{}
	conn, _, err := zk.Connect([]string{addr}, timeout,
		zk.WithLogger(zkLogger{t}), zk.WithLogInfo(false), zk.WithEventCallback(evs.add))
	if err != nil {
		t.Fatalf("go-zk connect to %s: %v", addr, err)
	}
	t.Cleanup(conn.Close)
	eventually(t, 20*time.Second, "go-zk session with "+addr, func() error {
		if conn.State() != zk.StateHasSession {
			return fmt.Errorf("state %v", conn.State())
		}
		return nil
	})
	return conn, evs
}

// reply is one frame received after the handshake.
type reply struct {
	hdr  proto.ReplyHeader
	body []byte
}

// event is a notification (xid -1) received on a raw connection.
type event struct {
	ev   proto.WatcherEvent
	zxid int64
}

// rawConn is a client connection speaking the wire protocol directly.
type rawConn struct {
	t      testing.TB
	nc     net.Conn
	br     *bufio.Reader
	xid    int32
	events []event // notifications read while waiting for replies

	SessionID int64
	Passwd    []byte
	Timeout   int32
	LastZxid  int64 // the highest zxid in a reply so far
}

// dialRaw opens a TCP connection to addr; it is closed at cleanup.
func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, ioTimeout)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc, br: bufio.NewReader(nc)}
}

// newSession dials addr and opens a new session asking for timeoutMs.
func newSession(t testing.TB, addr string, timeoutMs int32) *rawConn {
	t.Helper()
	c := dialRaw(t, addr)
	resp, err := c.handshake(proto.ConnectRequest{TimeOut: timeoutMs})
	if err != nil {
		t.Fatalf("new session on %s: %v", addr, err)
	}
	if resp.SessionID == 0 || resp.TimeOut <= 0 {
		t.Fatalf("new session on %s: got ConnectResponse %+v", addr, resp)
	}
	return c
}

// reattach dials addr and resumes the session of from, with the password
// passwd (from's if nil) and from's last zxid seen.
func reattach(t testing.TB, addr string, from *rawConn, passwd []byte, timeoutMs int32) (*rawConn, proto.ConnectResponse, error) {
	t.Helper()
	if passwd == nil {
		passwd = from.Passwd
	}
	c := dialRaw(t, addr)
	resp, err := c.handshake(proto.ConnectRequest{TimeOut: timeoutMs, SessionID: from.SessionID, Passwd: passwd, LastZxidSeen: from.LastZxid})
	return c, resp, err
}

// write writes b with a deadline.
func (c *rawConn) write(b []byte) error {
	c.nc.SetWriteDeadline(time.Now().Add(ioTimeout))
	_, err := c.nc.Write(b)
	return err
}

// readFrame reads one frame within d.
func (c *rawConn) readFrame(d time.Duration) ([]byte, error) {
	c.nc.SetReadDeadline(time.Now().Add(d))
	return proto.ReadFrame(c.br, nil, rawReadMax)
}

// handshake sends req (a 16-byte zero password if none) and reads the
// ConnectResponse; on success with a session it remembers the session.
func (c *rawConn) handshake(req proto.ConnectRequest) (proto.ConnectResponse, error) {
	var resp proto.ConnectResponse
	if req.Passwd == nil {
		req.Passwd = make([]byte, 16)
	}
	if err := c.write(proto.AppendRecordFrame(nil, &req)); err != nil {
		return resp, fmt.Errorf("send ConnectRequest: %w", err)
	}
	frame, err := c.readFrame(ioTimeout)
	if err != nil {
		return resp, fmt.Errorf("read ConnectResponse: %w", err)
	}
	if err := proto.Unmarshal(frame, &resp); err != nil {
		return resp, fmt.Errorf("decode ConnectResponse (% x): %w", frame, err)
	}
	if resp.SessionID != 0 {
		c.SessionID, c.Passwd, c.Timeout = resp.SessionID, resp.Passwd, resp.TimeOut
	}
	return resp, nil
}

// send writes one request and returns its xid.
func (c *rawConn) send(op proto.OpCode, req proto.Request) (int32, error) {
	c.xid++
	xid := c.xid
	if op == proto.OpPing {
		xid = proto.XidPing
	}
	return xid, c.write(proto.AppendRequestFrame(nil, xid, op, req))
}

// recv reads the next reply, storing notifications on the way. With
// stopAtEvent it also returns (a zero reply) once it has stored one.
func (c *rawConn) recv(d time.Duration, stopAtEvent bool) (reply, error) {
	deadline := time.Now().Add(d)
	for {
		frame, err := c.readFrame(time.Until(deadline))
		if err != nil {
			return reply{}, err
		}
		var r reply
		dec := proto.NewDecoder(frame)
		r.hdr.Decode(dec)
		if dec.Err() != nil {
			return reply{}, fmt.Errorf("decode reply header (% x): %w", frame, dec.Err())
		}
		r.body = frame[proto.ReplyHeaderSize:]
		if r.hdr.Xid != proto.XidNotification {
			c.LastZxid = max(c.LastZxid, r.hdr.Zxid)
			return r, nil
		}
		var ev proto.WatcherEvent
		if err := proto.Unmarshal(r.body, &ev); err != nil {
			return reply{}, fmt.Errorf("decode notification (% x): %w", frame, err)
		}
		c.events = append(c.events, event{ev: ev, zxid: r.hdr.Zxid})
		if stopAtEvent {
			return reply{}, nil
		}
	}
}

// call sends a request, waits for its reply and decodes the body into resp
// (when not nil and the reply is not an error). It returns the reply
// header; a transport failure or an out-of-order xid is an error.
func (c *rawConn) call(op proto.OpCode, req proto.Request, resp proto.Response) (proto.ReplyHeader, error) {
	xid, err := c.send(op, req)
	if err != nil {
		return proto.ReplyHeader{}, fmt.Errorf("send %v: %w", op, err)
	}
	r, err := c.recv(ioTimeout, false)
	if err != nil {
		return proto.ReplyHeader{}, fmt.Errorf("reply to %v: %w", op, err)
	}
	if r.hdr.Xid != xid {
		return r.hdr, fmt.Errorf("reply to %v xid %d has xid %d", op, xid, r.hdr.Xid)
	}
	if resp != nil && r.hdr.Err == proto.ErrOK {
		if err := proto.Unmarshal(r.body, resp); err != nil {
			return r.hdr, fmt.Errorf("decode %v reply: %w", op, err)
		}
	}
	return r.hdr, nil
}

// mustCall is call that fails t on a transport error or an error code
// other than want.
func (c *rawConn) mustCall(op proto.OpCode, req proto.Request, resp proto.Response, want proto.ErrCode) proto.ReplyHeader {
	c.t.Helper()
	hdr, err := c.call(op, req, resp)
	if err != nil {
		c.t.Fatalf("session 0x%x: %v", c.SessionID, err)
	}
	if hdr.Err != want {
		c.t.Fatalf("session 0x%x: %v %+v: err %d (%v), want %d (%v)", c.SessionID, op, req, hdr.Err, hdr.Err, want, want)
	}
	return hdr
}

// create creates path with data and flags (open ACL), failing t on error.
func (c *rawConn) create(path, data string, flags int32) {
	c.t.Helper()
	c.mustCall(proto.OpCreate, &proto.CreateRequest{Path: path, Data: []byte(data), ACL: openACL, Flags: flags}, nil, proto.ErrOK)
}

// exists returns the node's Stat, or nil if it does not exist.
func (c *rawConn) exists(path string, watch bool) *proto.Stat {
	c.t.Helper()
	var st proto.StatResponse
	hdr, err := c.call(proto.OpExists, &proto.ExistsRequest{Path: path, Watch: watch}, &st)
	if err != nil {
		c.t.Fatalf("session 0x%x: %v", c.SessionID, err)
	}
	switch hdr.Err {
	case proto.ErrOK:
		return &st.Stat
	case proto.ErrNoNode:
		return nil
	}
	c.t.Fatalf("exists %s: err %v", path, hdr.Err)
	return nil
}

// ping sends a ping and waits for its reply.
func (c *rawConn) ping() error {
	hdr, err := c.call(proto.OpPing, nil, nil)
	if err != nil {
		return err
	}
	if hdr.Err != proto.ErrOK {
		return fmt.Errorf("ping: err %v", hdr.Err)
	}
	return nil
}

// nextEvent returns the next notification, reading up to d for it.
func (c *rawConn) nextEvent(d time.Duration) (event, error) {
	if len(c.events) == 0 {
		r, err := c.recv(d, true)
		if err != nil {
			return event{}, err
		}
		if len(c.events) == 0 {
			return event{}, fmt.Errorf("got reply xid %d while waiting for a notification", r.hdr.Xid)
		}
	}
	ev := c.events[0]
	c.events = c.events[1:]
	return ev, nil
}

// expectClosed reads until the server closes the connection, failing if it
// sends anything or is still open after d. It returns how long it waited.
func (c *rawConn) expectClosed(d time.Duration) (time.Duration, error) {
	start := time.Now()
	c.nc.SetReadDeadline(start.Add(d))
	var buf [512]byte
	n, err := io.ReadFull(c.br, buf[:])
	waited := time.Since(start)
	switch {
	case n > 0:
		return waited, fmt.Errorf("server sent %d bytes (% x) instead of closing", n, buf[:n])
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
		return waited, nil
	}
	return waited, fmt.Errorf("connection not closed after %v: %v", d, err)
}

// zeroConnectResponse reports whether resp is the "session expired or
// invalid" answer: timeout 0, session 0, 16 zero password bytes.
func zeroConnectResponse(resp proto.ConnectResponse) error {
	if resp.TimeOut != 0 || resp.SessionID != 0 || len(resp.Passwd) != 16 || strings.Trim(string(resp.Passwd), "\x00") != "" {
		return fmt.Errorf("ConnectResponse %+v, want timeout 0, session 0 and 16 zero password bytes", resp)
	}
	return nil
}
