package admin

import "github.com/paddockhq/paddock/internal/proto"

// Source is the server the admin API reports on. Its methods return
// values in the JSON shapes below, whose field names are ZooKeeper's.
// Every method may be called concurrently.
type Source interface {
	// Live reports whether the server runs its loops (started, not
	// closed, its raft node not failed).
	Live() bool
	// Serving reports whether the server answers clients: a standalone
	// server once started, an ensemble member while it knows a leader and
	// has caught up with it.
	Serving() bool
	// Mode is the server's part as srvr names it ("standalone", "leader",
	// "follower", "observer"), "" when it has none.
	Mode() string

	// ServerStats answers srvr (and stat, which adds the connections).
	ServerStats() ServerStats
	// Connections lists the client connections, oldest first; brief ones
	// carry only the counters (stat), full ones the session details too
	// (cons).
	Connections(brief bool) []Connection
	// ResetConnectionStats resets every connection's counters (crst).
	ResetConnectionStats()
	// ResetServerStats resets the server's counters (srst).
	ResetServerStats()
	// Monitor answers mntr.
	Monitor() Monitor
	// Configuration answers conf.
	Configuration() Configuration
	// Environment answers envi: ZooKeeper's keys in its order.
	Environment() []Field
	// WatchSummary answers wchs.
	WatchSummary() WatchSummary
	// WatchesBySession answers wchc: the paths each session watches.
	WatchesBySession() map[int64][]string
	// WatchesByPath answers wchp: the sessions watching each path.
	WatchesByPath() map[string][]int64
	// Dump answers dump.
	Dump() Dump
	// Dirs answers dirs.
	Dirs() Dirs
	// Leader answers leader; ok is false for a standalone server, which
	// ZooKeeper reports as an error.
	Leader() (l Leader, ok bool)
	// VotingView answers voting_view: the voting members by server id
	// (empty for a standalone server).
	VotingView() map[int64]QuorumServer
	// ZabState answers zabstate.
	ZabState() ZabState
	// LastSnapshot answers last_snapshot.
	LastSnapshot() LastSnapshot
	// InitialConfiguration answers initial_configuration: the
	// configuration in zoo.cfg form.
	InitialConfiguration() string
	// TraceMask answers get_trace_mask: the mask the gtmk four-letter
	// word prints and stmk sets.
	TraceMask() int64
	// ACL returns the ACL of the znode at path, ok false when there is
	// none. The admin server checks the credentials of the commands that
	// need them against it.
	ACL(path string) (list []proto.ACL, ok bool)
	// Snapshot serialises the state as it is now and returns its zxid and
	// bytes (the state machine's snapshot format). It may take a while.
	Snapshot() (zxid int64, data []byte, err error)
}

// ServerStats is srvr's answer (ZooKeeper's SrvrCommand).
type ServerStats struct {
	Version     string         `json:"version"`
	ReadOnly    bool           `json:"read_only"`
	ServerStats ServerCounters `json:"server_stats"`
	// ClientResponse repeats ServerCounters.ClientResponseStats, as
	// ZooKeeper does.
	ClientResponse BufferStats `json:"client_response"`
	NodeCount      int         `json:"node_count"`
	// ProposalStats are a leader's proposal sizes (ZooKeeper's
	// Leader.getProposalStats); absent on other members.
	ProposalStats *BufferStats `json:"proposal_stats,omitempty"`
}

// ServerCounters is ZooKeeper's ServerStats object. The field names,
// including the missing underscore of the two mTLS counts, are ZooKeeper's.
type ServerCounters struct {
	PacketsSent               int64       `json:"packets_sent"`
	PacketsReceived           int64       `json:"packets_received"`
	FsyncThresholdExceedCount int64       `json:"fsync_threshold_exceed_count"`
	ClientResponseStats       BufferStats `json:"client_response_stats"`
	DataDirSize               int64       `json:"data_dir_size"`
	LogDirSize                int64       `json:"log_dir_size"`
	ProviderNull              bool        `json:"provider_null"`
	ServerState               string      `json:"server_state"`
	LastProcessedZxid         int64       `json:"last_processed_zxid"`
	OutstandingRequests       int         `json:"outstanding_requests"`
	AvgLatency                Double      `json:"avg_latency"`
	MaxLatency                int64       `json:"max_latency"`
	MinLatency                int64       `json:"min_latency"`
	NumAliveClientConnections int         `json:"num_alive_client_connections"`
	Uptime                    int64       `json:"uptime"`
	NonMTLSRemoteConnCount    int64       `json:"non_mtlsremote_conn_count"`
	NonMTLSLocalConnCount     int64       `json:"non_mtlslocal_conn_count"`
}

