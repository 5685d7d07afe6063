package server

import (
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/proto"
)

// TestClientNotReadingStallsNoOne has one client pipeline reads of a large
// node and never read the replies, so that its socket fills, and then
// requires another client's calls to go on. A connection whose replies
// the client does not take must not keep outstanding-request slots: the
// server takes its requests and queues their replies (up to the queue's
// bound, when the connection is closed), as ZooKeeper does. Writing the
// replies on the responder held it in the socket's write, its requests
// kept their slots, and once they filled globalOutstandingLimit every
// other client's reader waited too (pings included, so sessions expired).
func TestClientNotReadingStallsNoOne(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.GlobalOutstandingLimit = 20 })
	hog := dial(t, s.Addr().String())
	hog.mustCreate("/big", string(make([]byte, 512<<10)), 0)
	// A write first, so that the reads after it go through the
	// responder (a read with nothing in flight is answered inline by
	// the reader, which then blocks on the full socket itself); then
	// reads whose replies fill the sockets, a pause in which the
	// responder writes them out and blocks, and more requests, each
	// holding an outstanding slot while the responder cannot answer.
	hog.xid++
	batch := proto.AppendRequestFrame(nil, hog.xid, proto.OpSetData, &proto.SetDataRequest{Path: "/big", Data: make([]byte, 512<<10), Version: -1})
	for i := 0; i < 40; i++ { // 20 MB of replies, more than the sockets hold
		hog.xid++
		batch = proto.AppendRequestFrame(batch, hog.xid, proto.OpGetData, &proto.GetDataRequest{Path: "/big"})
	}
	hog.xid++ // again a write first, so that the reads queue behind it
	more := proto.AppendRequestFrame(nil, hog.xid, proto.OpSetData, &proto.SetDataRequest{Path: "/big", Data: []byte("y"), Version: -1})
	for i := 0; i < 40; i++ {
		hog.xid++
		more = proto.AppendRequestFrame(more, hog.xid, proto.OpExists, &proto.ExistsRequest{Path: "/big"})
	}
	go func() {
		hog.nc.SetWriteDeadline(time.Now().Add(20 * time.Second))
		hog.nc.Write(batch) // never reads a reply
		time.Sleep(300 * time.Millisecond)
		hog.nc.Write(more)
	}()
	time.Sleep(600 * time.Millisecond)

	other := dial(t, s.Addr().String())
	done := make(chan proto.ErrCode, 1)
	go func() {
		other.send(proto.OpSetData, &proto.SetDataRequest{Path: "/big", Data: []byte("x"), Version: -1})
		other.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, err := proto.ReadFrame(other.br, nil, 1<<20)
		if err != nil {
			done <- proto.ErrConnectionLoss
			return
		}
		var h proto.ReplyHeader
		h.Decode(proto.NewDecoder(b))
		done <- h.Err
	}()
	select {
	case err := <-done:
		if err != proto.ErrOK {
			t.Fatalf("the other client's setData: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the other client's setData waited 5 s behind a client that does not read its replies")
	}
}
