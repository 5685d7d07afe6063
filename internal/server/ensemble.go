package server

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/raftnode"
)

// An ensemble is several servers whose raft nodes form one group. Every
// member applies every entry; the member a client is connected to proposes
// its writes (raft forwards them to the leader) and answers once it has
// applied them itself. Only the leader expires sessions; followers tell it,
// every half tick, which sessions their clients kept alive. A member that
// knows no leader does not serve: it closes its clients' connections so
// that they move to a member that does.

// members returns the raft voters and learners of the configuration.
func members(cfg *config.Config) (voters, learners []uint64) {
	if cfg.Standalone() {
		return []uint64{uint64(cfg.ServerID)}, nil
	}
	for _, s := range cfg.Servers {
		if s.Role == config.Observer || (s.ID == cfg.ServerID && cfg.PeerType == config.Observer) {
			learners = append(learners, uint64(s.ID))
		} else {
			voters = append(voters, uint64(s.ID))
		}
	}
	return voters, learners
}

// peerAddr returns the address peers reach a server at: its first
// host:quorumPort. The election port is not used: raft elects over the
// same streams.
func peerAddr(s config.Server) string {
	a := s.Addrs[0]
	return net.JoinHostPort(a.Host, strconv.Itoa(a.QuorumPort))
}

// clusterID names the ensemble by its member ids, so that a member of
// another ensemble reaching this one by mistake is refused.
func clusterID(cfg *config.Config) string {
	ids := make([]string, 0, len(cfg.Servers))
	for _, s := range cfg.Servers {
		ids = append(ids, strconv.FormatInt(s.ID, 10))
	}
	return "paddock:" + strings.Join(ids, ",")
}

// Application messages between members.
const appSessionTouch byte = 1

// onApp receives session liveness from a follower: the leader pushes the
// deadlines of those sessions.
func (s *Server) onApp(from uint64, data []byte) {
	if len(data) < 1 || data[0] != appSessionTouch || (len(data)-1)%8 != 0 {
		s.log.Warn("ignoring a malformed message from a peer", "from", from, "bytes", len(data))
		return
	}
	now := time.Now()
	for b := data[1:]; len(b) >= 8; b = b[8:] {
		if e := s.tracker.Get(int64(binary.BigEndian.Uint64(b))); e != nil {
			s.tracker.Touch(e, now)
		}
	}
}

// touchLoop sends the leader, every half tick, the sessions whose clients
// were heard from on this member since the last time.
func (s *Server) touchLoop() {
	s.every(s.cfg.TickTime/2, func(time.Time) { s.touchLeader() })
}

// touchLeader sends the leader the sessions heard from since the last call.
func (s *Server) touchLeader() {
	st := s.node.Status()
	var ids []int64
	s.connMu.Lock()
	for c := range s.conns {
		if c.active.Swap(false) && c.sessionID != 0 {
			ids = append(ids, c.sessionID)
		}
	}
	ids = append(ids, s.closedActive...)
	s.closedActive = s.closedActive[:0]
	s.connMu.Unlock()
	if len(ids) == 0 || st.IsLeader || st.Lead == 0 {
		return
	}
	msg := make([]byte, 1, 1+8*len(ids))
	msg[0] = appSessionTouch
	for _, id := range ids {
		msg = binary.BigEndian.AppendUint64(msg, uint64(id))
	}
	s.node.SendApp(st.Lead, msg)
}

// leaderEvent is a change of leader as raft reported it.
type leaderEvent struct {
	lead     uint64
	isLeader bool
}

// onLeaderChange is raftnode's hook; it runs on raft's goroutine, so it
// only hands the event to leaderLoop (the newest event wins).
func (s *Server) onLeaderChange(lead uint64, isLeader bool) {
	// A new leader gives every session a fresh timeout before its expiry
	// loop may look at the deadlines, which were kept only for the
	// sessions of this member's own clients.
	if isLeader {
		s.tracker.ResetAll(time.Now())
	}
	s.expires.Store(isLeader)
	ev := leaderEvent{lead, isLeader}
	for {
		select {
		case s.leaderc <- ev:
			return
		default:
		}
		select {
		case <-s.leaderc:
		default:
		}
	}
}

// leaderLoop follows leader changes: proposals in flight may be lost with
// the old leader, so they fail (their clients see a lost connection and
// the outcome is unknown, as in ZooKeeper); without a leader the member
// stops serving; with one it serves again once it has applied everything
// the leader had committed; a new leader gives every session a fresh
// timeout.
func (s *Server) leaderLoop() {
	defer s.wg.Done()
	var ev leaderEvent
	var retry <-chan time.Time
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.node.Done():
			return // stopped by a failure: onNodeStop stopped serving
		case ev = <-s.leaderc:
			s.failPending()
			if ev.lead == 0 {
				if s.serving.Swap(false) {
					s.log.Warn("no leader: not serving until one is elected; closing client connections")
					s.closeClients()
				}
				retry = nil
				continue
			}
			if ev.isLeader {
				s.log.Info("leading the ensemble", "sessions", s.tracker.Len())
			} else {
				s.log.Info("following a new leader", "leader", ev.lead)
			}
		case <-retry:
			retry = nil
		}
		if ev.lead == 0 || s.serving.Load() {
			continue
		}
		// Catch up with what the leader has committed before serving. A
		// read-index request can be lost with a stream: ask again soon.
		election, _ := s.cfg.RaftTiming()
		ctx, cancel := context.WithTimeout(s.ctx, max(time.Second, 4*election))
		idx, err := s.node.ReadIndex(ctx)
		if err == nil {
			err = s.node.WaitApplied(ctx, idx)
		}
		cancel()
		if err != nil {
			s.log.Warn("catching up with the leader failed; retrying", "leader", ev.lead, "err", err)
			retry = time.After(100 * time.Millisecond)
			continue
		}
		if st := s.node.Status(); st.Lead == ev.lead {
			if !ev.isLeader {
				s.showConfig(time.Now()) // synced with a leader, as a ZooKeeper learner
			}
			s.serving.Store(true)
			if s.node.Err() != nil {
				// The node failed meanwhile, and onNodeStop may have
				// cleared serving before it was set: a failure is
				// recorded (Err) before onNodeStop runs.
				s.serving.Store(false)
				s.closeClients()
				return
			}
			s.log.Info("serving", "mode", s.mode(), "leader", ev.lead, "zxid", fmt.Sprintf("0x%x", s.lastZxid()))
		}
	}
}

