package server

import (
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// TestAbandonedReconnectDoesNotMoveSession: a ConnectRequest that its
// client wrote and then gave up on (closing the connection before the
// member read it, as when that member was stopped) must not move the
// session to that member, while a live reconnect does.
func TestAbandonedReconnectDoesNotMoveSession(t *testing.T) {
	sink := &logSink{}
	members := startEnsembleLogged(t, 3, 0, nil, slog.New(slog.NewJSONHandler(sink, nil)))
	a, b := members[0], members[1]
	c := dial(t, a.Addr().String())
	c.mustCreate("/x", "", 0)
	owner := func(s *Server) uint64 {
		s.mu.RLock()
		defer s.mu.RUnlock()
		if ss := s.fsm.Session(c.session); ss != nil {
			return ss.Owner
		}
		return 0
	}
	if got := owner(a); got != uint64(a.cfg.ServerID) {
		t.Fatalf("owner %d after creating the session on member %d", got, a.cfg.ServerID)
	}

	// Abandoned: the request and the close arrive together.
	nc, err := net.DialTimeout("tcp", b.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	nc.Write(proto.AppendRecordFrame(nil, &proto.ConnectRequest{TimeOut: 10000, SessionID: c.session, Passwd: c.passwd}))
	nc.Close()
	sink.waitLog(t, "ignoring a reconnect the client has abandoned", map[string]string{"session": hexSession(c.session)})
	// A write through A, after that, still applies on every member.
	c.mustCreate("/y", "", 0)
	for _, s := range members {
		if got := owner(s); got != uint64(a.cfg.ServerID) {
			t.Fatalf("member %d: owner %d after an abandoned reconnect to %d", s.cfg.ServerID, got, b.cfg.ServerID)
		}
	}

	// A live reconnect to B moves the session.
	rc := redial(t, b.Addr().String(), c.session, c.passwd)
	if rc.session != c.session {
		t.Fatalf("reattach to member %d failed", b.cfg.ServerID)
	}
	if got := owner(b); got != uint64(b.cfg.ServerID) {
		t.Fatalf("owner %d after reattaching on member %d", got, b.cfg.ServerID)
	}
	if h, _ := rc.call(proto.OpCreate, &proto.CreateRequest{Path: "/z", ACL: []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}}, nil); h.Err != proto.ErrOK {
		t.Fatalf("write through the new owner: %v", h.Err)
	}
}
