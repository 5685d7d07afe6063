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
