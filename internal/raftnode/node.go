package raftnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/paddockhq/paddock/internal/storage"
	"github.com/paddockhq/paddock/internal/transport"
)

// Errors returned by Node methods.
var (
	ErrStopped          = errors.New("raftnode: node stopped")
	ErrEmptyProposal    = errors.New("raftnode: empty proposal")
	ErrProposalTooLarge = errors.New("raftnode: proposal too large")
	ErrProposalDropped  = errors.New("raftnode: proposal dropped by raft")
)

// StateMachine is what raftnode drives. Apply is called for every committed
// entry in log order, only after the entry is durable in the WAL, from one
// goroutine.
type StateMachine interface {
	// Apply applies a committed normal entry. data is empty for raft's own
	// entries (the empty entry of a leader change, and membership changes,
	// which raftnode applies itself); the state machine must still record
	// index as applied.
	Apply(index, term uint64, data []byte)
	// Snapshot captures the state as of the last applied index and returns
	// a function that writes it; the function runs on another goroutine
	// while Apply continues, so the capture must be consistent.
	Snapshot() (write func(io.Writer) error, err error)
	// Restore replaces the state with a snapshot's body, read whole and
	// verified (at start-up, and when the leader sends one). The body's
	// memory is released when Restore returns: the state machine must copy
	// what it keeps.
	Restore(data []byte) error
}

// Status is a point-in-time view of the node, for metrics and four-letter
// words.
type Status struct {
	ID            uint64
	Term          uint64
	Commit        uint64 // highest index known committed
	Applied       uint64 // highest index applied to the state machine
	LastIndex     uint64 // highest index in the log
	Lead          uint64 // the leader's id, 0 if none is known
	IsLeader      bool
	SnapshotIndex uint64 // index of the newest durable snapshot, 0 if none
	// Voters and Learners are the current members (refreshed every tick).
	Voters, Learners []uint64
	// Progress is the replication progress of every member, by id, when
	// this node is the leader (refreshed every tick); nil otherwise.
	Progress map[uint64]PeerProgress
}

// IsLearner reports whether the node is a learner (an observer).
func (s Status) IsLearner() bool {
	for _, id := range s.Learners {
		if id == s.ID {
			return true
		}
	}
	return false
}

// Node runs one member of a raft group. See the package documentation.
type Node struct {
	cfg    Config
	logger *slog.Logger
	sm     StateMachine
	rn     *raft.RawNode // owned by the run goroutine
	ms     *logStore
	propc  chan proposal
	recvc  chan raftpb.Message  // from other members, for Step
	tcp    *transport.Transport // when Config.Peers is set
	ctrlc  chan func()          // work to run on the node's goroutine
	wal    *storage.WAL         // guarded by walMu: the appender writes it, the node's goroutine records snapshots
	walMu  sync.Mutex
	app    *appender
	// unlockSnap releases the lock on the snapshot directory (DataDir),
	// held from Start until shutdown.
	unlockSnap func() error

	// Owned by the run goroutine.
	confState    raftpb.ConfState
	appliedTerm  uint64
	snapIndex    uint64 // newest durable snapshot
	snapBase     uint64 // applied index when the last snapshot was started
	snapEvery    uint64 // entries the next snapshot waits for (snapInterval); 0 until drawn
	snapWALBase  uint64 // WAL bytes written when the last snapshot was started
	lastSnapSize int64  // size of the last snapshot this node wrote; 0 before the first
	snapInFlight bool
	purging      bool // old snapshots and WAL segments are being deleted
	campaigned   bool
	batch        []proposal // taken from propc, not yet handed to raft
	batchBytes   int        // the data bytes in batch
	lead         uint64
	raftLead     uint64 // the leader raft reports; lead hides it from a learner that lost it
	leaderTicks  int    // ticks since a learner last heard from raftLead

	// outBuf and respBuf are reused for each Ready's messages to other
	// members and each batch of the appender's responses, so that the
	// busiest loop of a leader does not allocate a slice per Ready.
	outBuf, respBuf []raftpb.Message

	applied     atomic.Uint64
	appliedMu   sync.Mutex
	appliedWake chan struct{} // closed and replaced when applied moves

	readSeq atomic.Uint64 // starts at random: see readIndexOnce
	readMu  sync.Mutex
	reads   map[uint64]chan readResult // ReadIndex calls waiting

	snapDone chan snapResult // buffered 1: at most one snapshot in flight
	snapWG   sync.WaitGroup
	// purgeGate, when set (tests), holds each purge until it is closed.
	purgeGate <-chan struct{}

	mu      sync.Mutex
	status  Status
	leaderc chan struct{} // closed while a leader is known
	err     error         // why run stopped by itself

	stopc     chan struct{} // closed by Close
	quit      chan struct{} // closed when run starts shutting down
	done      chan struct{} // closed when run has shut everything down
	closeErr  error         // from closing the WAL, read after done
	closeOnce sync.Once
}

