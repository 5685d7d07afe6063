package server

import (
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// waitGone polls until path no longer exists, failing after a deadline.
// Events that arrive meanwhile are appended to events.
func waitGone(t *testing.T, c *rawClient, path string, events *[]proto.WatcherEvent) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		h, _ := c.call(proto.OpExists, &proto.ExistsRequest{Path: path}, events)
		if h.Err == proto.ErrNoNode {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s still exists after 10s", path)
}

// TestReaperDeletesThroughTheLog checks that empty containers that had
// children and expired TTL nodes are deleted, that the deletion is a log
// entry (it fires watches and moves the zxid), and that a container that
// never had children and a TTL node that is not due are kept.
func TestReaperDeletesThroughTheLog(t *testing.T) {
	s := startServer(t, func(c *configT) {
		c.ContainerCheckInterval = 50 * time.Millisecond
		c.ExtendedTypesEnabled = true
	})
	c := dial(t, s.Addr().String())
	open := []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}
	create := func(op proto.OpCode, req proto.Request) {
		t.Helper()
		if h, _ := c.call(op, req, nil); h.Err != proto.ErrOK {
			t.Fatalf("%v: %v", op, h.Err)
		}
	}
	create(proto.OpCreateContainer, &proto.CreateRequest{Path: "/used", ACL: open, Flags: proto.FlagContainer})
	create(proto.OpCreateContainer, &proto.CreateRequest{Path: "/unused", ACL: open, Flags: proto.FlagContainer})
	create(proto.OpCreate, &proto.CreateRequest{Path: "/used/child", ACL: open})
	create(proto.OpCreateTTL, &proto.CreateTTLRequest{Path: "/short", ACL: open, Flags: proto.FlagPersistentWithTTL, TTL: 200})
	create(proto.OpCreateTTL, &proto.CreateTTLRequest{Path: "/long", ACL: open, Flags: proto.FlagPersistentWithTTL, TTL: 3600_000})

	// A watch on the container proves the deletion went through apply.
	var events []proto.WatcherEvent
	if h, _ := c.call(proto.OpExists, &proto.ExistsRequest{Path: "/used", Watch: true}, nil); h.Err != proto.ErrOK {
		t.Fatal(h.Err)
	}
	if h, _ := c.call(proto.OpDelete, &proto.DeleteRequest{Path: "/used/child", Version: -1}, &events); h.Err != proto.ErrOK {
		t.Fatal(h.Err)
	}
	waitGone(t, c, "/used", &events)
	waitGone(t, c, "/short", &events)
	found := false
	for _, ev := range events {
		if ev.Type == proto.EventNodeDeleted && ev.Path == "/used" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no NodeDeleted event for the reaped container; events: %+v", events)
	}
	for _, p := range []string{"/unused", "/long"} {
		if h, _ := c.call(proto.OpExists, &proto.ExistsRequest{Path: p}, nil); h.Err != proto.ErrOK {
			t.Errorf("%s: %v, want it kept", p, h.Err)
		}
	}
}