// BufferStats are sizes in bytes; -1 means none recorded (ZooKeeper's
// BufferStats with no sample).
type BufferStats struct {
	LastBufferSize int64 `json:"last_buffer_size"`
	MinBufferSize  int64 `json:"min_buffer_size"`
	MaxBufferSize  int64 `json:"max_buffer_size"`
}

// NoBufferStats is BufferStats with nothing recorded.
var NoBufferStats = BufferStats{-1, -1, -1}

// Connection is one client connection as ZooKeeper's
// ServerCnxn.getConnectionInfo reports it. Brief connections (stat) carry
// no *ConnectionDetails.
type Connection struct {
	RemoteSocketAddress string `json:"remote_socket_address"`
	InterestOps         int    `json:"interest_ops"`
	OutstandingRequests int    `json:"outstanding_requests"`
	PacketsReceived     int64  `json:"packets_received"`
	PacketsSent         int64  `json:"packets_sent"`
	*ConnectionDetails
}

// ConnectionDetails are the session fields of a full Connection (cons).
// Times are Unix milliseconds; latencies milliseconds.
type ConnectionDetails struct {
	SessionID        int64  `json:"session_id"`
	LastOperation    string `json:"last_operation"`
	Established      int64  `json:"established"`
	SessionTimeout   int64  `json:"session_timeout"`
	LastCxid         int64  `json:"last_cxid"`
	LastZxid         int64  `json:"last_zxid"`
	LastResponseTime int64  `json:"last_response_time"`
	LastLatency      int64  `json:"last_latency"`
	MinLatency       int64  `json:"min_latency"`
	AvgLatency       int64  `json:"avg_latency"`
	MaxLatency       int64  `json:"max_latency"`
}

// Monitor is mntr's answer: ZooKeeper's server gauges that Paddock has a
// value for, under their JSON names (mntr's four-letter keys without
// "zk_"). The pointer fields and PeerState are set only in an ensemble:
// QuorumSize and PeerState on every member, the rest on the leader.
type Monitor struct {
	Version                   string `json:"version"`
	ServerState               string `json:"server_state"`
	EphemeralsCount           int    `json:"ephemerals_count"`
	NumAliveConnections       int    `json:"num_alive_connections"`
	AvgLatency                Double `json:"avg_latency"`
	OutstandingRequests       int    `json:"outstanding_requests"`
	ZnodeCount                int    `json:"znode_count"`
	GlobalSessions            int    `json:"global_sessions"`
	NonMTLSRemoteConnCount    int    `json:"non_mtls_remote_conn_count"`
	PacketsSent               int64  `json:"packets_sent"`
	PacketsReceived           int64  `json:"packets_received"`
	ConnectionDropProbability Double `json:"connection_drop_probability"`
	WatchCount                int    `json:"watch_count"`
	MinLatency                int64  `json:"min_latency"`
	MaxFileDescriptorCount    uint64 `json:"max_file_descriptor_count"`
	ApproximateDataSize       int64  `json:"approximate_data_size"`
	OpenFileDescriptorCount   int    `json:"open_file_descriptor_count"`
	LocalSessions             int    `json:"local_sessions"`
	Uptime                    int64  `json:"uptime"`
	MaxLatency                int64  `json:"max_latency"`
	OutstandingTLSHandshake   int    `json:"outstanding_tls_handshake"`
	NonMTLSLocalConnCount     int    `json:"non_mtls_local_conn_count"`

	QuorumSize               *int   `json:"quorum_size,omitempty"`
	PeerState                string `json:"peer_state,omitempty"`
	Learners                 *int   `json:"learners,omitempty"`
	SyncedFollowers          *int   `json:"synced_followers,omitempty"`
	SyncedNonVotingFollowers *int   `json:"synced_non_voting_followers,omitempty"`
	SyncedObservers          *int   `json:"synced_observers,omitempty"`
	PendingSyncs             *int   `json:"pending_syncs,omitempty"`
	LeaderUptime             *int64 `json:"leader_uptime,omitempty"`
	LastProposalSize         *int64 `json:"last_proposal_size,omitempty"`
	MinProposalSize          *int64 `json:"min_proposal_size,omitempty"`
	MaxProposalSize          *int64 `json:"max_proposal_size,omitempty"`
	ObserverMasterID         *int64 `json:"observer_master_id,omitempty"`
}

