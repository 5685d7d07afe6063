package raftnode

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/paddockhq/paddock/internal/storage"
)

// Defaults applied by Start to zero Config fields.
const (
	DefaultTickInterval     = 100 * time.Millisecond
	DefaultSnapCount        = 100000 // ZooKeeper's snapCount
	DefaultMaxProposalBytes = 2 << 20
)

const (
	// electionTicks and heartbeatTicks are in units of Config.TickInterval.
	electionTicks  = 10
	heartbeatTicks = 1
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
	maxInflightMsgs           = 256
)

// Config configures a Node.
type Config struct {
	// ID is this member's raft id, not 0 (1 in standalone mode).
	ID uint64
	// DataDir holds snapshots; LogDir holds the WAL and defaults to DataDir
	// (ZooKeeper's dataDir and dataLogDir).
	DataDir, LogDir string
	// TickInterval is raft's logical clock; the election timeout is 10 ticks
	// and the heartbeat 1 tick. Zero means DefaultTickInterval.
	TickInterval time.Duration
	// SnapCount: a snapshot is taken every SnapCount applied entries.
	// Zero means DefaultSnapCount.
	SnapCount uint64
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
	if c.WALSegmentBytes < 0 {
		errs = append(errs, fmt.Errorf("WALSegmentBytes %d is negative", c.WALSegmentBytes))
	}
	if len(errs) > 0 {
		return fmt.Errorf("raftnode: invalid config: %w", errors.Join(errs...))
	}
	return nil
}
