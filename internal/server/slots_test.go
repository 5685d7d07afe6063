package server

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/fsm"
	"github.com/paddockhq/paddock/internal/proto"
)

// TestOutstandingSlotsComeBack has clients pipeline writes and reads and
// at once take their session to a new connection, which closes the old
// one under the responder, over and over; then it requires every
// outstanding-request slot back: a read the responder held while waiting
// for a write when the connection closed kept its slot, and once the lost
// slots reached globalOutstandingLimit no request got through.
func TestOutstandingSlotsComeBack(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.GlobalOutstandingLimit = 50 })
	setup := dial(t, s.Addr().String())
	setup.mustCreate("/n", "", 0)
	for i := 0; i < 60; i++ {
		c := dial(t, s.Addr().String())
		var b []byte
		for k := 0; k < 4; k++ {
			c.xid++
			b = proto.AppendRequestFrame(b, c.xid, proto.OpSetData, &proto.SetDataRequest{Path: "/n", Data: []byte{byte(i)}, Version: -1})
			c.xid++
			b = proto.AppendRequestFrame(b, c.xid, proto.OpGetData, &proto.GetDataRequest{Path: "/n"})
		}
		c.write(b)
		redial(t, s.Addr().String(), c.session, c.passwd).nc.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(s.outstanding) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d outstanding slots still taken with every connection gone", len(s.outstanding), cap(s.outstanding))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if h, _ := setup.call(proto.OpSetData, &proto.SetDataRequest{Path: "/n", Version: -1}, nil); h.Err != proto.ErrOK {
		t.Fatal(h.Err)
	}
}

// TestPingsNeedNoSlot fills globalOutstandingLimit with writes that never
// complete and requires another client's pings, auth and setWatches to
// be answered all the same: as in ZooKeeper, requests with a special xid
// do not count against the limit, so idle sessions stay alive while busy
// ones are throttled. Before, the ping waited for a slot and the idle
// client lost its connection.
func TestPingsNeedNoSlot(t *testing.T) {
	const limit = 3
	var held atomic.Int32
	s := startServerHooked(t, func(c *config.Config) { c.GlobalOutstandingLimit = limit }, func(s *Server) {
		s.loseProposal = func(e *fsm.Entry) bool {
			if e.Type == fsm.EntryTxn && len(e.Ops) == 1 && string(e.Ops[0].Data) == "hold" {
				held.Add(1)
				return true
			}
			return false
		}
	})
	idle := dial(t, s.Addr().String())
	idle.mustCreate("/n", "", 0)
	busy := dial(t, s.Addr().String())
	var b []byte
	for i := 0; i < limit; i++ {
		busy.xid++
		b = proto.AppendRequestFrame(b, busy.xid, proto.OpSetData, &proto.SetDataRequest{Path: "/n", Data: []byte("hold"), Version: -1})
	}
	busy.write(b)
	deadline := time.Now().Add(10 * time.Second)
	for held.Load() < limit || len(s.outstanding) < limit {
		if time.Now().After(deadline) {
			t.Fatalf("%d writes held, %d slots taken; want %d", held.Load(), len(s.outstanding), limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
	special := []struct {
		xid int32
		op  proto.OpCode
		req proto.Request
	}{
		{proto.XidPing, proto.OpPing, nil},
		{proto.XidAuth, proto.OpAuth, &proto.AuthPacket{Scheme: "digest", Auth: []byte("u:p")}},
		{proto.XidSetWatches, proto.OpSetWatches, &proto.SetWatches{RelativeZxid: s.lastZxid(), DataWatches: []string{"/n"},
			ExistWatches: []string{}, ChildWatches: []string{}}},
		{proto.XidPing, proto.OpPing, nil},
	}
	for _, r := range special {
		idle.write(proto.AppendRequestFrame(nil, r.xid, r.op, r.req))
		f := idle.next()
		if f.hdr.Xid != r.xid || f.hdr.Err != proto.ErrOK {
			t.Fatalf("%v: reply %+v, want xid %d and no error", r.op, f.hdr, r.xid)
		}
	}
	if n := len(s.outstanding); n != limit {
		t.Fatalf("%d slots taken after the special requests, want %d", n, limit)
	}
}
