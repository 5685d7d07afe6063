package server

import (
	"context"
	"errors"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// TestShutdownFinishesInFlightWrites pipelines writes, shuts the server down
// once it has read them all, and checks that every one was answered, that
// the connection then closed, and that all of them are in the restarted
// server, with the session kept open.
func TestShutdownFinishesInFlightWrites(t *testing.T) {
	const n = 300
	dir := t.TempDir()
	cfg := func(c *configT) { c.DataDir, c.DataLogDir = dir, dir }
	s := startServer(t, cfg)
	c := dial(t, s.Addr().String())
	c.mustCreate("/eph", "", proto.FlagEphemeral)
	base := s.stats.received.Load()
	open := []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}
	var batch []byte
	for i := range n {
		c.xid++
		batch = proto.AppendRequestFrame(batch, c.xid, proto.OpCreate, &proto.CreateRequest{Path: "/n" + strconv.Itoa(i), ACL: open})
	}
	// Nothing applies while the state lock is held: the writes stay in
	// flight until Shutdown has begun.
	s.mu.Lock()
	locked := true
	defer func() {
		if locked {
			s.mu.Unlock()
		}
	}()
	c.write(batch)
	deadline := time.Now().Add(10 * time.Second)
	for s.stats.received.Load() < base+n {
		if time.Now().After(deadline) {
			t.Fatalf("server read %d of %d requests", s.stats.received.Load()-base, n)
		}
		time.Sleep(time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(ctx, false) }()
	for !s.draining.Load() {
		if time.Now().After(deadline) {
			t.Fatal("Shutdown did not start draining")
		}
		time.Sleep(time.Millisecond)
	}
	locked = false
	s.mu.Unlock()
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for i := range n {
		f := c.next()
		if f.hdr.Err != proto.ErrOK {
			t.Fatalf("reply %d: error %v", i, f.hdr.Err)
		}
	}
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last reply: %v, want EOF", err)
	}

	s2 := startServer(t, cfg)
	r := dial(t, s2.Addr().String())
	h, resp := r.call(proto.OpGetAllChildrenNumber, &proto.GetAllChildrenNumberRequest{Path: "/"}, nil)
	// n nodes, /eph, and /zookeeper with its two children.
	if h.Err != proto.ErrOK || resp.(*proto.GetAllChildrenNumberResponse).TotalNumber != n+4 {
		t.Fatalf("after restart: %v %+v, want %d nodes", h.Err, resp, n+4)
	}
	if h, _ := r.call(proto.OpExists, &proto.ExistsRequest{Path: "/eph"}, nil); h.Err != proto.ErrOK {
		t.Fatalf("ephemeral of a session kept open: %v", h.Err)
	}
}

// TestShutdownClosesSessionsWhenAsked checks that Shutdown(ctx, true) closes
// the sessions of connected clients through the log: their ephemerals are
// gone after a restart and the session cannot be resumed.
func TestShutdownClosesSessionsWhenAsked(t *testing.T) {
	dir := t.TempDir()
	cfg := func(c *configT) { c.DataDir, c.DataLogDir = dir, dir }
	s := startServer(t, cfg)
	c := dial(t, s.Addr().String())
	c.mustCreate("/eph", "", proto.FlagEphemeral)
	c.mustCreate("/kept", "", 0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx, true); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	s2 := startServer(t, cfg)
	r := dial(t, s2.Addr().String())
	if h, _ := r.call(proto.OpExists, &proto.ExistsRequest{Path: "/eph"}, nil); h.Err != proto.ErrNoNode {
		t.Fatalf("ephemeral after a shutdown that closed sessions: %v, want NoNode", h.Err)
	}
	if h, _ := r.call(proto.OpExists, &proto.ExistsRequest{Path: "/kept"}, nil); h.Err != proto.ErrOK {
		t.Fatalf("persistent node: %v", h.Err)
	}
	s2.mu.RLock()
	open := s2.fsm.Session(c.session) != nil
	s2.mu.RUnlock()
	if open {
		t.Fatalf("session %s still open after Shutdown(ctx, true)", hexSession(c.session))
	}
}
