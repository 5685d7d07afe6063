package server

import (
	"bufio"
	"context"
	"errors"
	"github.com/paddockhq/paddock/internal/fsm"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// TestRefusedProposalClosesConnection makes a write whose log entry raft
// refuses (a digest identity so long that the entry, which carries the
// connection's identities, goes over the proposal limit) and requires the
// connection to close. The responder stopped without closing it: the
// reader went on reading requests that were never answered, and the
// client waited for replies until its own timeout.
func TestRefusedProposalClosesConnection(t *testing.T) {
	s := startServer(t, nil)
	c := dial(t, s.Addr().String())
	user := strings.Repeat("u", 600<<10)
	c.write(proto.AppendRequestFrame(nil, proto.XidAuth, proto.OpAuth,
		&proto.AuthPacket{Scheme: "digest", Auth: []byte(user + ":p")}))
	if f := c.next(); f.hdr.Xid != proto.XidAuth || f.hdr.Err != proto.ErrOK {
		t.Fatalf("auth reply %+v", f.hdr)
	}
	c.send(proto.OpCreate, &proto.CreateRequest{Path: "/big", Data: make([]byte, 600<<10), ACL: []proto.ACL{openACL}})
	c.send(proto.OpExists, &proto.ExistsRequest{Path: "/"})
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		_, err := proto.ReadFrame(c.br, nil, 1<<24)
		if err == nil {
			continue // a reply is fine too; the connection must end
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("connection neither answered nor closed after its write was refused")
		}
		if !errors.Is(err, io.EOF) && !isReset(err) {
			t.Fatalf("read: %v", err)
		}
		break
	}
	// The refused write's outstanding slot and the connection are given
	// back.
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.connMu.Lock()
		n := len(s.conns)
		s.connMu.Unlock()
		if n == 0 && len(s.outstanding) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections and %d outstanding slots left", n, len(s.outstanding))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestCloseDuringResumeIsPrompt loses a session's write, so that a resume
// of the session waits for it (Server.settle), and closes the server
// while the resume waits: Close must not wait out the handshake timeout.
func TestCloseDuringResumeIsPrompt(t *testing.T) {
	var held atomic.Bool
	s := startServerHooked(t, func(c *configT) { c.HandshakeTimeout = 20 * time.Second }, func(s *Server) {
		s.loseProposal = func(e *fsm.Entry) bool {
			if e.Type == fsm.EntryTxn && len(e.Ops) == 1 && string(e.Ops[0].Data) == "lost" {
				held.Store(true)
				return true
			}
			return false
		}
	})
	c := dial(t, s.Addr().String())
	c.mustCreate("/n", "", 0)
	c.send(proto.OpSetData, &proto.SetDataRequest{Path: "/n", Data: []byte("lost"), Version: -1})
	deadline := time.Now().Add(10 * time.Second)
	for !held.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the write was never proposed")
		}
		time.Sleep(time.Millisecond)
	}
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Write(proto.AppendRecordFrame(nil, &proto.ConnectRequest{TimeOut: 10000, SessionID: c.session, Passwd: c.passwd}))
	// The resume waits for the old connection to end and for its lost
	// write; give it the time to get there.
	for {
		s.connMu.Lock()
		old := s.bySession[c.session]
		s.connMu.Unlock()
		if old == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the resume never detached the old connection")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // not an assertion: lets the handshake reach settle
	start := time.Now()
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited for a resume's handshake timeout")
	}
	t.Logf("Close took %v", time.Since(start))
}

// TestResumeOfSessionClosedMeanwhileIsRefused closes a session (as its
// expiry does) while a connection resuming it is past the session checks
// and about to attach. The close found no connection of the session to
// close, and the handshake went on: the client was told it was connected
// to a session that no longer exists, its pings answered for good and
// nothing ever closing the connection.
func TestResumeOfSessionClosedMeanwhileIsRefused(t *testing.T) {
	var s *Server
	var closing atomic.Int64
	s = startServerWith(t, func(srv *Server) {
		srv.beforeAttach = func(id int64) {
			if id != closing.Load() {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			c, err := srv.propose(ctx, &fsm.Entry{Type: fsm.EntryCloseSession, Session: id, Time: time.Now().UnixMilli()})
			if err != nil {
				t.Error(err)
				return
			}
			<-c.done
		}
	})
	a := dial(t, s.Addr().String())
	a.nc.Close()
	closing.Store(a.session)
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	nc.Write(proto.AppendRecordFrame(nil, &proto.ConnectRequest{TimeOut: 10000, SessionID: a.session, Passwd: a.passwd}))
	b, err := proto.ReadFrame(br, nil, 1<<20)
	if err != nil {
		return // refused: the client reconnects and learns the session expired
	}
	var resp proto.ConnectResponse
	if err := proto.Unmarshal(b, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.SessionID == 0 || resp.TimeOut <= 0 {
		return // told it expired
	}
	nc.Write(proto.AppendRequestFrame(nil, proto.XidPing, proto.OpPing, nil))
	if _, err := proto.ReadFrame(br, nil, 1<<20); err == nil {
		t.Fatalf("resumed session 0x%x, closed during the handshake, and its ping answered", resp.SessionID)
	}
}
