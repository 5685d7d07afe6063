package robust_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/zktest"
)

// badHandshakeTimeout is paddock.handshake.timeoutMs in the bad-input test.
const badHandshakeTimeout = 500 * time.Millisecond

// goodClient is a well-behaved go-zk client doing set and get in a loop. It
// must never see an error or a reconnect while the bad connections run.
type goodClient struct {
	conn   *zk.Conn
	events *sessionEvents
	before int // session events seen when the loop started
	stop   chan struct{}
	done   chan struct{}
	ops    atomic.Int64
	err    error // the first failure, valid after done is closed
}

// maxGoodOps bounds the good client's loop.
const maxGoodOps = 1 << 22

func startGoodClient(t *testing.T, addr string) *goodClient {
	conn, evs := connectZK(t, addr, 10*time.Second)
	if _, err := conn.Create("/good", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	g := &goodClient{conn: conn, events: evs, before: len(evs.all()), stop: make(chan struct{}), done: make(chan struct{})}
	go g.run()
	return g
}

func (g *goodClient) run() {
	defer close(g.done)
	for i := 0; i < maxGoodOps; i++ {
		select {
		case <-g.stop:
			return
		default:
		}
		want := []byte("good-" + strconv.Itoa(i))
		if _, err := g.conn.Set("/good", want, -1); err != nil {
			g.err = fmt.Errorf("set #%d: %w", i, err)
			return
		}
		got, _, err := g.conn.Get("/good")
		if err != nil {
			g.err = fmt.Errorf("get #%d: %w", i, err)
			return
		}
		if !bytes.Equal(got, want) {
			g.err = fmt.Errorf("get #%d = %q, want %q", i, got, want)
			return
		}
		g.ops.Add(1)
	}
}

// finish stops the loop and fails t if the client saw an error or a
// session event (a disconnect) or made no progress.
func (g *goodClient) finish(t *testing.T) {
	t.Helper()
	close(g.stop)
	<-g.done
	if g.err != nil {
		t.Errorf("the well-behaved client failed: %v", g.err)
	}
	if states := g.events.all(); len(states) != g.before {
		t.Errorf("the well-behaved client saw session events %v after it started (a reconnect)", states[g.before:])
	}
	if g.ops.Load() == 0 {
		t.Errorf("the well-behaved client made no progress")
	}
	t.Logf("the well-behaved client did %d set+get pairs", g.ops.Load())
}

// frameHeader returns a 4-byte length prefix n.
func frameHeader(n int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }

// appendRawRequest appends a request frame whose body is given as bytes.
func appendRawRequest(b []byte, xid int32, op proto.OpCode, body []byte) []byte {
	b, start := proto.StartFrame(b)
	b = (&proto.RequestHeader{Xid: xid, Op: op}).Append(b)
	b = append(b, body...)
	_ = proto.FinishFrame(b, start) // start is valid by construction
	return b
}

// drainUntilClosed reads and discards until the server closes the
// connection, failing if it is still open after d. It returns the number of
// bytes the server sent.
func (c *rawConn) drainUntilClosed(d time.Duration) (int64, error) {
	c.nc.SetReadDeadline(time.Now().Add(d))
	n, err := io.Copy(io.Discard, c.br)
	if err == nil || errors.Is(err, syscall.ECONNRESET) {
		return n, nil
	}
	return n, fmt.Errorf("connection still open after %v: %v", d, err)
}

// globalSessions returns zk_global_sessions from mntr.
func globalSessions(t *testing.T, p *zktest.Process) int {
	t.Helper()
	out, err := zktest.FourLetterWord(p.Addr, "mntr")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "zk_global_sessions\t"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("mntr line %q: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("mntr has no zk_global_sessions:\n%s", out)
	return 0
}

// localAddr is the client side of the connection, as the server logs it.
func (c *rawConn) localAddr() string { return c.nc.LocalAddr().String() }

// allOpcodes are the opcodes of the protocol and a few that are not.
var allOpcodes = []proto.OpCode{
	proto.OpNotification, proto.OpCreate, proto.OpDelete, proto.OpExists, proto.OpGetData,
	proto.OpSetData, proto.OpGetACL, proto.OpSetACL, proto.OpGetChildren, proto.OpSync,
	proto.OpPing, proto.OpGetChildren2, proto.OpCheck, proto.OpMulti, proto.OpCreate2,
	proto.OpReconfig, proto.OpCheckWatches, proto.OpRemoveWatches, proto.OpCreateContainer,
	proto.OpDeleteContainer, proto.OpCreateTTL, proto.OpMultiRead, proto.OpAuth,
	proto.OpSetWatches, proto.OpSASL, proto.OpGetEphemerals, proto.OpGetAllChildrenNumber,
	proto.OpSetWatches2, proto.OpAddWatch, proto.OpWhoAmI, proto.OpCreateSession,
	proto.OpCloseSession, proto.OpError, 10, 23, 99, 108, 1000, -12, math.MaxInt32, math.MinInt32,
}

// garbageBodies are request bodies no record decodes sensibly from: huge
// and negative lengths, and short scraps.
var garbageBodies = []struct {
	name string
	body []byte
}{
	{"huge string length", append(frameHeader(math.MaxInt32), "/x"...)},
	{"negative lengths", bytes.Repeat([]byte{0xff}, 24)},
	{"huge vector length", append(append(append(frameHeader(2), "/x"...), frameHeader(0)...), frameHeader(0x10000000)...)},
	{"three bytes", []byte{0, 0, 1}},
}

// TestBadInput sends malformed, oversized, truncated and fuzzed input on
// connections of their own while a well-behaved client works, and checks
// that only the offending connections suffer: the good client never fails
// or reconnects, and the server stays up and serves a fresh client.
func TestBadInput(t *testing.T) {
	p := startPaddock(t, 2000, fmt.Sprintf("paddock.handshake.timeoutMs=%d", badHandshakeTimeout.Milliseconds()))
	good := startGoodClient(t, p.Addr)
	t.Run("before the handshake", func(t *testing.T) { badBeforeHandshake(t, p) })
	t.Run("after the handshake", func(t *testing.T) { badAfterHandshake(t, p) })
	t.Run("garbage bodies", func(t *testing.T) { garbageForEveryOpcode(t, p) })
	t.Run("invalid requests keep the connection", func(t *testing.T) { invalidCreates(t, p) })
	t.Run("fuzzed frames", func(t *testing.T) { fuzzFrames(t, p) })
	good.finish(t)

	checkAlive(t, p)
	fresh, _ := connectZK(t, p.Addr, 10*time.Second)
	if _, err := fresh.Create("/fresh", []byte("ok"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("a fresh client after the bad input: create: %v", err)
	}
	if data, _, err := fresh.Get("/fresh"); err != nil || string(data) != "ok" {
		t.Fatalf("a fresh client after the bad input: get = %q, %v", data, err)
	}
}

// badBeforeHandshake sends bad first frames and silence.
func badBeforeHandshake(t *testing.T, p *zktest.Process) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		c := dialRaw(t, p.Addr)
		junk := make([]byte, 1+rng.IntN(200))
		for j := range junk {
			junk[j] = byte(rng.Uint32())
		}
		c.write(junk)
		if _, err := c.drainUntilClosed(badHandshakeTimeout + 5*time.Second); err != nil {
			t.Errorf("random bytes #%d (% x…): %v", i, junk[:min(8, len(junk))], err)
		}
	}

	lengths := []int32{proto.DefaultMaxBuffer + 1, math.MaxInt32, -1, math.MinInt32}
	for _, n := range lengths {
		c := dialRaw(t, p.Addr)
		c.write(append(frameHeader(n), make([]byte, 64)...))
		if _, err := c.expectClosed(ioTimeout); err != nil {
			t.Errorf("first frame of length %d: %v", n, err)
		}
		logLineWith(t, p, c.localAddr(), strconv.Itoa(int(n)))
	}

	// A handshake that stops halfway, then the client goes away.
	c := dialRaw(t, p.Addr)
	c.write(append(frameHeader(proto.ConnectRequestSize), 0, 0, 0, 0, 0, 0))
	c.nc.Close()

	// lastZxidSeen far ahead of the server: closed without a session.
	sessions := globalSessions(t, p)
	c = dialRaw(t, p.Addr)
	c.write(proto.AppendRecordFrame(nil, &proto.ConnectRequest{LastZxidSeen: 1 << 40, TimeOut: 10000, Passwd: make([]byte, 16)}))
	if _, err := c.expectClosed(ioTimeout); err != nil {
		t.Errorf("ConnectRequest with lastZxidSeen 0x%x: %v", int64(1<<40), err)
	}
	if after := globalSessions(t, p); after != sessions {
		t.Errorf("ConnectRequest with lastZxidSeen 0x%x: %d sessions before, %d after", int64(1<<40), sessions, after)
	}

	// Silence, or part of a handshake and then silence: closed after the
	// handshake timeout, not before.
	silences := []struct {
		name string
		send []byte
	}{
		{"nothing", nil},
		{"half a length", []byte{0, 0}},
		{"half a four-letter word", []byte("ru")},
		{"a length only", frameHeader(proto.ConnectRequestSize)},
		{"half a ConnectRequest", append(frameHeader(proto.ConnectRequestSize), make([]byte, 20)...)},
	}
	var wg sync.WaitGroup
	for _, s := range silences {
		dialed := time.Now() // the server's timer starts after this
		c := dialRaw(t, p.Addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.write(s.send)
			_, err := c.expectClosed(badHandshakeTimeout + 5*time.Second)
			if open := time.Since(dialed); err != nil {
				t.Errorf("handshake that never comes (%s): %v", s.name, err)
			} else if open < badHandshakeTimeout*9/10 {
				t.Errorf("handshake that never comes (%s): closed %v after the dial, before the %v handshake timeout", s.name, open, badHandshakeTimeout)
			}
		}()
	}
	wg.Wait()
}

// badAfterHandshake sends bad frames on sessions.
func badAfterHandshake(t *testing.T, p *zktest.Process) {
	lengths := []int32{proto.DefaultMaxBuffer + 1, math.MaxInt32, -1, math.MinInt32}
	for _, n := range lengths {
		c := newSession(t, p.Addr, 10000)
		c.write(append(frameHeader(n), make([]byte, 64)...))
		if _, err := c.expectClosed(ioTimeout); err != nil {
			t.Errorf("frame of length %d: %v", n, err)
		}
		logLineWith(t, p, c.localAddr(), strconv.Itoa(int(n)))
	}

	// Unknown and not-allowed opcodes: UNIMPLEMENTED, then closed.
	unimplemented := []struct {
		name string
		op   proto.OpCode
		req  proto.Request
	}{
		{"top-level check", proto.OpCheck, &proto.CheckVersionRequest{Path: "/good", Version: 0}},
		{"unknown opcode 999", 999, &proto.GetDataRequest{Path: "/good"}},
		{"unknown opcode 23", 23, nil},
		{"unknown opcode -100", -100, nil},
		{"error", proto.OpError, nil},
		{"notification", proto.OpNotification, nil},
	}
	for _, u := range unimplemented {
		c := newSession(t, p.Addr, 10000)
		hdr, err := c.call(u.op, u.req, nil)
		if err != nil {
			t.Errorf("%s: %v", u.name, err)
			continue
		}
		if hdr.Err != proto.ErrUnimplemented || hdr.Zxid != -1 {
			t.Errorf("%s: reply err %d (%v) zxid %d, want %d (Unimplemented) and zxid -1", u.name, hdr.Err, hdr.Err, hdr.Zxid, proto.ErrUnimplemented)
		}
		if _, err := c.expectClosed(ioTimeout); err != nil {
			t.Errorf("%s: after the reply: %v", u.name, err)
		}
	}

	// Abrupt disconnects: mid-frame, and with replies still to come.
	c := newSession(t, p.Addr, 10000)
	frame := proto.AppendRequestFrame(nil, 1, proto.OpSetData, &proto.SetDataRequest{Path: "/abrupt", Data: make([]byte, 100), Version: -1})
	c.write(frame[:len(frame)/2])
	c.nc.Close()

	c = newSession(t, p.Addr, 10000)
	var batch []byte
	for i := range 200 {
		batch = proto.AppendRequestFrame(batch, int32(i+1), proto.OpGetData, &proto.GetDataRequest{Path: "/good"})
		batch = proto.AppendRequestFrame(batch, int32(i+1), proto.OpCreate,
			&proto.CreateRequest{Path: fmt.Sprintf("/abrupt-%d", i), ACL: openACL, Flags: proto.FlagEphemeral})
	}
	c.write(batch)
	if tc, ok := c.nc.(*net.TCPConn); ok {
		tc.SetLinger(0) // reset, not a polite close
	}
	c.nc.Close()
}

// garbageForEveryOpcode sends, on a session, each opcode with each
// garbage body followed by a ping: the server must answer or close the
// connection, and not hang.
func garbageForEveryOpcode(t *testing.T, p *zktest.Process) {
	type outcome struct{ answered, closed int }
	var res outcome
	for _, op := range allOpcodes {
		for _, g := range garbageBodies {
			c := newSession(t, p.Addr, 10000)
			b := appendRawRequest(nil, 1, op, g.body)
			b = proto.AppendRequestFrame(b, proto.XidPing, proto.OpPing, nil)
			c.write(b)
			r, err := c.recv(ioTimeout, false)
			switch {
			case err == nil:
				res.answered++
				if want := int32(1); r.hdr.Xid != want && !(op == proto.OpPing && r.hdr.Xid == proto.XidPing) {
					t.Errorf("%v with %s: first reply has xid %d, want 1", op, g.name, r.hdr.Xid)
				}
			case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
				res.closed++
			default:
				t.Errorf("%v with %s: neither answered nor closed: %v", op, g.name, err)
			}
			c.nc.Close()
		}
	}
	t.Logf("garbage bodies: %d answered, %d connections closed", res.answered, res.closed)
}

// invalidCreates sends creates with invalid paths and ACLs: each gets its
// error code and the connection stays usable.
func invalidCreates(t *testing.T, p *zktest.Process) {
	c := newSession(t, p.Addr, 10000)
	c.create("/valid", "", proto.FlagPersistent)
	// ZooKeeper looks the parent up before it validates the rest of the
	// path (NoNode wins), so every parent here exists.
	paths := []string{
		"", "relative", "/nul\x00char", "/valid/", "/valid/.", "/valid/..", "/.", "/..", "/valid/\x1f",
		"/ctl\x01char", "/del\x7fchar", "/c1\u0085char", "/bidi\ufff0", "/sur\ue000rogate",
	}
	for _, path := range paths {
		for _, op := range []proto.OpCode{proto.OpCreate, proto.OpCreate2} {
			hdr, err := c.call(op, &proto.CreateRequest{Path: path, ACL: openACL}, nil)
			if err != nil {
				t.Fatalf("%v %q: %v", op, path, err)
			}
			if hdr.Err != proto.ErrBadArguments {
				t.Errorf("%v %q: err %d (%v), want %d (BadArguments)", op, path, hdr.Err, hdr.Err, proto.ErrBadArguments)
			}
		}
	}
	acls := []struct {
		name string
		acl  []proto.ACL
	}{
		{"empty list", []proto.ACL{}},
		{"null list", nil},
		{"unknown scheme", []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "bogus", ID: "x"}}}},
		{"world not anyone", []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "someone"}}}},
		{"digest without colon", []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "digest", ID: "nocolon"}}}},
		{"ip not an address", []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "ip", ID: "not-an-ip"}}}},
		{"ip bad mask", []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "ip", ID: "10.0.0.0/99"}}}},
		{"auth without identities", []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "auth", ID: ""}}}},
		{"one good one bad", append(append([]proto.ACL{}, openACL...), proto.ACL{Perms: proto.PermRead, ID: proto.ID{Scheme: "bogus", ID: "y"}})},
	}
	for i, a := range acls {
		path := fmt.Sprintf("/valid/acl%d", i)
		hdr, err := c.call(proto.OpCreate, &proto.CreateRequest{Path: path, ACL: a.acl}, nil)
		if err != nil {
			t.Fatalf("create with ACL %s: %v", a.name, err)
		}
		if hdr.Err != proto.ErrInvalidACL {
			t.Errorf("create with ACL %s: err %d (%v), want %d (InvalidACL)", a.name, hdr.Err, hdr.Err, proto.ErrInvalidACL)
		}
		hdr, err = c.call(proto.OpSetACL, &proto.SetACLRequest{Path: "/valid", ACL: a.acl, Version: -1}, nil)
		if err != nil {
			t.Fatalf("setACL %s: %v", a.name, err)
		}
		if hdr.Err != proto.ErrInvalidACL {
			t.Errorf("setACL %s: err %d (%v), want %d (InvalidACL)", a.name, hdr.Err, hdr.Err, proto.ErrInvalidACL)
		}
	}
	// Still the same, working connection.
	if err := c.ping(); err != nil {
		t.Fatalf("connection after the invalid requests: %v", err)
	}
	c.create("/valid/child", "", proto.FlagPersistent)
	var kids proto.GetChildrenResponse
	c.mustCall(proto.OpGetChildren, &proto.GetChildrenRequest{Path: "/valid"}, &kids, proto.ErrOK)
	if len(kids.Children) != 1 || kids.Children[0] != "child" {
		t.Errorf("children of /valid = %q, want [child]: an invalid create left a node", kids.Children)
	}
}
