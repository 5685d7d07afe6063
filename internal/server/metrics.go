package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/paddockhq/paddock/internal/metrics"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/raftnode"
)

// serverMetrics is the server's side of internal/metrics: the metric set,
// the HTTP endpoint, and what the leader-change hook keeps for the
// election times. A nil *serverMetrics (metrics off) makes every method a
// no-op.
type serverMetrics struct {
	set *metrics.Set
	ep  *metrics.Endpoint
	// lookingSince is when this member lost its leader or started (Unix
	// ns), 0 while it knows one.
	lookingSince atomic.Int64
}

// initMetrics makes the metric set when the configuration asks for metrics
// and hooks it into the raft node's configuration; without metrics it hooks
// in the slow-fsync warning alone. On an ensemble member it hooks the
// leader changes into the server stats (leader uptime, proposal sizes),
// with or without metrics. It opens nothing; Start calls it before
// starting the raft node.
func (s *Server) initMetrics(rc *raftnode.Config) error {
	if !s.cfg.Standalone() {
		next := rc.OnLeaderChange
		rc.OnLeaderChange = func(lead uint64, isLeader bool) {
			s.stats.leaderChanged(isLeader)
			s.metrics.leaderChanged(lead) // s.metrics is set before the node starts
			if next != nil {
				next(lead, isLeader)
			}
		}
	}
	if !s.cfg.MetricsEnabled {
		// The slow-fsync warning is ZooKeeper's, with or without metrics.
		slow := metrics.NewSlowFsyncs(s.log, s.cfg.FsyncWarningThreshold)
		rc.OnWALSync = func(d time.Duration) { slow.Observe(d) }
		return nil
	}
	m := &serverMetrics{}
	set, err := metrics.NewSet(metrics.Options{
		Logger:                s.log,
		ExportRuntime:         s.cfg.MetricsExportRuntime,
		FsyncWarningThreshold: s.cfg.FsyncWarningThreshold,
		Ops:                   metricsOps(),
		State:                 s.metricsState,
	})
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	m.set = set
	rc.OnWALSync = set.ObserveFsync
	rc.OnSnapshot = set.ObserveSnapshot
	if !s.cfg.Standalone() {
		// A member starts without a leader, looking for one: ZooKeeper's
		// QuorumPeer starts in LOOKING and counts it in looking_count.
		m.lookingSince.Store(time.Now().UnixNano())
		set.Looking()
	}
	s.metrics = m
	return nil
}

// startMetrics starts serving /metrics; Start calls it once everything the
// collectors read is in place. A bind failure is a startup error naming the
// zoo.cfg keys.
func (s *Server) startMetrics() error {
	m := s.metrics
	if m == nil {
		return nil
	}
	ep, err := metrics.Listen(s.cfg.MetricsAddr(), m.set.Handler(), s.log)
	if err != nil {
		return fmt.Errorf("server: metrics endpoint (metricsProvider.httpHost, metricsProvider.httpPort): %w", err)
	}
	m.ep = ep
	s.log.Info("serving metrics", "addr", "http://"+ep.Addr().String()+"/metrics")
	return nil
}

// stopMetrics stops the endpoint, if it runs.
func (s *Server) stopMetrics() {
	if m := s.metrics; m != nil && m.ep != nil {
		m.ep.Close()
	}
}

// MetricsAddr returns the address /metrics is served on, or nil when
// metrics are off or the server has not started. Like Addr, it must not be
// called concurrently with Start.
func (s *Server) MetricsAddr() net.Addr {
	if s.metrics == nil || s.metrics.ep == nil {
		return nil
	}
	return s.metrics.ep.Addr()
}

// metricsOps names every opcode proto knows, for the op label.
func metricsOps() map[int32]string {
	ops := make(map[int32]string)
	for code := int32(-16); code <= 128; code++ {
		if name := proto.OpCode(code).String(); !strings.HasPrefix(name, "op(") {
			ops[code] = name
		}
	}
	return ops
}

