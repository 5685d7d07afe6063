package difftest

import (
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// fakeServer is a tiny stand-in for a ZooKeeper server, enough to test
// Client and Run without Java: creates succeed, exists answers NoNode,
// getData pushes a NodeDataChanged notification before its reply, ping
// and closeSession behave, and any other opcode gets Unimplemented and a
// closed connection.
type fakeServer struct {
	ln net.Listener
	wg sync.WaitGroup

	created int64 // ctime of the one node getData describes, in ms

	mu    sync.Mutex
	conns []net.Conn
	zxid  int64
	next  int64 // last session id handed out
}

func startFake(t *testing.T) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{ln: ln, zxid: 100, next: 0x5000, created: time.Now().UnixMilli()}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *fakeServer) addr() string { return s.ln.Addr().String() }

func (s *fakeServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serve(c)
	}
}

func (s *fakeServer) nextZxid() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.zxid++
	return s.zxid
}

func (s *fakeServer) serve(c net.Conn) {
	defer s.wg.Done()
	defer c.Close()
	body, err := proto.ReadFrame(c, nil, proto.DefaultMaxBuffer)
	if err != nil {
		return
	}
	var req proto.ConnectRequest
	if proto.Unmarshal(body, &req) != nil {
		return
	}
	s.mu.Lock()
	s.next++
	session := s.next
	s.mu.Unlock()
	resp := proto.ConnectResponse{TimeOut: req.TimeOut, SessionID: session,
		Passwd: []byte("0123456789abcdef"), OmitReadOnly: req.OmitReadOnly}
	if _, err := c.Write(proto.AppendRecordFrame(nil, &resp)); err != nil {
		return
	}
	created := s.created
	for {
		body, err := proto.ReadFrame(c, nil, proto.DefaultMaxBuffer)
		if err != nil {
			return
		}
		d := proto.NewDecoder(body)
		var h proto.RequestHeader
		h.Decode(d)
		rh := proto.ReplyHeader{Xid: h.Xid, Zxid: s.zxid}
		var out []byte
		switch h.Op {
		case proto.OpCreate:
			var cr proto.CreateRequest
			cr.Decode(d)
			rh.Zxid = s.nextZxid()
			out = proto.AppendReplyFrame(out, rh, &proto.CreateResponse{Path: cr.Path})
		case proto.OpPing:
			rh.Xid = proto.XidPing
			out = proto.AppendReplyFrame(out, rh, nil)
		case proto.OpExists:
			rh.Err = proto.ErrNoNode
			out = proto.AppendReplyFrame(out, rh, nil)
		case proto.OpGetData:
			var gr proto.GetDataRequest
			gr.Decode(d)
			ev := proto.WatcherEvent{Type: proto.EventNodeDataChanged, State: proto.StateSyncConnected, Path: gr.Path}
			out = proto.AppendReplyFrame(out, proto.ReplyHeader{Xid: proto.XidNotification, Zxid: -1}, &ev)
			st := proto.Stat{Czxid: 101, Mzxid: 104, Ctime: created, Mtime: created + 3, Version: 1, DataLength: 1, Pzxid: 101}
			out = proto.AppendReplyFrame(out, rh, &proto.GetDataResponse{Data: []byte("v"), Stat: st})
		case proto.OpCloseSession:
			c.Write(proto.AppendReplyFrame(out, rh, nil))
			return
		default:
			rh.Err = proto.ErrUnimplemented
			c.Write(proto.AppendReplyFrame(out, rh, nil))
			return
		}
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

func TestRunAgainstFake(t *testing.T) {
	s := startFake(t)
	sc, err := ParseScenarios("fake.txt", `== fake
c1 connect
c2 connect noro timeout=5000
c1 create /a x
c1 get /a
c1 exists /a
c2 send get /a
c2 send exists /b
c2 wait
c1 try get /a
c1 request 999
c1 ping
c2 close
`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Run(s.addr(), sc[0], RunOptions{Root: "/t0"})
	if err != nil {
		t.Fatal(err)
	}
	want := `c1 connect -> session=s1 timeout=30000 readonly=false len=37
c2 connect noro timeout=5000 -> session=s2 timeout=5000 readonly=false len=36
c1 create /a x -> ok /a
c1 event NodeDataChanged /a
c1 get /a -> ok "v" {cz=z1 mz=z2 pz=z1 ct=t1 mt=t2 v=1 cv=0 av=0 eph=0 dl=1 nc=0}
c1 exists /a -> NoNode
c2 event NodeDataChanged /a
c2 get /a -> ok "v" {cz=z1 mz=z2 pz=z1 ct=t1 mt=t2 v=1 cv=0 av=0 eph=0 dl=1 nc=0}
c2 exists /b -> NoNode
c1 event NodeDataChanged /a
c1 try get /a -> ok
c1 request 999 -> Unimplemented
c1 ping -> closed
c2 close -> ok
c2 closed`
	if g := strings.Join(got, "\n"); g != want {
		t.Errorf("transcript (-want +got):\n%s", UnifiedDiff("want", "got", want, g))
	}
}

func TestRunScriptErrors(t *testing.T) {
	s := startFake(t)
	tests := []struct{ step, err string }{
		{"c1 frobnicate /a", `unknown command "frobnicate"`},
		{"c1 get a", "start it with '/'"},
		{"c1 create /a x persistent open extra", "want: <path> <data> [mode] [acl]"},
		{"c1 connect session=c9", "has no session"},
		{"c1 connect bogus", "unknown option"},
		{"c1 multi [setacl /a open -1]", "cannot be encoded in a multi"},
		{"c1 setwatches 0 bogus=/a", "unknown watch list"},
		{"c1 events loudly", "want sorted"},
	}
	for _, tc := range tests {
		sc, err := ParseScenarios("bad.txt", "== bad\nc1 connect\n"+tc.step+"\n")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Run(s.addr(), sc[0], RunOptions{Root: "/t0"}); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Run(%q) error = %v, want one containing %q", tc.step, err, tc.err)
		}
	}
	if _, err := Run(s.addr(), Scenario{Name: "x"}, RunOptions{Root: "/"}); err == nil {
		t.Error("Run with root / succeeded, want an error")
	}
}

func TestClientPipeliningAndClose(t *testing.T) {
	s := startFake(t)
	c, hs, err := Dial(s.addr(), ConnectOptions{TimeOut: 1000}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if hs.Len != proto.ConnectResponseSize || hs.Response.SessionID == 0 {
		t.Fatalf("handshake = %+v, want a 37-byte response with a session", hs)
	}
	for xid := int32(10); xid < 13; xid++ {
		if err := c.Send(xid, proto.OpGetData, &proto.GetDataRequest{Path: "/p"}); err != nil {
			t.Fatal(err)
		}
	}
	var order []int32
	for range 6 {
		f, err := c.Next(5 * time.Second)
		if err != nil || f.Err != nil {
			t.Fatalf("Next: %v / %v", err, f.Err)
		}
		order = append(order, f.Header.Xid)
		resp, err := f.Decode()
		if err != nil {
			t.Fatalf("decode frame xid %d as %v: %v", f.Header.Xid, f.Op, err)
		}
		switch v := resp.(type) {
		case *proto.WatcherEvent:
			if f.Op != proto.OpNotification || v.Path != "/p" {
				t.Errorf("notification %+v decoded as %v", v, f.Op)
			}
		case *proto.GetDataResponse:
			if !f.Pending || f.Xid != f.Header.Xid || string(v.Data) != "v" {
				t.Errorf("reply xid %d: pending %t for xid %d, data %q", f.Header.Xid, f.Pending, f.Xid, v.Data)
			}
		default:
			t.Errorf("frame xid %d decoded to %T", f.Header.Xid, resp)
		}
	}
	if want := []int32{-1, 10, -1, 11, -1, 12}; !equalInt32s(order, want) {
		t.Errorf("frame xids = %v, want %v", order, want)
	}
	if _, err := c.Next(50 * time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Errorf("Next on an idle connection: %v, want ErrTimeout", err)
	}
	// An unknown opcode makes the fake answer and close.
	if err := c.SendBody(13, 999, []byte{1, 2}); err != nil {
		t.Fatal(err)
	}
	f, err := c.Next(5 * time.Second)
	if err != nil || f.Header.Err != proto.ErrUnimplemented {
		t.Fatalf("reply to op 999: %+v, %v", f, err)
	}
	for range 2 { // the end of the stream is reported every time
		f, err = c.Next(5 * time.Second)
		if err != nil || !IsClosedErr(f.Err) {
			t.Fatalf("after close: %+v, %v; want a closed-connection error", f, err)
		}
	}
}

func equalInt32s(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
