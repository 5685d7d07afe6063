package fourlw_test

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// clientWait bounds one request/reply exchange of rawClient.
const clientWait = 10 * time.Second

// maxFrame bounds a reply frame the client accepts.
const maxFrame = 1 << 20

// rawClient is a minimal synchronous ZooKeeper client built on
// internal/proto: one request at a time, watch notifications skipped. It
// exists because the test needs requests (addWatch) go-zk does not have,
// and the same bytes must go to both servers.
type rawClient struct {
	t         testing.TB
	addr      string
	nc        net.Conn
	br        *bufio.Reader
	xid       int32
	sessionID int64
	passwd    []byte
}

// dialClient opens a session with addr and registers its close.
func dialClient(t testing.TB, addr string, timeoutMs int32) *rawClient {
	t.Helper()
	c := redialClient(t, addr, timeoutMs, 0, make([]byte, 16))
	if c.sessionID == 0 {
		t.Fatalf("%s: connect refused (session id 0)", addr)
	}
	return c
}

// redialClient connects to addr and resumes session id with passwd (0
// opens a new session), and registers the connection's close. The
// client's sessionID is 0 if the server refused the session.
func redialClient(t testing.TB, addr string, timeoutMs int32, id int64, passwd []byte) *rawClient {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, clientWait)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	c := &rawClient{t: t, addr: addr, nc: nc, br: bufio.NewReader(nc)}
	t.Cleanup(func() { nc.Close() })
	req := proto.ConnectRequest{TimeOut: timeoutMs, SessionID: id, Passwd: passwd}
	nc.SetDeadline(time.Now().Add(clientWait))
	if _, err := nc.Write(proto.AppendRecordFrame(nil, &req)); err != nil {
		t.Fatalf("%s: write connect request: %v", addr, err)
	}
	frame, err := proto.ReadFrame(c.br, nil, maxFrame)
	if err != nil {
		t.Fatalf("%s: read connect response: %v", addr, err)
	}
	var resp proto.ConnectResponse
	if err := proto.Unmarshal(frame, &resp); err != nil {
		t.Fatalf("%s: decode connect response: %v", addr, err)
	}
	c.sessionID, c.passwd = resp.SessionID, resp.Passwd
	return c
}

// do sends one request and waits for its reply, skipping notifications;
// it returns the reply's error code.
func (c *rawClient) do(op proto.OpCode, req proto.Request) proto.ErrCode {
	c.t.Helper()
	c.xid++
	c.nc.SetDeadline(time.Now().Add(clientWait))
	if _, err := c.nc.Write(proto.AppendRequestFrame(nil, c.xid, op, req)); err != nil {
		c.t.Fatalf("%s: write %v: %v", c.addr, op, err)
	}
	for range 1000 {
		frame, err := proto.ReadFrame(c.br, nil, maxFrame)
		if err != nil {
			c.t.Fatalf("%s: read reply to %v: %v", c.addr, op, err)
		}
		d := proto.NewDecoder(frame)
		var h proto.ReplyHeader
		h.Decode(d)
		if d.Err() != nil {
			c.t.Fatalf("%s: decode reply header to %v: %v", c.addr, op, d.Err())
		}
		if h.Xid == c.xid {
			return h.Err
		}
	}
	c.t.Fatalf("%s: no reply to %v among 1000 frames", c.addr, op)
	return 0
}

// getData returns the data of path, failing unless it exists.
func (c *rawClient) getData(path string) []byte {
	c.t.Helper()
	c.xid++
	c.nc.SetDeadline(time.Now().Add(clientWait))
	if _, err := c.nc.Write(proto.AppendRequestFrame(nil, c.xid, proto.OpGetData, &proto.GetDataRequest{Path: path})); err != nil {
		c.t.Fatalf("%s: write getData: %v", c.addr, err)
	}
	for range 1000 {
		frame, err := proto.ReadFrame(c.br, nil, maxFrame)
		if err != nil {
			c.t.Fatalf("%s: read getData reply: %v", c.addr, err)
		}
		d := proto.NewDecoder(frame)
		var h proto.ReplyHeader
		h.Decode(d)
		if d.Err() != nil || h.Xid != c.xid {
			continue
		}
		if h.Err != proto.ErrOK {
			c.t.Fatalf("%s: getData %s: %v", c.addr, path, h.Err)
		}
		resp, err := proto.DecodeResponse(proto.OpGetData, frame[d.Offset():])
		if err != nil {
			c.t.Fatalf("%s: decode getData reply: %v", c.addr, err)
		}
		return resp.(*proto.GetDataResponse).Data
	}
	c.t.Fatalf("%s: no reply to getData among 1000 frames", c.addr)
	return nil
}

// must runs do and fails unless the reply is ErrOK.
func (c *rawClient) must(op proto.OpCode, req proto.Request) {
	c.t.Helper()
	if e := c.do(op, req); e != proto.ErrOK {
		c.t.Fatalf("%s: %v %+v: error %v", c.addr, op, req, e)
	}
}

// openACL is world:anyone with every permission.
var openACL = []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}

// create makes a node with flags (0 persistent, 1 ephemeral).
func (c *rawClient) create(path string, data string, flags int32) {
	c.t.Helper()
	c.must(proto.OpCreate, &proto.CreateRequest{Path: path, Data: []byte(data), ACL: openACL, Flags: flags})
}

// auth sends an auth packet (xid -4), which ZooKeeper answers outside its
// request pipeline, and fails unless it is accepted.
func (c *rawClient) auth(scheme, auth string) {
	c.t.Helper()
	c.nc.SetDeadline(time.Now().Add(clientWait))
	req := &proto.AuthPacket{Scheme: scheme, Auth: []byte(auth)}
	if _, err := c.nc.Write(proto.AppendRequestFrame(nil, proto.XidAuth, proto.OpAuth, req)); err != nil {
		c.t.Fatalf("%s: write auth: %v", c.addr, err)
	}
	frame, err := proto.ReadFrame(c.br, nil, maxFrame)
	if err != nil {
		c.t.Fatalf("%s: read auth reply: %v", c.addr, err)
	}
	d := proto.NewDecoder(frame)
	var h proto.ReplyHeader
	h.Decode(d)
	if d.Err() != nil || h.Xid != proto.XidAuth || h.Err != proto.ErrOK {
		c.t.Fatalf("%s: auth reply %+v, %v", c.addr, h, d.Err())
	}
}
