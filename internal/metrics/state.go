package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// State is the server's state as one scrape reports it. The server fills it
// in through Options.State; the collector turns it into gauges.
type State struct {
	// The gauges of ZooKeeper's ZooKeeperServer.registerMetrics.
	ZnodeCount          int
	EphemeralsCount     int
	WatchCount          int   // data-table plus child-table watches, as mntr's
	ApproximateDataSize int64 // bytes of path and data
	NumAliveConnections int
	OutstandingRequests int
	PacketsReceived     int64
	PacketsSent         int64
	GlobalSessions      int
	OpenFileDescriptors int64 // -1 if unknown
	MaxFileDescriptors  int64 // -1 if unknown
	Uptime              time.Duration
	// AvgLatency, MinLatency and MaxLatency are the request latencies srvr
	// reports, in milliseconds.
	AvgLatency float64
	MinLatency int64
	MaxLatency int64

	// DataWatches and ChildWatches are the sizes of ZooKeeper's two watch
	// tables (a persistent watch is in both).
	DataWatches, ChildWatches int
	// Serving is true while the server answers clients.
	Serving bool
	// Raft is the raft node's view.
	Raft RaftState
	// WALBytesWritten and WALSegments describe the write-ahead log.
	WALBytesWritten uint64
	WALSegments     int64
	// Quorum is nil for a standalone server.
	Quorum *QuorumState
}

// RaftState is the raft node's progress.
type RaftState struct {
	Term, CommitIndex, AppliedIndex, LastIndex, SnapshotIndex uint64
	IsLeader                                                  bool
}

// QuorumState is an ensemble member's view of the ensemble, for ZooKeeper's
// quorum gauges.
type QuorumState struct {
	// Size is the number of voting members (quorum_size).
	Size int
	// Observer is true on an observer, which reports no synced_observers:
	// ZooKeeper registers that gauge on its leader and followers only.
	Observer bool
	// Leading is true on the leader: the fields below are the leader's
	// view, and reported only then, as ZooKeeper registers them only on
	// its leader.
	Leading bool
	// Learners counts the other members the leader hears from; synced ones
	// are those it is replicating to.
	Learners        int
	SyncedFollowers int
	SyncedObservers int
	LeaderUptime    time.Duration
	// LastProposalSize, MinProposalSize and MaxProposalSize are the sizes
	// in bytes of the proposals committed since this member became leader
	// (or the last srst), -1 before the first: ZooKeeper's proposal
	// BufferStats.
	LastProposalSize, MinProposalSize, MaxProposalSize int64
}

// gauge is one gauge the state collector reports.
type gauge struct {
	desc *prometheus.Desc
	// value returns the gauge's value and whether to report it.
	value func(*State) (float64, bool)
}

func always(f func(*State) float64) func(*State) (float64, bool) {
	return func(st *State) (float64, bool) { return f(st), true }
}

func inQuorum(f func(*QuorumState) float64) func(*State) (float64, bool) {
	return func(st *State) (float64, bool) {
		if st.Quorum == nil {
			return 0, false
		}
		return f(st.Quorum), true
	}
}

func leading(f func(*QuorumState) float64) func(*State) (float64, bool) {
	return func(st *State) (float64, bool) {
		if st.Quorum == nil || !st.Quorum.Leading {
			return 0, false
		}
		return f(st.Quorum), true
	}
}

// voting reports f on the voting members of an ensemble, not on an
// observer or a standalone server.
func voting(f func(*QuorumState) float64) func(*State) (float64, bool) {
	return func(st *State) (float64, bool) {
		if st.Quorum == nil || st.Quorum.Observer {
			return 0, false
		}
		return f(st.Quorum), true
	}
}

func zero(*State) float64 { return 0 }

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func ms(d time.Duration) float64 { return float64(d.Milliseconds()) }

