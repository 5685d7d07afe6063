package server

import (
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/config"
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