// Start opens the WAL, locks the snapshot directory (DataDir) for as long as
// the node runs, restores the newest valid snapshot into sm, replays
// the log and starts raft. Either lock held elsewhere makes it fail with an
// error matching storage.ErrLocked. A node that is its group's only voter campaigns
// at once. The caller must Close the node.
func Start(cfg Config, sm StateMachine) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	logger := cfg.Logger.With("component", "raftnode", "id", cfg.ID)
	if err := storage.MkdirAllDurable(cfg.DataDir, 0o750); err != nil {
		return nil, fmt.Errorf("raftnode: %w", err)
	}
	// The WAL's lock first: a second server started on a directory in use
	// must fail before it touches the running one's files.
	w, err := storage.OpenWAL(cfg.LogDir, storage.WALOptions{SegmentBytes: cfg.WALSegmentBytes, Logger: logger, OnSync: cfg.OnWALSync})
	if err != nil {
		return nil, err
	}
	// Then the snapshot directory's, before removing its temporary files:
	// a server on the same DataDir with a LogDir of its own must not write
	// and purge snapshots beside this one's (nor remove the one it is
	// writing). Its lock file is not the WAL's, so a DataDir that is also
	// the LogDir takes both.
	unlockSnap, err := storage.LockSnapshotDir(cfg.DataDir)
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("raftnode: %w", err)
	}
	abort := func() {
		_ = w.Close()
		_ = unlockSnap()
	}
	removed, err := storage.RemoveTempSnapshots(cfg.DataDir)
	if err != nil {
		abort()
		return nil, err
	}
	for _, p := range removed {
		logger.Warn("removed unfinished snapshot", "path", p)
	}
	n := &Node{
		cfg:      cfg,
		logger:   logger,
		sm:       sm,
		ms:       newLogStore(),
		wal:      w,
		snapDone: make(chan snapResult, 1),
		propc:    make(chan proposal, proposalQueue),
		recvc:    make(chan raftpb.Message, recvQueue),
		ctrlc:    make(chan func(), 256),
		reads:    make(map[uint64]chan readResult),

		appliedWake: make(chan struct{}),
		leaderc:     make(chan struct{}),
		stopc:       make(chan struct{}),
		quit:        make(chan struct{}),
		done:        make(chan struct{}),
	}
	n.unlockSnap = unlockSnap
	n.readSeq.Store(rand.Uint64())
	fresh, err := n.restore()
	if err != nil {
		abort()
		return nil, err
	}
	if fresh {
		if err := n.bootstrap(); err != nil {
			abort()
			return nil, err
		}
	}
	rcfg := &raft.Config{
		ID:                        cfg.ID,
		ElectionTick:              cfg.ElectionTicks,
		HeartbeatTick:             cfg.HeartbeatTicks,
		Storage:                   n.ms,
		Applied:                   n.snapIndex,
		MaxSizePerMsg:             maxMsgBytes,
		MaxCommittedSizePerReady:  maxCommittedBytesPerReady,
		MaxUncommittedEntriesSize: maxUncommittedBytes,
		MaxInflightMsgs:           maxInflightMsgs,
		CheckQuorum:               true,
		PreVote:                   true,
		AsyncStorageWrites:        true,
		Logger:                    raftLogger{l: logger.With("component", "raft")},
	}
	rn, err := raft.NewRawNode(rcfg)
	if err != nil {
		abort()
		return nil, fmt.Errorf("raftnode: starting raft: %w", err)
	}
	n.rn = rn
	n.status.ID, n.status.SnapshotIndex = cfg.ID, n.snapIndex
	if cfg.Transport == nil && len(cfg.Peers) > 0 {
		if err := n.startTransport(); err != nil {
			abort()
			return nil, err
		}
	}
	n.app = newAppender(n)
	n.app.start(n.quit)
	go n.run()
	return n, nil
}

