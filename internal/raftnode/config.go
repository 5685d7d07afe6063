package raftnode

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/paddockhq/paddock/internal/storage"
)

// Defaults applied by Start to zero Config fields.
const (
	DefaultTickInterval     = 100 * time.Millisecond
	DefaultSnapCount        = 100000 // ZooKeeper's snapCount
	DefaultMaxProposalBytes = 2 << 20
)

const (
	// defaultElectionTicks and defaultHeartbeatTicks are in units of
	// Config.TickInterval.
	defaultElectionTicks  = 10
	defaultHeartbeatTicks = 1
	// catchUpEntries is how many entries before a snapshot index stay in
	// memory, so that a follower slightly behind needs no snapshot.
	catchUpEntries = 5000
	// proposalQueue bounds proposals waiting for the run goroutine.
	proposalQueue = 4096
	// maxProposalsPerReady bounds the proposals taken into one Ready.
	maxProposalsPerReady = 4096
	// maxUncommittedBytes bounds the proposals raft holds before commit;
	// beyond it raft drops proposals (ErrProposalDropped).
	maxUncommittedBytes = 256 << 20
	// maxCommittedBytesPerReady bounds the entries applied per Ready.
	maxCommittedBytesPerReady = 64 << 20
	maxMsgBytes               = 1 << 20
	// maxBatchBytes bounds the data of the proposals handed to raft in
	// one message (a bigger proposal goes alone).
	maxBatchBytes   = maxMsgBytes
	maxInflightMsgs = 256
)

