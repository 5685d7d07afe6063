package server

import (
	"reflect"
	"slices"
	"testing"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/tree"
)

func TestJavaTrim(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"/", "/"},
		{" / ", "/"},
		{"\x00/\x1f", "/"},
		{"\x01", ""},
		{"\t\n\v\f\r ", ""},
		{"\u0085", "\u0085"}, // NEL: Unicode space, above U+0020
		{"\u00a0/", "\u00a0/"},
		{"\u3000", "\u3000"},
		{" /a b ", "/a b"},
	} {
		if got := javaTrim(tc.in); got != tc.want {
			t.Errorf("javaTrim(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestGetEphemeralsPrefix: the prefix stands for every ephemeral of the
// session when Java's String.trim leaves it empty or "/".
func TestGetEphemeralsPrefix(t *testing.T) {
	s := startServer(t, nil)
	c := dial(t, s.Addr().String())
	c.mustCreate("/e", "", proto.FlagEphemeral)
	c.mustCreate("/f", "", proto.FlagEphemeral)
	all, none := []string{"/e", "/f"}, []string{}
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"", all}, {" / ", all}, {"\x01", all}, {"\x00/\x1f", all},
		{"/e", []string{"/e"}}, {"\u0085", none}, {"\u00a0/", none}, {"\u3000", none},
	} {
		h, r := c.call(proto.OpGetEphemerals, &proto.GetEphemeralsRequest{PrefixPath: tc.prefix}, nil)
		if h.Err != proto.ErrOK {
			t.Fatalf("getEphemerals %q: %v", tc.prefix, h.Err)
		}
		got := r.(*proto.GetEphemeralsResponse).Ephemerals
		slices.Sort(got)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("getEphemerals %q = %q, want %q", tc.prefix, got, tc.want)
		}
	}
}

// TestGetAllChildrenNumberEmptyPath: ZooKeeper counts one more node for ""
// than for "/" (the root's "/" key starts with "/").
func TestGetAllChildrenNumberEmptyPath(t *testing.T) {
	s := startServer(t, nil)
	c := dial(t, s.Addr().String())
	c.mustCreate("/a", "", 0)
	c.mustCreate("/a/b", "", 0)
	count := func(path string) int32 {
		h, r := c.call(proto.OpGetAllChildrenNumber, &proto.GetAllChildrenNumberRequest{Path: path}, nil)
		if h.Err != proto.ErrOK {
			t.Fatalf("getAllChildrenNumber %q: %v", path, h.Err)
		}
		return r.(*proto.GetAllChildrenNumberResponse).TotalNumber
	}
	// "/" holds /zookeeper, /zookeeper/quota, /zookeeper/config, /a, /a/b.
	if root, empty, a := count("/"), count(""), count("/a"); root != 5 || empty != 6 || a != 1 {
		t.Errorf(`counts of "/", "" and "/a": %d %d %d, want 5 6 1`, root, empty, a)
	}
}