// bootstrap starts a new group: it writes the membership as the first
// log entries (one AddNode per voter, then one AddLearnerNode per learner,
// in the order given, all in term 1 and committed), as every member does
// alike, so that the members' logs agree from the start. raft applies them
// through Ready like any committed entry. This is what RawNode.Bootstrap
// does, with learners and written to the WAL at once.
func (n *Node) bootstrap() error {
	var ents []raftpb.Entry
	add := func(id uint64, t raftpb.ConfChangeType) error {
		data, err := (&raftpb.ConfChange{Type: t, NodeID: id}).Marshal()
		if err != nil {
			return err
		}
		ents = append(ents, raftpb.Entry{Type: raftpb.EntryConfChange, Term: 1, Index: uint64(len(ents) + 1), Data: data})
		return nil
	}
	for _, id := range n.cfg.Voters {
		if err := add(id, raftpb.ConfChangeAddNode); err != nil {
			return fmt.Errorf("raftnode: encoding the membership: %w", err)
		}
	}
	for _, id := range n.cfg.Learners {
		if err := add(id, raftpb.ConfChangeAddLearnerNode); err != nil {
			return fmt.Errorf("raftnode: encoding the membership: %w", err)
		}
	}
	hs := raftpb.HardState{Term: 1, Commit: uint64(len(ents))}
	if err := n.wal.Save(hs, ents); err != nil {
		return fmt.Errorf("raftnode: writing the new group's membership: %w", err)
	}
	if err := n.ms.Append(ents); err != nil {
		return fmt.Errorf("raftnode: loading the membership into raft storage: %w", err)
	}
	if err := n.ms.SetHardState(hs); err != nil {
		return fmt.Errorf("raftnode: loading hard state: %w", err)
	}
	n.status.Term, n.status.Commit = hs.Term, hs.Commit
	n.logger.Info("started a new raft group", "voters", n.cfg.Voters, "learners", n.cfg.Learners,
		"data_dir", n.cfg.DataDir, "log_dir", n.cfg.LogDir)
	return nil
}

// restore loads the newest valid snapshot into the state machine and the
// WAL into the in-memory log. It reports whether there was no state at all.
func (n *Node) restore() (fresh bool, err error) {
	var snapTerm uint64
	snap, err := storage.LoadNewestSnapshot(n.cfg.DataDir, n.logger)
	switch {
	case errors.Is(err, storage.ErrNoSnapshot):
	case err != nil:
		return false, err
	default:
		rerr := n.sm.Restore(snap.Body)
		snap.Close() // the state machine keeps nothing of the body
		if rerr != nil {
			return false, fmt.Errorf("raftnode: restoring snapshot %s: %w", snap.Path, rerr)
		}
		if err := n.ms.ApplySnapshot(raftpb.Snapshot{Metadata: snap.Meta}); err != nil {
			return false, fmt.Errorf("raftnode: loading snapshot %s into raft storage: %w", snap.Path, err)
		}
		n.snapIndex, n.snapBase, snapTerm = snap.Meta.Index, snap.Meta.Index, snap.Meta.Term
		n.appliedTerm, n.confState = snapTerm, snap.Meta.ConfState
		n.applied.Store(snap.Meta.Index)
		n.logger.Info("restored snapshot", "path", snap.Path, "index", snap.Meta.Index, "term", snapTerm)
	}
	hs, ents, marker, err := n.wal.ReadAll(n.snapIndex)
	if err != nil {
		return false, fmt.Errorf("raftnode: replaying the WAL after snapshot index %d: %w", n.snapIndex, err)
	}
	if marker.Index > n.snapIndex {
		n.logger.Warn("the WAL records a newer snapshot than the one restored; replaying from the older one",
			"wal_snapshot_index", marker.Index, "restored_index", n.snapIndex)
	}
	if snap == nil && raft.IsEmptyHardState(hs) && len(ents) == 0 {
		return true, nil
	}
	// The commit index is saved without fsync, so it may lag the snapshot.
	hs.Commit = max(hs.Commit, n.snapIndex)
	hs.Term = max(hs.Term, snapTerm)
	last := n.snapIndex
	if len(ents) > 0 {
		last = ents[len(ents)-1].Index
	}
	if hs.Commit > last {
		return false, fmt.Errorf("raftnode: the WAL in %s commits index %d but its last entry is %d: %w",
			n.cfg.LogDir, hs.Commit, last, storage.ErrCorrupt)
	}
	if err := n.ms.SetHardState(hs); err != nil {
		return false, fmt.Errorf("raftnode: loading hard state: %w", err)
	}
	n.status.Term, n.status.Commit = hs.Term, hs.Commit
	if err := n.ms.Append(ents); err != nil {
		return false, fmt.Errorf("raftnode: loading %d WAL entries: %w", len(ents), err)
	}
	n.logger.Info("replayed WAL", "entries", len(ents), "last_index", last, "commit", hs.Commit, "term", hs.Term)
	return false, nil
}

// proposal is one entry waiting for the run goroutine to hand it to raft.
type proposal struct {
	data    []byte
	onDrop  func(error)
	dropper Dropper
}

// dropped tells the proposal's owner, if it asked, that raft refused it.
func (p *proposal) dropped(err error) {
	switch {
	case p.onDrop != nil:
		p.onDrop(err)
	case p.dropper != nil:
		p.dropper.Dropped(err)
	}
}

