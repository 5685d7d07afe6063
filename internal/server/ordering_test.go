package server

import (
	"fmt"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// TestEventBeforeNewData checks ZooKeeper's ordering guarantee: a client that
// holds a watch sees the event before any reply that shows the changed data,
// even when another client's write races with its reads.
func TestEventBeforeNewData(t *testing.T) {
	s := startServer(t, nil)
	w := dial(t, s.Addr().String())
	writer := dial(t, s.Addr().String())
	writer.mustCreate("/x", "0", 0)
	for round := 0; round < 200; round++ {
		h, r := w.call(proto.OpGetData, &proto.GetDataRequest{Path: "/x", Watch: true}, nil)
		if h.Err != proto.ErrOK {
			t.Fatal(h.Err)
		}
		version := r.(*proto.GetDataResponse).Stat.Version
		// The writer changes /x while the watcher keeps reading.
		writer.send(proto.OpSetData, &proto.SetDataRequest{Path: "/x", Data: []byte(fmt.Sprint(round)), Version: -1})
		var events []proto.WatcherEvent
		for {
			h, r := w.call(proto.OpGetData, &proto.GetDataRequest{Path: "/x"}, &events)
			if h.Err != proto.ErrOK {
				t.Fatal(h.Err)
			}
			if got := r.(*proto.GetDataResponse).Stat.Version; got != version {
				if len(events) != 1 || events[0].Type != proto.EventNodeDataChanged {
					t.Fatalf("round %d: saw version %d after %d with events %+v before it", round, got, version, events)
				}
				break
			}
		}
		if f := writer.next(); f.hdr.Err != proto.ErrOK {
			t.Fatal(f.hdr.Err)
		}
	}
}

// TestRepliesInRequestOrder pipelines writes and reads on one connection and
// checks replies come back in order and each read sees the earlier writes.
func TestRepliesInRequestOrder(t *testing.T) {
	s := startServer(t, nil)
	c := dial(t, s.Addr().String())
	c.mustCreate("/p", "", 0)
	var xids []int32
	for i := 0; i < 300; i++ {
		if i%3 == 2 {
			xids = append(xids, c.send(proto.OpGetData, &proto.GetDataRequest{Path: "/p"}))
		} else {
			xids = append(xids, c.send(proto.OpSetData, &proto.SetDataRequest{Path: "/p", Data: []byte{byte(i)}, Version: -1}))
		}
	}
	sets := int32(0)
	for i, xid := range xids {
		f := c.next()
		if f.hdr.Xid != xid {
			t.Fatalf("reply %d has xid %d, want %d", i, f.hdr.Xid, xid)
		}
		if i%3 == 2 {
			r, err := proto.DecodeResponse(proto.OpGetData, f.body)
			if err != nil {
				t.Fatal(err)
			}
			// A read waits for the session's earlier writes.
			if v := r.(*proto.GetDataResponse).Stat.Version; v != sets {
				t.Fatalf("read %d saw version %d, want %d", i, v, sets)
			}
		} else {
			sets++
		}
	}
}

// TestSessionSurvivesRestart closes the server and starts another on the same
// data: a client reattaching with its id and password keeps its ephemeral.
func TestSessionSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, func(c *configT) { c.DataDir, c.DataLogDir = dir, dir })
	c := dial(t, s.Addr().String())
	c.mustCreate("/eph", "x", proto.FlagEphemeral)
	id, pw := c.session, c.passwd
	s.Close()
	s2 := startServer(t, func(c *configT) { c.DataDir, c.DataLogDir = dir, dir })
	c2 := dial(t, s2.Addr().String()) // a second session, to read with
	h, _ := c2.call(proto.OpExists, &proto.ExistsRequest{Path: "/eph"}, nil)
	if h.Err != proto.ErrOK {
		t.Fatalf("ephemeral gone after restart: %v", h.Err)
	}
	rc := redial(t, s2.Addr().String(), id, pw)
	if rc.session != id {
		t.Fatalf("reattach got session %s, want %s", hexSession(rc.session), hexSession(id))
	}
	h, r := rc.call(proto.OpGetEphemerals, &proto.GetEphemeralsRequest{PrefixPath: "/"}, nil)
	if h.Err != proto.ErrOK || len(r.(*proto.GetEphemeralsResponse).Ephemerals) != 1 {
		t.Fatalf("getEphemerals after reattach: %v %+v", h.Err, r)
	}
}

// TestWriteReplyBeforeLaterEvents checks that a connection sees its
// writes' replies and its watch events in the order of the log, as
// ZooKeeper sends them (FinalRequestProcessor answers each write before the
// next one is applied): the reply of a write applied before another
// client's change comes before that change's event. Apply queues a write's
// reply itself; when the connection's responder queued it, an event of an
// entry applied right after (in the same batch) could overtake it.
func TestWriteReplyBeforeLaterEvents(t *testing.T) {
	s := startServer(t, nil)
	w := dial(t, s.Addr().String())
	other := dial(t, s.Addr().String())
	w.mustCreate("/a", "", 0)
	w.mustCreate("/b", "", 0)
	const writes = 40
	for round := 0; round < 30; round++ {
		if h, _ := w.call(proto.OpExists, &proto.ExistsRequest{Path: "/b", Watch: true}, nil); h.Err != proto.ErrOK {
			t.Fatalf("round %d: exists: %v", round, h.Err)
		}
		for i := 0; i < writes; i++ {
			w.send(proto.OpSetData, &proto.SetDataRequest{Path: "/a", Data: []byte{byte(i)}, Version: -1})
			if i == writes/2 {
				other.send(proto.OpSetData, &proto.SetDataRequest{Path: "/b", Data: []byte{byte(round)}, Version: -1})
			}
		}
		var event int64 // the event's zxid, once seen
		for replies := 0; replies < writes; {
			f := w.next()
			if f.hdr.Xid == proto.XidNotification {
				event = f.hdr.Zxid
				continue
			}
			if f.hdr.Err != proto.ErrOK {
				t.Fatalf("round %d: setData: %v", round, f.hdr.Err)
			}
			if event != 0 && f.hdr.Zxid < event {
				t.Fatalf("round %d: the reply of the write at zxid 0x%x came after the event of zxid 0x%x", round, f.hdr.Zxid, event)
			}
			replies++
		}
		if event == 0 {
			// The change to /b came after the last reply: its event follows.
			if f := w.next(); f.hdr.Xid != proto.XidNotification {
				t.Fatalf("round %d: got xid %d, want the event", round, f.hdr.Xid)
			}
		}
		if f := other.next(); f.hdr.Err != proto.ErrOK {
			t.Fatal(f.hdr.Err)
		}
	}
}
