package server

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/fsm"
	"github.com/paddockhq/paddock/internal/proto"
)

// startPreparedEnsemble is startEnsemble (voters only) with prepare called
// on every member before it starts, for fields a running server reads.
func startPreparedEnsemble(t *testing.T, voters int, prepare func(*Server)) []*Server {
	t.Helper()
	var servers []config.Server
	for id := 1; id <= voters; id++ {
		servers = append(servers, config.Server{ID: int64(id), Role: config.Participant,
			Addrs: []config.PeerAddr{{Host: "127.0.0.1", QuorumPort: freePort(t), ElectionPort: freePort(t)}}})
	}
	var out []*Server
	for id := 1; id <= voters; id++ {
		cfg := config.Default()
		cfg.ClientPort = 0
		cfg.ClientPortAddress = "127.0.0.1"
		cfg.DataDir = t.TempDir()
		cfg.DataLogDir = cfg.DataDir
		cfg.TickTime = 200 * time.Millisecond
		cfg.MinSessionTimeout, cfg.MaxSessionTimeout = 400*time.Millisecond, 20*time.Second
		cfg.ServerID = int64(id)
		cfg.Servers = servers
		s, err := New(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		prepare(s)
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out = append(out, s)
	}
	pollUntil(t, "every member to serve", func() bool {
		for _, s := range out {
			if !s.serving.Load() {
				return false
			}
		}
		return true
	})
	return out
}

// pollUntil polls cond until it holds, failing after 20 seconds.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestStaleLeaderExpiryDropped is a leader that decided a session's expiry
// and stalled (SIGSTOP, a frozen VM) before proposing it, while another
// member took over: when it resumes, its raft knows the new leader and
// forwards the close to it. The close must not apply in the new term, on
// any member: the session stays open. The stall is the expiry hook
// (Server.expiryPropose), which the test arms on the leader.
func TestStaleLeaderExpiryDropped(t *testing.T) {
	var stall atomic.Pointer[func(*Server)]
	ens := startPreparedEnsemble(t, 3, func(s *Server) {
		s.expiryPropose = func(ctx context.Context, e *fsm.Entry) (*call, error) {
			if f := stall.Load(); f != nil {
				(*f)(s)
			}
			return s.propose(ctx, e)
		}
	})
	var leader, client, next *Server
	for _, s := range ens {
		switch {
		case s.node.Status().IsLeader:
			leader = s
		case client == nil:
			client = s
		default:
			next = s
		}
	}
	if leader == nil || client == nil || next == nil {
		t.Fatal("no leader and two followers")
	}
	c := dial(t, client.Addr().String())
	c.mustCreate("/eph", "", proto.FlagEphemeral)
	id := c.session

	// Every member has applied all of the leader's log, so the member
	// asked to take over wins the election.
	last := leader.node.Status().LastIndex
	pollUntil(t, "every member to apply the leader's log", func() bool {
		for _, s := range ens {
			if s.node.AppliedIndex() < last {
				return false
			}
		}
		return true
	})
	term := leader.node.Term()
	var stampedTerm uint64
	takeOver := func(s *Server) {
		if s != leader {
			return
		}
		// Stalled with the expiry decided: meanwhile next takes over,
		// and this member's raft hears of it.
		next.node.Step(raftpb.Message{Type: raftpb.MsgTimeoutNow, From: uint64(leader.cfg.ServerID),
			To: uint64(next.cfg.ServerID), Term: term})
		pollUntil(t, "the old leader to follow a new one", func() bool {
			st := leader.node.Status()
			return st.Lead != 0 && !st.IsLeader && st.Term > term
		})
	}
	stall.Store(&takeOver)

	e := &fsm.Entry{Type: fsm.EntryCloseSession, Session: id, Time: time.Now().UnixMilli()}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	closing, err := leader.proposeExpiry(ctx, e)
	stall.Store(nil)
	stampedTerm = e.Term
	if err != nil {
		t.Fatalf("proposing the expiry: %v", err)
	}
	// A barrier behind the close on the same path (the old leader's
	// stream to the new one): once it is applied, so is the close, or it
	// was dropped.
	anyone := []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}
	barrier, err := leader.propose(ctx, &fsm.Entry{Type: fsm.EntryTxn, Time: time.Now().UnixMilli(),
		Ops: []fsm.Op{{Op: proto.OpCreate, Path: "/barrier", ACL: anyone}}})
	if err != nil {
		t.Fatalf("proposing the barrier: %v", err)
	}
	<-closing.done
	<-barrier.done
	for _, s := range ens {
		pollUntil(t, "the barrier on every member", func() bool {
			s.mu.RLock()
			defer s.mu.RUnlock()
			return s.fsm.Tree().Get("/barrier") != nil
		})
		s.mu.RLock()
		open, eph := s.fsm.Session(id) != nil, s.fsm.Tree().Get("/eph") != nil
		s.mu.RUnlock()
		if !open || !eph {
			t.Errorf("member %d: session open %v, ephemeral there %v: the close proposed in term %d (stamped %d) applied after the leader changed",
				s.cfg.ServerID, open, eph, term, stampedTerm)
		}
	}
	if closing.res.Err != proto.ErrConnectionLoss {
		t.Errorf("the stale close completed with %v, want a lost connection", closing.res.Err)
	}
}

// TestExpiryRefusedWhenNotLeading checks that a member that does not
// decide expiry (a follower, or a leader that just lost its term) refuses
// to propose a session's close.
func TestExpiryRefusedWhenNotLeading(t *testing.T) {
	var proposed atomic.Int32
	ens := startPreparedEnsemble(t, 3, func(s *Server) {
		s.expiryPropose = func(ctx context.Context, e *fsm.Entry) (*call, error) {
			proposed.Add(1)
			return s.propose(ctx, e)
		}
	})
	for _, s := range ens {
		if s.node.Status().IsLeader {
			continue
		}
		c, err := s.proposeExpiry(context.Background(), &fsm.Entry{Type: fsm.EntryCloseSession, Session: 42, Time: time.Now().UnixMilli()})
		if err == nil || c != nil {
			t.Errorf("member %d, a follower, proposed an expiry", s.cfg.ServerID)
		}
	}
	if n := proposed.Load(); n != 0 {
		t.Errorf("%d expiries proposed by followers", n)
	}
}