// stateGauges lists the gauges made from a State: ZooKeeper's names first,
// then Paddock's own.
func stateGauges() []gauge {
	g := func(name, help string, value func(*State) (float64, bool)) gauge {
		return gauge{prometheus.NewDesc(name, help, nil, nil), value}
	}
	return []gauge{
		g("znode_count", "Number of znodes in the data tree.", always(func(s *State) float64 { return float64(s.ZnodeCount) })),
		g("ephemerals_count", "Number of ephemeral znodes.", always(func(s *State) float64 { return float64(s.EphemeralsCount) })),
		g("watch_count", "Number of watches (data-table plus child-table pairs, as mntr's zk_watch_count).", always(func(s *State) float64 { return float64(s.WatchCount) })),
		g("approximate_data_size", "Approximate size of the data tree in bytes (paths and data).", always(func(s *State) float64 { return float64(s.ApproximateDataSize) })),
		g("num_alive_connections", "Number of open client connections.", always(func(s *State) float64 { return float64(s.NumAliveConnections) })),
		g("outstanding_requests", "Number of requests received and not yet answered.", always(func(s *State) float64 { return float64(s.OutstandingRequests) })),
		g("packets_received", "Packets received from clients since start (or the last srst).", always(func(s *State) float64 { return float64(s.PacketsReceived) })),
		g("packets_sent", "Packets sent to clients since start (or the last srst).", always(func(s *State) float64 { return float64(s.PacketsSent) })),
		g("global_sessions", "Number of sessions in the replicated session table.", always(func(s *State) float64 { return float64(s.GlobalSessions) })),
		g("local_sessions", "Number of local sessions (always 0: Paddock has no local sessions).", always(zero)),
		g("open_file_descriptor_count", "Open file descriptors of the process (-1 if unknown).", always(func(s *State) float64 { return float64(s.OpenFileDescriptors) })),
		g("max_file_descriptor_count", "File descriptor limit of the process (-1 if unknown).", always(func(s *State) float64 { return float64(s.MaxFileDescriptors) })),
		g("uptime", "Milliseconds since the server started.", always(func(s *State) float64 { return ms(s.Uptime) })),
		g("avg_latency", "Average request latency in ms since start (or the last srst).", always(func(s *State) float64 { return s.AvgLatency })),
		g("min_latency", "Minimum request latency in ms since start (or the last srst).", always(func(s *State) float64 { return float64(s.MinLatency) })),
		g("max_latency", "Maximum request latency in ms since start (or the last srst).", always(func(s *State) float64 { return float64(s.MaxLatency) })),
		g("connection_drop_probability", "Probability of dropping a new connection (always 0: Paddock does not throttle connections).", always(zero)),
		g("outstanding_tls_handshake", "TLS handshakes in progress (always 0: Paddock has no TLS).", always(zero)),
		g("non_mtls_remote_conn_count", "Remote connections without mutual TLS (always 0, as mntr).", always(zero)),
		g("non_mtls_local_conn_count", "Local connections without mutual TLS (always 0, as mntr).", always(zero)),

		g("quorum_size", "Number of voting members of the ensemble.", inQuorum(func(q *QuorumState) float64 { return float64(q.Size) })),
		g("synced_observers", "Observers synced with this member (leader: observers it replicates to; follower: 0); not on observers.", voting(func(q *QuorumState) float64 {
			if !q.Leading {
				return 0
			}
			return float64(q.SyncedObservers)
		})),
		g("learners", "Leader only: other members the leader hears from.", leading(func(q *QuorumState) float64 { return float64(q.Learners) })),
		g("synced_followers", "Leader only: voting followers the leader is replicating to.", leading(func(q *QuorumState) float64 { return float64(q.SyncedFollowers) })),
		g("synced_non_voting_followers", "Leader only: non-voting followers in sync (always 0).", leading(func(*QuorumState) float64 { return 0 })),
		g("pending_syncs", "Leader only: learner syncs in progress (always 0).", leading(func(*QuorumState) float64 { return 0 })),
		g("leader_uptime", "Leader only: milliseconds since this member became leader.", leading(func(q *QuorumState) float64 { return ms(q.LeaderUptime) })),
		g("last_proposal_size", "Leader only: size in bytes of the last proposal committed (-1 before the first).", leading(func(q *QuorumState) float64 { return float64(q.LastProposalSize) })),
		g("max_proposal_size", "Leader only: size in bytes of the largest proposal committed (-1 before the first).", leading(func(q *QuorumState) float64 { return float64(q.MaxProposalSize) })),
		g("min_proposal_size", "Leader only: size in bytes of the smallest proposal committed (-1 before the first).", leading(func(q *QuorumState) float64 { return float64(q.MinProposalSize) })),

		g("paddock_serving", "1 while the server answers clients, else 0.", always(func(s *State) float64 { return b2f(s.Serving) })),
		g("paddock_raft_term", "Current raft term.", always(func(s *State) float64 { return float64(s.Raft.Term) })),
		g("paddock_raft_commit_index", "Highest raft index known to be committed.", always(func(s *State) float64 { return float64(s.Raft.CommitIndex) })),
		g("paddock_raft_applied_index", "Highest raft index applied to the state machine.", always(func(s *State) float64 { return float64(s.Raft.AppliedIndex) })),
		g("paddock_raft_last_index", "Highest raft index in the log.", always(func(s *State) float64 { return float64(s.Raft.LastIndex) })),
		g("paddock_raft_snapshot_index", "Raft index of the newest durable snapshot (0 if none).", always(func(s *State) float64 { return float64(s.Raft.SnapshotIndex) })),
		g("paddock_raft_is_leader", "1 if this member is the raft leader, else 0.", always(func(s *State) float64 { return b2f(s.Raft.IsLeader) })),
		g("paddock_sessions", "Number of open sessions (the replicated session table).", always(func(s *State) float64 { return float64(s.GlobalSessions) })),
		g("paddock_wal_segments", "Write-ahead log segment files on disk.", always(func(s *State) float64 { return float64(s.WALSegments) })),
	}
}

// stateCollector reports the gauges of a State, read once per scrape.
type stateCollector struct {
	state      func(*State)
	gauges     []gauge
	watches    *prometheus.Desc
	walWritten *prometheus.Desc
}

func newStateCollector(state func(*State)) *stateCollector {
	return &stateCollector{
		state:      state,
		gauges:     stateGauges(),
		watches:    prometheus.NewDesc("paddock_watches", "Watches by table: data (getData, exists, persistent and recursive watches) and child (getChildren and persistent watches).", []string{"kind"}, nil),
		walWritten: prometheus.NewDesc("paddock_wal_written_bytes_total", "Bytes appended to the write-ahead log since start.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, g := range c.gauges {
		ch <- g.desc
	}
	ch <- c.watches
	ch <- c.walWritten
}

// Collect implements prometheus.Collector.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	var st State
	c.state(&st)
	for _, g := range c.gauges {
		if v, ok := g.value(&st); ok {
			ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, v)
		}
	}
	ch <- prometheus.MustNewConstMetric(c.watches, prometheus.GaugeValue, float64(st.DataWatches), "data")
	ch <- prometheus.MustNewConstMetric(c.watches, prometheus.GaugeValue, float64(st.ChildWatches), "child")
	ch <- prometheus.MustNewConstMetric(c.walWritten, prometheus.CounterValue, float64(st.WALBytesWritten))
}