// metricsState fills in st for a scrape, reading the same values as mntr.
func (s *Server) metricsState(st *metrics.State) {
	min, avg, max, _ := s.stats.latency.get()
	s.mu.RLock()
	t := s.fsm.Tree()
	st.ZnodeCount = zkNodeCount(t.NodeCount())
	st.EphemeralsCount = t.EphemeralCount()
	st.ApproximateDataSize = t.DataSize()
	st.GlobalSessions = len(s.fsm.Sessions())
	s.mu.RUnlock()
	st.WatchCount = s.watches.Count()
	_, _, st.DataWatches = s.watches.Summary()
	st.ChildWatches = max0(st.WatchCount - st.DataWatches)
	st.NumAliveConnections = len(s.connections())
	st.OutstandingRequests = len(s.outstanding)
	st.PacketsReceived = s.stats.received.Load()
	st.PacketsSent = s.stats.sent.Load()
	st.OpenFileDescriptors = int64(openFDs())
	st.MaxFileDescriptors = int64(maxFDs())
	if st.MaxFileDescriptors <= 0 {
		st.MaxFileDescriptors = -1
	}
	st.Uptime = time.Since(s.started)
	st.AvgLatency, st.MinLatency, st.MaxLatency = zkAverage(avg), min, max
	st.Serving = s.serving.Load()

	rs := s.node.Status()
	st.Raft = metrics.RaftState{Term: rs.Term, CommitIndex: rs.Commit, AppliedIndex: rs.Applied,
		LastIndex: rs.LastIndex, SnapshotIndex: rs.SnapshotIndex, IsLeader: rs.IsLeader}
	ws := s.node.WALStats()
	st.WALBytesWritten, st.WALSegments = ws.BytesWritten, ws.Segments
	if s.cfg.Standalone() {
		return
	}
	q := &metrics.QuorumState{Size: len(rs.Voters), Leading: rs.IsLeader, Observer: rs.IsLearner()}
	if rs.IsLeader {
		// As mntr: a member counts as a learner while the leader hears
		// from it, and as synced while the leader replicates to it.
		for id, p := range rs.Progress {
			if id == rs.ID || !p.Active {
				continue
			}
			q.Learners++
			if p.State == "StateReplicate" {
				if p.IsLearner {
					q.SyncedObservers++
				} else {
					q.SyncedFollowers++
				}
			}
		}
		q.LeaderUptime = s.stats.leaderUptime()
		q.LastProposalSize, q.MinProposalSize, q.MaxProposalSize = s.stats.proposals.get()
	}
	st.Quorum = q
}

func max0(n int) int { return max(n, 0) }

// leaderChanged runs on raft's goroutine at every leader change: it times
// elections (from losing a leader, or starting, to knowing one).
func (m *serverMetrics) leaderChanged(lead uint64) {
	if m == nil {
		return
	}
	now := time.Now().UnixNano()
	if lead == 0 {
		if m.lookingSince.CompareAndSwap(0, now) {
			m.set.Looking()
		}
		return
	}
	if since := m.lookingSince.Swap(0); since != 0 {
		m.set.ObserveElection(time.Duration(now - since))
	}
}

// request records a request answered d after it arrived.
func (m *serverMetrics) request(it *item, d time.Duration) {
	if m != nil {
		m.set.ObserveRequest(int32(it.op), it.entry != nil, d)
	}
}

// session records the createSession that opened a connection's session,
// d after its ConnectRequest came: a write, as ZooKeeper's updatelatency
// counts it.
func (m *serverMetrics) session(d time.Duration) {
	if m != nil {
		m.set.ObserveRequest(int32(proto.OpCreateSession), true, d)
	}
}

// received counts a request frame of n payload bytes (plus its length).
func (m *serverMetrics) received(n int) {
	if m != nil {
		m.set.BytesReceived(n + 4)
	}
}

// connectRequest counts a ConnectRequest frame of n payload bytes.
func (m *serverMetrics) connectRequest(n int) {
	if m != nil {
		m.set.ConnectionRequested()
		m.set.BytesReceived(n + 4)
	}
}

// readFailed counts a connection whose client went away: the read ended
// with end of stream or a reset, not because the server closed it.
func (m *serverMetrics) readFailed(err error) {
	if m == nil || errors.Is(err, net.ErrClosed) {
		return
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		m.set.ConnectionDropped()
	}
}

// rejected counts a connection refused at accept.
func (m *serverMetrics) rejected() {
	if m != nil {
		m.set.ConnectionRejected()
	}
}

// expired counts a session this server expires.
func (m *serverMetrics) expired() {
	if m != nil {
		m.set.SessionExpired()
	}
}

// proposalStart returns the time a proposal is made, or the zero time
// when metrics are off (no clock read).
func (m *serverMetrics) proposalStart() time.Time {
	if m == nil {
		return time.Time{}
	}
	return time.Now()
}

// proposalApplied records a proposal of this member applied now.
func (m *serverMetrics) proposalApplied(start time.Time) {
	if m != nil && !start.IsZero() {
		m.set.ObserveProposal(time.Since(start))
	}
}
