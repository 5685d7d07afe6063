package server

import (
	"slices"
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
		RelativeZxid: 1, DataWatches: []string{"/changed"}, ExistWatches: []string{"/created"},
		ChildWatches: []string{}}))
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

// TestSetWatchesNullList checks a setWatches or setWatches2 with a null
// list (vector count -1) against ZooKeeper 3.8, which iterates the decoded
// null list, fails and answers MARSHALLINGERROR on a connection it keeps
// open: the lists before the null one have taken effect (their watches
// armed, their events sent before the answer), the ones after it have not.
func TestSetWatchesNullList(t *testing.T) {
	s := startServer(t, nil)
	owner := dial(t, s.Addr().String())
	for _, p := range []string{"/d", "/c"} {
		owner.mustCreate(p, "", 0)
	}
	rel := s.lastZxid()
	none := []string{}
	tests := []struct {
		name   string
		op     proto.OpCode
		req    proto.Request
		err    proto.ErrCode
		events []string // paths of the events fired at once, in order
		armed  []string
		unset  []string
	}{
		{"setWatches exist=null", proto.OpSetWatches, &proto.SetWatches{RelativeZxid: rel,
			DataWatches: []string{"/d", "/gone"}, ChildWatches: []string{"/c"}},
			proto.ErrMarshallingError, []string{"/gone"}, []string{"/d"}, []string{"/c"}},
		{"setWatches data=null", proto.OpSetWatches, &proto.SetWatches{RelativeZxid: rel,
			ExistWatches: []string{"/x"}, ChildWatches: []string{"/c"}},
			proto.ErrMarshallingError, nil, nil, []string{"/x", "/c"}},
		{"setWatches child=null", proto.OpSetWatches, &proto.SetWatches{RelativeZxid: rel,
			DataWatches: []string{"/d"}, ExistWatches: []string{"/x"}},
			proto.ErrMarshallingError, nil, []string{"/d", "/x"}, nil},
		{"setWatches2 persistent=null", proto.OpSetWatches2, &proto.SetWatches2{RelativeZxid: rel,
			DataWatches: []string{"/d"}, ExistWatches: []string{"/x"}, ChildWatches: []string{"/c"},
			PersistentRecursiveWatches: []string{"/r"}},
			proto.ErrMarshallingError, nil, []string{"/d", "/x", "/c"}, []string{"/r"}},
		{"setWatches2 recursive=null", proto.OpSetWatches2, &proto.SetWatches2{RelativeZxid: rel,
			DataWatches: none, ExistWatches: none, ChildWatches: none, PersistentWatches: []string{"/p"}},
			proto.ErrMarshallingError, nil, []string{"/p"}, nil},
		{"setWatches2 empty lists", proto.OpSetWatches2, &proto.SetWatches2{RelativeZxid: rel,
			DataWatches: none, ExistWatches: none, ChildWatches: []string{"/c"},
			PersistentWatches: none, PersistentRecursiveWatches: []string{"/r"}},
			proto.ErrOK, nil, []string{"/c", "/r"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, s.Addr().String())
			c.write(proto.AppendRequestFrame(nil, proto.XidSetWatches, tc.op, tc.req))
			var events []string
			f := c.next()
			for ; f.hdr.Xid == proto.XidNotification; f = c.next() {
				var ev proto.WatcherEvent
				if err := proto.Unmarshal(f.body, &ev); err != nil {
					t.Fatal(err)
				}
				events = append(events, ev.Path)
			}
			if f.hdr.Xid != proto.XidSetWatches || f.hdr.Err != tc.err || len(f.body) != 0 {
				t.Fatalf("reply %+v with %d body bytes, want xid %d, err %v, no body",
					f.hdr, len(f.body), proto.XidSetWatches, tc.err)
			}
			if !slices.Equal(events, tc.events) {
				t.Errorf("events fired for %q, want %q", events, tc.events)
			}
			// The connection stays open, and the watches before the null
			// list are armed.
			for _, p := range append(slices.Clone(tc.armed), tc.unset...) {
				h, _ := c.call(proto.OpCheckWatches, &proto.CheckWatchesRequest{Path: p, Type: proto.WatcherAny}, nil)
				want := proto.ErrNoWatcher
				if slices.Contains(tc.armed, p) {
					want = proto.ErrOK
				}
				if h.Err != want {
					t.Errorf("checkWatches %s: %v, want %v", p, h.Err, want)
				}
			}
		})
	}
}
