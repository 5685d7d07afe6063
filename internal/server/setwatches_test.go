package server

import (
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// TestSetWatchesEventsIgnoreACL checks that the events setWatches fires at
// once for changes a reconnecting client missed reach it whatever the
// node's ACL, as ZooKeeper's are (DataTree.setWatches calls
// Watcher.process without the node's ACL, so NIOServerCnxn filters
// nothing). Filtering them would lose the watch altogether: a fired watch
// is not armed again.
func TestSetWatchesEventsIgnoreACL(t *testing.T) {
	s := startServer(t, nil)
	owner := dial(t, s.Addr().String())
	owner.write(proto.AppendRequestFrame(nil, proto.XidAuth, proto.OpAuth,
		&proto.AuthPacket{Scheme: "digest", Auth: []byte("u:p")}))
	if f := owner.next(); f.hdr.Err != proto.ErrOK {
		t.Fatalf("auth: %v", f.hdr.Err)
	}
	private := []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "auth", ID: ""}}}
	for _, p := range []string{"/created", "/changed"} {
		if h, _ := owner.call(proto.OpCreate, &proto.CreateRequest{Path: p, ACL: private}, nil); h.Err != proto.ErrOK {
			t.Fatalf("create %s: %v", p, h.Err)
		}
	}
	h, _ := owner.call(proto.OpSetData, &proto.SetDataRequest{Path: "/changed", Data: []byte("x"), Version: -1}, nil)
	if h.Err != proto.ErrOK {
		t.Fatal(h.Err)
	}

	// A client without the digest comes back with watches it set before
	// the nodes changed (relative zxid 1).
	c := dial(t, s.Addr().String())
	c.write(proto.AppendRequestFrame(nil, proto.XidSetWatches, proto.OpSetWatches, &proto.SetWatches{
		RelativeZxid: 1, DataWatches: []string{"/changed"}, ExistWatches: []string{"/created"}}))
	want := map[string]proto.EventType{"/created": proto.EventNodeCreated, "/changed": proto.EventNodeDataChanged}
	for len(want) > 0 {
		f := c.next()
		if f.hdr.Xid != proto.XidNotification {
			t.Fatalf("got xid %d (err %v) with events still missing: %v", f.hdr.Xid, f.hdr.Err, want)
		}
		var ev proto.WatcherEvent
		if err := proto.Unmarshal(f.body, &ev); err != nil {
			t.Fatal(err)
		}
		if want[ev.Path] != ev.Type {
			t.Fatalf("unexpected event %+v", ev)
		}
		if f.hdr.Zxid != -1 {
			t.Errorf("event %+v has zxid %d, want -1", ev, f.hdr.Zxid)
		}
		delete(want, ev.Path)
	}
	if f := c.next(); f.hdr.Xid != proto.XidSetWatches || f.hdr.Err != proto.ErrOK {
		t.Fatalf("setWatches reply: xid %d err %v", f.hdr.Xid, f.hdr.Err)
	}
}