// TestMultiCreateFlags: the create ops of a multi are rebuilt as ZooKeeper's
// MultiOperationRecord does.
func TestMultiCreateFlags(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.ExtendedTypesEnabled = true })
	c := dial(t, s.Addr().String())
	create := func(op proto.OpCode, path string, flags int32) proto.MultiOp {
		return proto.MultiOp{Op: op, Path: path, ACL: tree.OpenACL, Flags: flags, TTL: 100}
	}

	// The container flag makes a createContainer of create, create2 and
	// createTTL (whose TTL is dropped): a container, answered with a Stat.
	h, r := c.call(proto.OpMulti, &proto.MultiRequest{Ops: []proto.MultiOp{
		create(proto.OpCreate, "/c1", proto.FlagContainer),
		create(proto.OpCreate2, "/c2", proto.FlagContainer),
		create(proto.OpCreateTTL, "/c3", proto.FlagContainer),
		create(proto.OpCreate, "/p", proto.FlagPersistent),
	}}, nil)
	if h.Err != proto.ErrOK {
		t.Fatalf("multi: %v", h.Err)
	}
	res := r.(*proto.MultiResponse).Results
	for i, want := range []proto.OpCode{proto.OpCreate2, proto.OpCreate2, proto.OpCreate2, proto.OpCreate} {
		if res[i].Op != want || res[i].Err != proto.ErrOK || (want == proto.OpCreate2) != (res[i].Stat != nil) {
			t.Errorf("result %d: %+v, want type %v", i, res[i], want)
		}
	}
	s.mu.RLock()
	containers := s.fsm.Tree().Containers()
	s.mu.RUnlock()
	if !reflect.DeepEqual(containers, []string{"/c1", "/c2", "/c3"}) {
		t.Errorf("containers %v, want /c1 /c2 /c3", containers)
	}

	// A TTL mode or flags that are no mode in a create, create2 or
	// createContainer op fail the whole multi: MarshallingError, no body,
	// nothing created.
	for _, bad := range []proto.MultiOp{
		create(proto.OpCreate, "/x", proto.FlagPersistentWithTTL),
		create(proto.OpCreate2, "/x", proto.FlagPersistentSequentialWithTTL),
		create(proto.OpCreateContainer, "/x", proto.FlagPersistentWithTTL),
		create(proto.OpCreate, "/x", 7),
		create(proto.OpCreate2, "/x", -1),
		create(proto.OpCreateContainer, "/x", 7),
	} {
		xid := c.send(proto.OpMulti, &proto.MultiRequest{Ops: []proto.MultiOp{create(proto.OpCreate, "/y", 0), bad}})
		f := c.next()
		if f.hdr.Xid != xid || f.hdr.Err != proto.ErrMarshallingError || len(f.body) != 0 {
			t.Errorf("op %v flags %d: xid %d err %v, %d body bytes; want MarshallingError, no body",
				bad.Op, bad.Flags, f.hdr.Xid, f.hdr.Err, len(f.body))
		}
	}
	// createTTL with flags that are no mode is a create that fails alone.
	h, r = c.call(proto.OpMulti, &proto.MultiRequest{Ops: []proto.MultiOp{create(proto.OpCreateTTL, "/x", 7)}}, nil)
	if h.Err != proto.ErrOK || r.(*proto.MultiResponse).Results[0].Err != proto.ErrBadArguments {
		t.Errorf("createTTL with flags 7: %v %+v, want the op's BadArguments", h.Err, r)
	}
	h, r = c.call(proto.OpGetChildren, &proto.GetChildrenRequest{Path: "/"}, nil)
	kids := r.(*proto.GetChildrenResponse).Children
	slices.Sort(kids)
	if !reflect.DeepEqual(kids, []string{"c1", "c2", "c3", "p", "zookeeper"}) {
		t.Errorf("children of /: %v", kids)
	}
}

// TestMyID255Ephemerals: with extended types off, myid 255 is allowed and
// its session ids have the top byte 0xFF, the TTL marker; the session's
// ephemerals are still ephemerals.
func TestMyID255Ephemerals(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.ServerID = 255 })
	c := dial(t, s.Addr().String())
	if uint64(c.session)>>56 != 0xFF {
		t.Fatalf("session %s: top byte not 0xFF", hexSession(c.session))
	}
	c.mustCreate("/e", "", proto.FlagEphemeral)
	h, r := c.call(proto.OpExists, &proto.ExistsRequest{Path: "/e"}, nil)
	if h.Err != proto.ErrOK || r.(*proto.StatResponse).Stat.EphemeralOwner != c.session {
		t.Errorf("exists /e: %v %+v, want the session as owner", h.Err, r)
	}
	h, r = c.call(proto.OpGetEphemerals, &proto.GetEphemeralsRequest{PrefixPath: "/"}, nil)
	if h.Err != proto.ErrOK || !reflect.DeepEqual(r.(*proto.GetEphemeralsResponse).Ephemerals, []string{"/e"}) {
		t.Errorf("getEphemerals: %v %+v", h.Err, r)
	}
	if h, _ := c.call(proto.OpCreate, &proto.CreateRequest{Path: "/e/c", ACL: tree.OpenACL}, nil); h.Err != proto.ErrNoChildrenForEphemerals {
		t.Errorf("child of /e: %v, want NoChildrenForEphemerals", h.Err)
	}
	c.call(proto.OpCloseSession, nil, nil)
	other := dial(t, s.Addr().String())
	if h, _ := other.call(proto.OpExists, &proto.ExistsRequest{Path: "/e"}, nil); h.Err != proto.ErrNoNode {
		t.Errorf("exists /e after its session closed: %v, want NoNode", h.Err)
	}
}