// onNodeStop is raftnode's hook for a node that stopped by itself: its WAL
// could not be written or synced, or a snapshot could not be installed. The
// member can neither apply nor vouch for anything any more, so it stops
// serving for good, in an ensemble or standalone: its clients lose their
// connections and move to a member that serves (rather than keep getting
// pings and stale reads while the leader, no longer told of their
// activity, expires their sessions), new connections are closed, and the
// requests waiting for proposals fail with a lost connection. It runs on
// the node's goroutine and does not block. Only a restart (after fixing the
// disk) brings the member back.
func (s *Server) onNodeStop(err error) {
	s.expires.Store(false)
	s.serving.Store(false)
	s.log.Error("raft node failed: this server no longer serves; closing client connections and failing pending requests; restart it once the cause is fixed",
		"err", err)
	s.failPending()
	s.closeClients()
}

// nextReqSeq returns the low 48 bits of the next proposal's ReqID (the
// server id is above them), never 0. The sequence starts at a random value
// for every Server: a member restarted with writes of its previous run
// still on their way through the log must not take one of them for a
// request of its own.
func (s *Server) nextReqSeq() uint64 {
	for {
		if s.reqSeq.Load() == 0 {
			s.reqSeq.CompareAndSwap(0, mathrand.Uint64()|1)
		}
		if seq := s.reqSeq.Add(1) & (1<<48 - 1); seq != 0 {
			return seq
		}
	}
}

// errNotExpiring refuses a session's expiry on a member that does not, or
// no longer, decide expiry (Server.expires).
var errNotExpiring = errors.New("server: not deciding session expiry (not leading)")

// failPending completes every proposal this member is waiting for with a
// lost connection.
func (s *Server) failPending() {
	s.pendMu.Lock()
	calls := s.pending
	s.pending = make(map[uint64]*call)
	s.pendMu.Unlock()
	for _, c := range calls {
		c.res.Err = proto.ErrConnectionLoss
		close(c.done)
	}
}

// closeClients closes every client connection (not four-letter words,
// which close themselves).
func (s *Server) closeClients() {
	s.connMu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.connMu.Unlock()
	for _, c := range conns {
		c.close()
	}
}

// syncBarrier makes a sync linearizable in an ensemble: it waits until this
// member has applied everything the leader had committed when the sync
// arrived (raft ReadIndex).
func (s *Server) syncBarrier(ctx context.Context) error {
	if s.cfg.Standalone() {
		return nil
	}
	idx, err := s.node.ReadIndex(ctx)
	if err != nil {
		return err
	}
	return s.node.WaitApplied(ctx, idx)
}

// mode names the member's part, as srvr and mntr print it.
func (s *Server) mode() string {
	if s.cfg.Standalone() {
		return "standalone"
	}
	st := s.node.Status()
	switch {
	case st.IsLeader:
		return "leader"
	case slices.Contains(st.Learners, st.ID):
		return "observer"
	default:
		return "follower"
	}
}

// raftConfig returns the raft node's configuration.
func (s *Server) raftConfig(dataDir, logDir string) raftnode.Config {
	election, heartbeat := s.cfg.RaftTiming()
	voters, learners := members(s.cfg)
	cfg := raftnode.Config{
		ID:               uint64(s.cfg.ServerID),
		DataDir:          dataDir,
		LogDir:           logDir,
		TickInterval:     heartbeat,
		HeartbeatTicks:   1,
		ElectionTicks:    max(int(election/heartbeat), 2),
		SnapCount:        uint64(s.cfg.SnapCount),
		SnapLogPercent:   uint64(s.cfg.SnapLogPercent),
		SnapRetainCount:  s.cfg.AutopurgeSnapRetainCount,
		MaxProposalBytes: s.cfg.JuteMaxBuffer + 64*1024,
		Voters:           voters,
		Learners:         learners,
		OnLeaderChange:   s.onLeaderChange,
		OnStop:           s.onNodeStop,
		Logger:           s.log,
	}
	if !s.cfg.Standalone() {
		cfg.ClusterID = clusterID(s.cfg)
		cfg.OnApp = s.onApp
		cfg.Peers = make(map[uint64]string)
		for _, srv := range s.cfg.Servers {
			if srv.ID == s.cfg.ServerID {
				cfg.Listen = peerAddr(srv)
				if s.cfg.QuorumListenOnAllIPs {
					cfg.Listen = ":" + strconv.Itoa(srv.Addrs[0].QuorumPort)
				}
			} else {
				cfg.Peers[uint64(srv.ID)] = peerAddr(srv)
			}
		}
	}
	return cfg
}