// Configuration is conf's answer (ZooKeeper's ZooKeeperServer.getConf).
type Configuration struct {
	ClientPort              int    `json:"client_port"`
	DataDir                 string `json:"data_dir"`
	DataLogDir              string `json:"data_log_dir"`
	TickTime                int64  `json:"tick_time"`
	MaxClientCnxns          int    `json:"max_client_cnxns"`
	MinSessionTimeout       int64  `json:"min_session_timeout"`
	MaxSessionTimeout       int64  `json:"max_session_timeout"`
	ServerID                int64  `json:"server_id"`
	ClientPortListenBacklog int    `json:"client_port_listen_backlog"`
}

// WatchSummary is wchs's answer.
type WatchSummary struct {
	NumConnections  int `json:"num_connections"`
	NumPaths        int `json:"num_paths"`
	NumTotalWatches int `json:"num_total_watches"`
}

// Dump is dump's answer: the sessions by the time (Unix milliseconds) their
// expiry bucket ends, and the ephemeral paths by session.
type Dump struct {
	ExpiryTimeToSessionIDs    map[int64][]int64  `json:"expiry_time_to_session_ids"`
	SessionIDToEphemeralPaths map[int64][]string `json:"session_id_to_ephemeral_paths"`
}

// Dirs is dirs's answer, in bytes.
type Dirs struct {
	DatadirSize int64 `json:"datadir_size"`
	LogdirSize  int64 `json:"logdir_size"`
}

// Leader is leader's answer for an ensemble member. LeaderID is -1 and
// LeaderIP "" while no leader is known.
type Leader struct {
	IsLeader bool   `json:"is_leader"`
	LeaderID int64  `json:"leader_id"`
	LeaderIP string `json:"leader_ip"`
}

// QuorumServer is one member in voting_view.
type QuorumServer struct {
	ServerAddresses   []string `json:"server_addresses"`
	ElectionAddresses []string `json:"election_addresses"`
	ClientAddress     string   `json:"client_address"`
	LearnerType       string   `json:"learner_type"`
}

// ZabState is zabstate's answer. A standalone server sets only Voting
// (false) and State (""), as ZooKeeper does; the pointer fields are nil
// then.
type ZabState struct {
	MyID            *int64        `json:"myid,omitempty"`
	IsLeader        *bool         `json:"is_leader,omitempty"`
	QuorumAddress   *AddressGroup `json:"quorum_address,omitempty"`
	ElectionAddress *AddressGroup `json:"election_address,omitempty"`
	ClientAddress   *string       `json:"client_address,omitempty"`
	Voting          bool          `json:"voting"`
	LastZxid        *string       `json:"last_zxid,omitempty"`
	ZabEpoch        *int64        `json:"zab_epoch,omitempty"`
	ZabCounter      *int64        `json:"zab_counter,omitempty"`
	State           string        `json:"zabstate"`
}

// AddressGroup is a member's addresses for one purpose, in the shape
// ZooKeeper's Jackson serialisation of MultipleAddresses gives. Paddock
// probes no address, so every address counts as reachable.
type AddressGroup struct {
	Empty                      bool     `json:"empty"`
	AllReachableAddresses      []string `json:"all_reachable_addresses"`
	AllAddresses               []string `json:"all_addresses"`
	One                        string   `json:"one"`
	ReachableAddress           string   `json:"reachable_address"`
	WildcardAddresses          []string `json:"wildcard_addresses"`
	AllPorts                   []int    `json:"all_ports"`
	AllHostStrings             []string `json:"all_host_strings"`
	AllReachableAddressesOrAll []string `json:"all_reachable_addresses_or_all"`
	ReachableOrOne             string   `json:"reachable_or_one"`
}

// LastSnapshot is last_snapshot's answer: the zxid in hex without "0x"
// (Java's Long.toHexString, "ffffffffffffffff" when there is none) and the
// snapshot file's modification time in Unix seconds (-1 when none).
type LastSnapshot struct {
	Zxid      string `json:"zxid"`
	Timestamp int64  `json:"timestamp"`
}
