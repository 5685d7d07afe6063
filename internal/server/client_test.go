package server

import (
	"bufio"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/proto"
)

// startServer runs an in-process server on a free loopback port.
func startServer(t testing.TB, mutate func(*config.Config)) *Server {
	t.Helper()
	return startServerHooked(t, mutate, nil)
}

// startServerWith starts a server on the default test configuration after
// hook has set its test seams.
func startServerWith(t testing.TB, hook func(*Server)) *Server {
	t.Helper()
	return startServerHooked(t, nil, hook)
}

func startServerHooked(t testing.TB, mutate func(*config.Config), hook func(*Server)) *Server {
	t.Helper()
	cfg := config.Default()
	cfg.ClientPort = 0
	cfg.ClientPortAddress = "127.0.0.1"
	cfg.DataDir = t.TempDir()
	cfg.DataLogDir = cfg.DataDir
	cfg.FourLetterWords = config.ParseWhitelist("*")
	if mutate != nil {
		mutate(cfg)
	}
	s, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if hook != nil {
		hook(s)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// frame is one frame received by a rawClient.
type frame struct {
	hdr  proto.ReplyHeader
	body []byte
}

// rawClient speaks the protocol frame by frame, so tests can see the exact
// order of replies and events.
type rawClient struct {
	t       testing.TB
	nc      net.Conn
	br      *bufio.Reader
	xid     int32
	session int64
	passwd  []byte
}

type configT = config.Config

func dial(t testing.TB, addr string) *rawClient { return redial(t, addr, 0, make([]byte, 16)) }

// dialTimeout is redial asking for a session timeout of ms milliseconds.
func dialTimeout(t testing.TB, addr string, id int64, passwd []byte, ms int32) *rawClient {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := &rawClient{t: t, nc: nc, br: bufio.NewReader(nc)}
	c.handshake(&proto.ConnectRequest{TimeOut: ms, SessionID: id, Passwd: passwd})
	return c
}

// redial connects and reattaches to session id with passwd (0 opens a new
// one), asking for a 10 s timeout.
func redial(t testing.TB, addr string, id int64, passwd []byte) *rawClient {
	t.Helper()
	return dialTimeout(t, addr, id, passwd, 10000)
}

func (c *rawClient) handshake(req *proto.ConnectRequest) *proto.ConnectResponse {
	c.t.Helper()
	c.write(proto.AppendRecordFrame(nil, req))
	b, err := proto.ReadFrame(c.br, nil, 1<<20)
	if err != nil {
		c.t.Fatalf("handshake: %v", err)
	}
	var resp proto.ConnectResponse
	if err := proto.Unmarshal(b, &resp); err != nil {
		c.t.Fatal(err)
	}
	c.session, c.passwd = resp.SessionID, resp.Passwd
	return &resp
}

func (c *rawClient) write(b []byte) {
	c.t.Helper()
	c.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

// send writes a request and returns its xid without waiting.
func (c *rawClient) send(op proto.OpCode, req proto.Request) int32 {
	c.xid++
	c.write(proto.AppendRequestFrame(nil, c.xid, op, req))
	return c.xid
}

func (c *rawClient) next() frame {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := proto.ReadFrame(c.br, nil, 1<<24)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	d := proto.NewDecoder(b)
	var h proto.ReplyHeader
	h.Decode(d)
	return frame{hdr: h, body: b[d.Offset():]}
}

// call sends a request and returns its reply, failing on any event seen
// before it unless events is non-nil, in which case they are appended.
func (c *rawClient) call(op proto.OpCode, req proto.Request, events *[]proto.WatcherEvent) (proto.ReplyHeader, proto.Response) {
	c.t.Helper()
	xid := c.send(op, req)
	for {
		f := c.next()
		if f.hdr.Xid == proto.XidNotification {
			var ev proto.WatcherEvent
			if err := proto.Unmarshal(f.body, &ev); err != nil {
				c.t.Fatal(err)
			}
			if events == nil {
				c.t.Fatalf("unexpected event %+v", ev)
			}
			*events = append(*events, ev)
			continue
		}
		if f.hdr.Xid != xid {
			c.t.Fatalf("reply xid %d, want %d", f.hdr.Xid, xid)
		}
		if f.hdr.Err != proto.ErrOK {
			return f.hdr, nil
		}
		resp, err := proto.DecodeResponse(op, f.body)
		if err != nil {
			c.t.Fatalf("decode %v reply: %v", op, err)
		}
		return f.hdr, resp
	}
}

func (c *rawClient) mustCreate(path string, data string, flags int32) string {
	c.t.Helper()
	h, r := c.call(proto.OpCreate, &proto.CreateRequest{Path: path, Data: []byte(data),
		ACL: []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}, Flags: flags}, nil)
	if h.Err != proto.ErrOK {
		c.t.Fatalf("create %s: %v", path, h.Err)
	}
	return r.(*proto.CreateResponse).Path
}

func hexSession(id int64) string { return fmt.Sprintf("0x%x", id) }