// Dropper is told when raft refuses a proposal (see ProposeTo).
type Dropper interface {
	// Dropped is called with the reason from the node's goroutine (or,
	// for a proposal queued as the node stopped, with ErrStopped from the
	// goroutine of a Propose); it must not block.
	Dropped(err error)
}

// Propose queues data as a new log entry and returns without waiting for
// raft: the run goroutine hands queued proposals to raft in batches, so
// concurrent proposers share one pass of the loop and one fsync. It blocks
// only while the queue is full (back-pressure), until ctx is done. If raft
// later refuses the entry (no leader, too much uncommitted data), onDrop is
// called with the reason from the run goroutine; it must not block. If the
// node stops before handing the entry to raft, onDrop is called with
// ErrStopped (from the run goroutine, or from a Propose that raced the
// stop, perhaps this one before it returns). An accepted entry reaches
// StateMachine.Apply once committed. Cancelling ctx abandons the wait, not
// the write.
func (n *Node) Propose(ctx context.Context, data []byte, onDrop func(error)) error {
	return n.propose(ctx, proposal{data: data, onDrop: onDrop})
}

// ProposeTo is Propose telling d, rather than a function, of a dropped
// proposal: a caller that already holds a record per proposal saves the
// allocation of a closure.
func (n *Node) ProposeTo(ctx context.Context, data []byte, d Dropper) error {
	return n.propose(ctx, proposal{data: data, dropper: d})
}

func (n *Node) propose(ctx context.Context, p proposal) error {
	data := p.data
	if len(data) == 0 {
		return ErrEmptyProposal
	}
	if len(data) > n.cfg.MaxProposalBytes {
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrProposalTooLarge, len(data), n.cfg.MaxProposalBytes)
	}
	select {
	case <-n.quit:
		return n.stoppedErr()
	default:
	}
	select {
	case n.propc <- p:
	case <-n.quit:
		return n.stoppedErr()
	case <-ctx.Done():
		return fmt.Errorf("raftnode: propose: %w", ctx.Err())
	}
	// The node may have stopped while p was queued (select picks at random
	// between a queue with room and a closed quit), after shutdown dropped
	// what was queued: then no one would take p. Drop what is left, p
	// unless shutdown or another proposer took it first. If quit is still
	// open here, shutdown closes it after p was queued and finds p.
	select {
	case <-n.quit:
		n.dropQueued(n.stoppedErr())
	default:
	}
	return nil
}

// dropQueued tells the owners of the proposals waiting in the queue that
// they were dropped. It runs once the node has stopped (quit is closed),
// when no one else hands queued proposals to raft.
func (n *Node) dropQueued(err error) {
	for {
		select {
		case p := <-n.propc:
			p.dropped(err)
		default:
			return
		}
	}
}

// WaitLeader waits until the group has a leader (this node or another).
func (n *Node) WaitLeader(ctx context.Context) error {
	n.mu.Lock()
	ch := n.leaderc
	n.mu.Unlock()
	select {
	case <-n.quit:
		return n.stoppedErr()
	default:
	}
	select {
	case <-ch:
		return nil
	case <-n.quit:
		return n.stoppedErr()
	case <-ctx.Done():
		return fmt.Errorf("raftnode: waiting for a leader: %w", ctx.Err())
	}
}

// AppliedIndex returns the index of the last entry applied to the state
// machine (or restored from a snapshot).
func (n *Node) AppliedIndex() uint64 { return n.applied.Load() }

// Status returns the node's current raft status.
func (n *Node) Status() Status {
	n.mu.Lock()
	s := n.status
	n.mu.Unlock()
	s.Applied = n.applied.Load()
	if last, err := n.ms.LastIndex(); err == nil {
		s.LastIndex = last
	}
	return s
}

// Term returns the current raft term: Status().Term without the rest of
// the status (a proposer reads it for every write). A leader that steps
// down has its OnLeaderChange called before Term returns the new term.
func (n *Node) Term() uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.status.Term
}

// Done is closed when the node has stopped, after Close or after a failure
// that Err reports.
func (n *Node) Done() <-chan struct{} { return n.done }

// Err returns why the node stopped by itself, or nil.
func (n *Node) Err() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.err
}

// Close stops raft and the snapshotter, waits for their goroutines,
// closes the WAL and releases the snapshot directory. It is safe to call
// more than once.
func (n *Node) Close() error {
	n.closeOnce.Do(func() { close(n.stopc) })
	<-n.done
	return n.closeErr
}

// stoppedErr is ErrStopped, with the cause if the node failed.
func (n *Node) stoppedErr() error {
	if err := n.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrStopped, err)
	}
	return ErrStopped
}

// WALStats returns the WAL's counters (fsyncs, bytes written, segments), for
// metrics.
func (n *Node) WALStats() storage.WALStats { return n.wal.Stats() }