// Config configures a Node.
type Config struct {
	// ID is this member's raft id, not 0 (1 in standalone mode).
	ID uint64
	// DataDir holds snapshots; LogDir holds the WAL and defaults to DataDir
	// (ZooKeeper's dataDir and dataLogDir).
	DataDir, LogDir string
	// TickInterval is raft's logical clock. Zero means DefaultTickInterval.
	TickInterval time.Duration
	// ElectionTicks and HeartbeatTicks are the election timeout (raft
	// randomises it between one and two times this) and the heartbeat
	// interval, in ticks. Zero means 10 and 1.
	ElectionTicks, HeartbeatTicks int
	// Voters and Learners are the members of a new group (they are used
	// only when the data and log directories are empty; afterwards the
	// membership comes from the log). Voters vote and count for the
	// quorum; Learners (ZooKeeper's observers) only replicate. No Voters
	// means a group of one: {ID}. Every member must be given the same
	// lists, so that all write the same first entries.
	Voters, Learners []uint64
	// Peers maps every other member's id to its peer address; empty for a
	// group of one. With Peers, Start runs a TCP transport
	// (internal/transport) listening on Listen, unless Transport is set.
	Peers map[uint64]string
	// Listen is this member's peer address (host:port).
	Listen string
	// ClusterID names the group; members refuse peers with another one.
	ClusterID string
	// OnApp, if set, receives the application messages other members send
	// with SendApp. It runs on the transport's goroutines and must not
	// block for long.
	OnApp func(from uint64, data []byte)
	// Transport replaces the TCP transport (tests run groups in memory
	// with it); it is then the caller's job to deliver messages to the
	// other members' Step and ReceiveSnapshot.
	Transport Transport
	// OnLeaderChange, if set, is called from the node's goroutine when the
	// known leader changes (lead is 0 when none is known); it must not
	// block.
	OnLeaderChange func(lead uint64, isLeader bool)
	// SnapCount: a snapshot is taken every SnapCount applied entries.
	// Zero means DefaultSnapCount.
	SnapCount uint64
	// SnapLogPercent, when not zero, also holds a snapshot back until the
	// WAL written since the previous snapshot started is at least this
	// percentage of that snapshot's size. A snapshot rewrites the whole
	// state, so for a large state under many small writes SnapCount alone
	// would write a snapshot many times the size of the log it lets go of,
	// keeping the disk busy with snapshots that the WAL's fsyncs (and every
	// write) queue behind. It bounds what a snapshot writes per byte of log
	// while replay at a restart stays bounded too (to about this percentage
	// of the snapshot, beyond SnapCount entries). Before this node's first
	// snapshot only SnapCount counts.
	SnapLogPercent uint64
	// SnapRetainCount is how many snapshots (and the WAL needed to replay
	// from the oldest of them) are kept; below storage.MinSnapRetain (3) it
	// is raised to 3, as ZooKeeper does with autopurge.snapRetainCount.
	SnapRetainCount int
	// MaxProposalBytes: bigger proposals are refused with
	// ErrProposalTooLarge. Zero means DefaultMaxProposalBytes.
	MaxProposalBytes int
	// WALSegmentBytes is the WAL segment size; zero means
	// storage.DefaultSegmentBytes.
	WALSegmentBytes int64
	// Logger receives the node's and raft's messages; nil discards them.
	Logger *slog.Logger
	// OnWALSync, if set, is told how long each fsync of the WAL took
	// (storage.WALOptions.OnSync). It runs on the node's goroutine and must
	// be quick.
	OnWALSync func(time.Duration)
	// OnStop, if set, is called once when the node stops by itself after a
	// failure it cannot go on from (a WAL write or fsync failed, a snapshot
	// could not be installed), with the error Err will return. It runs on
	// the node's goroutine, after the node has stopped taking proposals and
	// told the owners of those it had not handed to raft (ProposeTo's
	// Dropper, Propose's onDrop), and before Done is closed; it must not
	// block. Entries raft had accepted are never applied: the caller must
	// fail what still waits for them. It is not called after Close.
	OnStop func(err error)
	// OnSnapshot, if set, is told of every snapshot this node wrote and
	// recorded: how long it took from capture to durable, and the file's
	// size in bytes (0 if it could not be read). It runs on the node's
	// goroutine and must be quick.
	OnSnapshot func(took time.Duration, bytes int64)
}

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.LogDir == "" {
		c.LogDir = c.DataDir
	}
	if c.TickInterval == 0 {
		c.TickInterval = DefaultTickInterval
	}
	if c.SnapCount == 0 {
		c.SnapCount = DefaultSnapCount
	}
	if c.ElectionTicks == 0 {
		c.ElectionTicks = defaultElectionTicks
	}
	if c.HeartbeatTicks == 0 {
		c.HeartbeatTicks = defaultHeartbeatTicks
	}
	if len(c.Voters) == 0 && len(c.Learners) == 0 {
		c.Voters = []uint64{c.ID}
	}
	c.SnapRetainCount = max(c.SnapRetainCount, storage.MinSnapRetain)
	if c.MaxProposalBytes == 0 {
		c.MaxProposalBytes = DefaultMaxProposalBytes
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports every invalid field of c, after defaults.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	if c.ID == 0 {
		errs = append(errs, errors.New("ID must not be 0"))
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("DataDir is required"))
	}
	if c.TickInterval < time.Millisecond {
		errs = append(errs, fmt.Errorf("TickInterval %v is below 1ms", c.TickInterval))
	}
	if c.MaxProposalBytes < 0 {
		errs = append(errs, fmt.Errorf("MaxProposalBytes %d is negative", c.MaxProposalBytes))
	}
	if c.HeartbeatTicks < 1 || c.ElectionTicks <= c.HeartbeatTicks {
		errs = append(errs, fmt.Errorf("ElectionTicks %d must exceed HeartbeatTicks %d (at least 1)", c.ElectionTicks, c.HeartbeatTicks))
	}
	if len(c.Voters) == 0 {
		errs = append(errs, errors.New("the group needs at least one voter"))
	}
	seen := make(map[uint64]bool)
	self := false
	for _, id := range append(append([]uint64(nil), c.Voters...), c.Learners...) {
		if id == 0 || seen[id] {
			errs = append(errs, fmt.Errorf("member id %d is 0 or listed twice", id))
		}
		seen[id] = true
		self = self || id == c.ID
	}
	if !self {
		errs = append(errs, fmt.Errorf("ID %d is not among the voters %v or learners %v", c.ID, c.Voters, c.Learners))
	}
	if len(seen) > 1 && c.Transport == nil && len(c.Peers) == 0 {
		errs = append(errs, errors.New("a group of several members needs Peers or a Transport"))
	}
	if c.WALSegmentBytes < 0 {
		errs = append(errs, fmt.Errorf("WALSegmentBytes %d is negative", c.WALSegmentBytes))
	}
	if len(errs) > 0 {
		return fmt.Errorf("raftnode: invalid config: %w", errors.Join(errs...))
	}
	return nil
}

// Transport sends raft messages to the other members of the group. Send is
// called from the node's goroutine after the Ready's entries are durable; it
// must not block (queue, and drop when a peer cannot keep up: raft
// retransmits).
type Transport interface {
	Send(msgs []raftpb.Message)
}
