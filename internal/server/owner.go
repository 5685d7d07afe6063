package server

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/fsm"
	"github.com/paddockhq/paddock/internal/proto"
)

// origin is the member id stamped on the log entries this member proposes
// for its clients (fsm.Entry.Origin), or 0 standalone, where sessions never
// move between members.
func (s *Server) origin() uint64 {
	if s.cfg.Standalone() {
		return 0
	}
	return uint64(s.cfg.ServerID)
}

// moveSession records in the log that session's client now talks to this
// member, and waits until that is applied, before the session is served
// here. From then on a request of the session still on its way from the
// member the client left (a write forwarded to the leader late, say) is
// refused with SESSIONMOVED when applied, so it cannot land after what the
// client does here: ZooKeeper's session owner check. It reports whether the
// move was applied.
func (s *Server) moveSession(id int64) bool {
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.HandshakeTimeout)
	defer cancel()
	c, err := s.propose(ctx, &fsm.Entry{Type: fsm.EntryMoveSession, Session: id, Time: time.Now().UnixMilli(), Origin: s.origin()})
	if err != nil {
		return false
	}
	select {
	case <-c.done:
		return c.res.Err == proto.ErrOK
	case <-ctx.Done():
		return false
	}
}
