package server

import (
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

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
