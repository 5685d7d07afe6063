package server

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/fsm"
	"github.com/paddockhq/paddock/internal/proto"
)

// TestLostWriteStopsLaterWrites loses a client's write on its way to the
// log (as a proposal forwarded to a leader that never got it) and checks
// that the writes the client pipelined after it do not apply either, and
// that the client loses its connection at once: otherwise other clients
// would see its later writes without the earlier one (FIFO client order).
func TestLostWriteStopsLaterWrites(t *testing.T) {
	s := startServerWith(t, func(s *Server) {
		var lost atomic.Bool
		s.loseProposal = func(e *fsm.Entry) bool {
			return e.Type == fsm.EntryTxn && len(e.Ops) == 1 && string(e.Ops[0].Data) == "lost" && !lost.Swap(true)
		}
	})
	c := dial(t, s.Addr().String())
	c.mustCreate("/a", "", 0)
	c.mustCreate("/b", "", 0)
	var b []byte
	c.xid++
	b = proto.AppendRequestFrame(b, c.xid, proto.OpSetData, &proto.SetDataRequest{Path: "/a", Data: []byte("lost"), Version: -1})
	c.xid++
	b = proto.AppendRequestFrame(b, c.xid, proto.OpSetData, &proto.SetDataRequest{Path: "/b", Data: []byte("after"), Version: -1})
	c.write(b)
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if f, err := proto.ReadFrame(c.br, nil, 1<<20); !errors.Is(err, io.EOF) {
		t.Fatalf("got frame %x, err %v; want the connection closed", f, err)
	}
	other := dial(t, s.Addr().String())
	h, r := other.call(proto.OpGetData, &proto.GetDataRequest{Path: "/b"}, nil)
	if h.Err != proto.ErrOK {
		t.Fatal(h.Err)
	}
	if d := string(r.(*proto.GetDataResponse).Data); d != "" {
		t.Fatalf("/b holds %q: the write after the lost one applied", d)
	}
	// A new connection of the same session writes again.
	again := redial(t, s.Addr().String(), c.session, c.passwd)
	if h, _ := again.call(proto.OpSetData, &proto.SetDataRequest{Path: "/b", Data: []byte("new"), Version: -1}, nil); h.Err != proto.ErrOK {
		t.Fatalf("setData on the session's new connection: %v", h.Err)
	}
}

// TestResumeWaitsForOldConnection holds the first write of a session's
// connection inside its proposal past the handshake timeout while the
// client reconnects, then lets it go. The new connection must not be
// served before the old one stops proposing: before, the resume went
// ahead after the timeout, the new connection's write applied, and the
// old connection's earlier write applied after it (its first write on its
// connection, so the log's FIFO check let it through), leaving the
// client's earlier value in place of its later one.
func TestResumeWaitsForOldConnection(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	s := startServerHooked(t, func(c *config.Config) { c.HandshakeTimeout = 300 * time.Millisecond }, func(s *Server) {
		s.loseProposal = func(e *fsm.Entry) bool {
			if e.Type == fsm.EntryTxn && len(e.Ops) == 1 && string(e.Ops[0].Data) == "old" {
				close(entered)
				<-release
			}
			return false
		}
	})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	c := dial(t, s.Addr().String())
	c.mustCreate("/n", "", 0)
	old := redial(t, s.Addr().String(), c.session, c.passwd)
	old.send(proto.OpSetData, &proto.SetDataRequest{Path: "/n", Data: []byte("old"), Version: -1})
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the old connection's write was never proposed")
	}

	// Reconnect while the old connection is stuck in its proposal.
	nc, err := net.DialTimeout("tcp", s.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Write(proto.AppendRecordFrame(nil, &proto.ConnectRequest{TimeOut: 10000, SessionID: c.session, Passwd: c.passwd}))
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(nc)
	if b, err := proto.ReadFrame(br, nil, 1<<20); err == nil {
		// Served: write the later value, then let the old write go.
		nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
		nc.Write(proto.AppendRequestFrame(nil, 1, proto.OpSetData, &proto.SetDataRequest{Path: "/n", Data: []byte("new"), Version: -1}))
		if _, err := proto.ReadFrame(br, nil, 1<<20); err != nil {
			t.Fatalf("the new connection's write: %v", err)
		}
		close(release)
		time.Sleep(200 * time.Millisecond) // let the old write reach the log
		got := getData(t, dial(t, s.Addr().String()), "/n")
		t.Fatalf("the session was resumed (%d-byte reply) while its old connection was still proposing; /n ends as %q", len(b), got)
	} else if !errors.Is(err, io.EOF) {
		t.Fatalf("reconnect: want the connection closed, got %v", err)
	}

	// Once the old connection is done, the client gets its session back.
	close(release)
	again := redial(t, s.Addr().String(), c.session, c.passwd)
	if h, _ := again.call(proto.OpSetData, &proto.SetDataRequest{Path: "/n", Data: []byte("new"), Version: -1}, nil); h.Err != proto.ErrOK {
		t.Fatalf("setData after the resume: %v", h.Err)
	}
	if got := getData(t, dial(t, s.Addr().String()), "/n"); got != "new" {
		t.Fatalf("/n = %q, want \"new\"", got)
	}
}

func getData(t *testing.T, c *rawClient, path string) string {
	t.Helper()
	h, r := c.call(proto.OpGetData, &proto.GetDataRequest{Path: path}, nil)
	if h.Err != proto.ErrOK {
		t.Fatalf("getData %s: %v", path, h.Err)
	}
	return string(r.(*proto.GetDataResponse).Data)
}
