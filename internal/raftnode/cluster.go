package raftnode

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"

	"github.com/paddockhq/paddock/internal/storage"
	"github.com/paddockhq/paddock/internal/transport"
)

// ErrLeaderChanged fails a ReadIndex whose answer was lost to a change of
// leader; the caller may ask again.
var ErrLeaderChanged = errors.New("raftnode: leader changed")

const (
	// recvQueue bounds raft messages received and not yet stepped; more
	// are dropped (raft retransmits).
	recvQueue = 4096
)

// Step hands a message from another member to raft. It never blocks: when
// the node cannot keep up the message is dropped, as a lossy network
// would, and raft recovers.
func (n *Node) Step(m raftpb.Message) {
	select {
	case n.recvc <- m:
	default:
		n.logger.Debug("dropping a raft message: receive queue full", "type", m.Type.String(), "from", m.From)
	}
}

// ReportUnreachable tells raft that a message to id could not be sent.
func (n *Node) ReportUnreachable(id uint64) {
	n.control(func() { n.rn.ReportUnreachable(id) }, false)
}

// ReportSnapshot tells raft whether a snapshot sent to id arrived. The
// report is never dropped: raft keeps the peer paused until told.
func (n *Node) ReportSnapshot(id uint64, ok bool) {
	status := raft.SnapshotFinish
	if !ok {
		status = raft.SnapshotFailure
	}
	n.control(func() { n.rn.ReportSnapshot(id, status) }, true)
}

// control runs f on the node's goroutine without blocking the caller.
// When the queue is full, f is dropped unless keep, in which case it is
// queued from a new goroutine.
func (n *Node) control(f func(), keep bool) {
	select {
	case n.ctrlc <- f:
		return
	default:
	}
	if keep {
		go func() {
			select {
			case n.ctrlc <- f:
			case <-n.quit:
			}
		}()
	}
}

// OpenSnapshot opens the body of the local snapshot at index, for a
// transport to stream to a member that needs it.
func (n *Node) OpenSnapshot(index uint64) (io.ReadCloser, int64, error) {
	infos, err := storage.ListSnapshots(n.cfg.DataDir)
	if err != nil {
		return nil, 0, err
	}
	for i := len(infos) - 1; i >= 0; i-- {
		if infos[i].Index == index {
			r, err := storage.OpenSnapshot(infos[i])
			if err != nil {
				return nil, 0, err
			}
			return r, r.Size(), nil
		}
	}
	return nil, 0, fmt.Errorf("raftnode: no snapshot at index %d in %s", index, n.cfg.DataDir)
}

// ReceiveSnapshot stores the body of a snapshot a leader sent (m is its
// MsgSnap, size the body's length) as a local snapshot file, then steps m
// into raft, which installs it through Ready if it is still newer than the
// log.
func (n *Node) ReceiveSnapshot(m raftpb.Message, r io.Reader, size int64) error {
	if m.Type != raftpb.MsgSnap || m.Snapshot == nil {
		return fmt.Errorf("raftnode: receive snapshot: message %s carries no snapshot", m.Type)
	}
	meta := m.Snapshot.Metadata
	_, err := storage.SaveSnapshot(n.cfg.DataDir, meta, func(w io.Writer) error {
		got, err := io.Copy(w, io.LimitReader(r, size))
		if err == nil && got != size {
			err = fmt.Errorf("snapshot body ended after %d of %d bytes", got, size)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("raftnode: receiving snapshot %d from %d: %w", meta.Index, m.From, err)
	}
	n.logger.Info("received snapshot", "index", meta.Index, "term", meta.Term, "from", m.From, "bytes", size)
	select {
	case n.recvc <- m:
		return nil
	case <-n.quit:
		return ErrStopped
	}
}

// installSnapshot replaces the state with the snapshot raft accepted from
// the leader (already stored by ReceiveSnapshot). It runs on the node's
// goroutine, before the Ready's entries are saved.
func (n *Node) installSnapshot(snap raftpb.Snapshot) error {
	meta := snap.Metadata
	infos, err := storage.ListSnapshots(n.cfg.DataDir)
	if err != nil {
		return err
	}
	var info *storage.SnapshotInfo
	for i := range infos {
		if infos[i].Index == meta.Index && infos[i].Term == meta.Term {
			info = &infos[i]
		}
	}
	if info == nil {
		return fmt.Errorf("raftnode: raft installs snapshot %d (term %d) but no such file is in %s", meta.Index, meta.Term, n.cfg.DataDir)
	}
	snapshot, err := storage.ReadSnapshot(*info)
	if err != nil {
		return fmt.Errorf("raftnode: reading received snapshot: %w", err)
	}
	err = n.sm.Restore(snapshot.Body)
	snapshot.Close() // the state machine keeps nothing of the body
	if err != nil {
		return fmt.Errorf("raftnode: restoring received snapshot %s: %w", info.Path, err)
	}
	n.walMu.Lock()
	err = n.wal.SaveSnapshotMarker(storage.SnapshotMarker{Index: meta.Index, Term: meta.Term})
	n.walMu.Unlock()
	if err != nil {
		return fmt.Errorf("raftnode: recording received snapshot %d in the WAL: %w", meta.Index, err)
	}
	if err := n.ms.ApplySnapshot(raftpb.Snapshot{Metadata: meta}); err != nil {
		return fmt.Errorf("raftnode: loading received snapshot %d into raft storage: %w", meta.Index, err)
	}
	n.snapIndex, n.snapBase = meta.Index, meta.Index
	n.confState, n.appliedTerm = cloneConfState(meta.ConfState), meta.Term
	n.applied.Store(meta.Index)
	n.mu.Lock()
	n.status.SnapshotIndex = meta.Index
	n.status.Commit = max(n.status.Commit, meta.Index)
	n.mu.Unlock()
	n.logger.Info("installed snapshot from the leader", "index", meta.Index, "term", meta.Term)
	return nil
}

// ReadIndex returns an index such that every write the group had committed
// when the call was made is at or below it (raft's ReadIndex, confirmed by a
// quorum of the leader's heartbeats). Once AppliedIndex reaches it, a local
// read sees everything committed before the call: this is ZooKeeper's sync.
// A request lost to a change of leader, or on the network (raft does not
// retransmit it), is asked again, until ctx ends.
func (n *Node) ReadIndex(ctx context.Context) (uint64, error) {
	for {
		idx, err := n.readIndexOnce(ctx)
		if !errors.Is(err, ErrLeaderChanged) {
			return idx, err
		}
		if err := n.WaitLeader(ctx); err != nil {
			return 0, err
		}
	}
}

func (n *Node) readIndexOnce(ctx context.Context) (uint64, error) {
	id := n.readSeq.Add(1)
	ch := make(chan readResult, 1)
	n.readMu.Lock()
	n.reads[id] = ch
	n.readMu.Unlock()
	defer func() {
		n.readMu.Lock()
		delete(n.reads, id)
		n.readMu.Unlock()
	}()
	// The leader keys pending reads by this context, for every member:
	// it must be unique in the group, not only here, and across this
	// member's restarts (a leader may still hold a request of the last
	// run): readSeq starts at a random value (Start).
	rctx := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, n.cfg.ID), id)
	ask := func() error {
		select {
		case n.ctrlc <- func() { n.rn.ReadIndex(rctx) }:
			return nil
		case <-n.quit:
			return n.stoppedErr()
		case <-ctx.Done():
			return fmt.Errorf("raftnode: read index: %w", ctx.Err())
		}
	}
	if err := ask(); err != nil {
		return 0, err
	}
	// raft retransmits neither the request a follower forwards to the
	// leader nor the leader's answer, and a leader that steps down and is
	// elected again forgets its pending reads without a change of leader
	// here: ask again, with the same context, every election timeout. The
	// leader answers a context it still holds once, and an answer to an
	// earlier copy is as good as one to the last.
	retry := time.NewTicker(time.Duration(n.cfg.ElectionTicks) * n.cfg.TickInterval)
	defer retry.Stop()
	for {
		select {
		case res := <-ch:
			return res.index, res.err
		case <-retry.C:
			if err := ask(); err != nil {
				return 0, err
			}
		case <-n.quit:
			return 0, n.stoppedErr()
		case <-ctx.Done():
			return 0, fmt.Errorf("raftnode: read index: %w", ctx.Err())
		}
	}
}

type readResult struct {
	index uint64
	err   error
}

// deliverReads answers the ReadIndex calls raft has confirmed. It runs on
// the node's goroutine, so it never blocks: each call is answered once and
// forgotten, and a second answer for the same request (raft delivering a
// read state twice) finds nothing to answer.
func (n *Node) deliverReads(states []raft.ReadState) {
	if len(states) == 0 {
		return
	}
	n.readMu.Lock()
	defer n.readMu.Unlock()
	for _, rs := range states {
		if len(rs.RequestCtx) != 16 || binary.BigEndian.Uint64(rs.RequestCtx) != n.cfg.ID {
			continue
		}
		id := binary.BigEndian.Uint64(rs.RequestCtx[8:])
		if ch, ok := n.reads[id]; ok {
			delete(n.reads, id)
			select {
			case ch <- readResult{index: rs.Index}:
			default:
			}
		}
	}
}

// failReads fails every ReadIndex waiting: its request may be lost with
// the old leader.
func (n *Node) failReads(err error) {
	n.readMu.Lock()
	defer n.readMu.Unlock()
	for id, ch := range n.reads {
		select {
		case ch <- readResult{err: err}:
		default:
		}
		delete(n.reads, id)
	}
}

// WaitApplied waits until the state machine has applied index.
func (n *Node) WaitApplied(ctx context.Context, index uint64) error {
	for {
		n.appliedMu.Lock()
		wake := n.appliedWake
		n.appliedMu.Unlock()
		if n.applied.Load() >= index {
			return nil
		}
		select {
		case <-wake:
		case <-n.quit:
			return n.stoppedErr()
		case <-ctx.Done():
			return fmt.Errorf("raftnode: waiting for index %d (applied %d): %w", index, n.applied.Load(), ctx.Err())
		}
	}
}

// wakeApplied wakes WaitApplied callers after entries were applied.
func (n *Node) wakeApplied() {
	n.appliedMu.Lock()
	close(n.appliedWake)
	n.appliedWake = make(chan struct{})
	n.appliedMu.Unlock()
}

// PeerProgress is the leader's view of one member's replication.
type PeerProgress struct {
	Match     uint64 // highest index known replicated there
	Next      uint64 // next index to send
	State     string // "StateProbe", "StateReplicate" or "StateSnapshot"
	Active    bool   // heard from within the election timeout
	IsLearner bool   // a learner (observer): replicates, does not vote
}

// recentlyActive returns the members a leader has heard from since its
// last quorum check (raft's RecentActive), nil when it does not lead.
func (n *Node) recentlyActive() map[uint64]bool {
	if n.rn.BasicStatus().RaftState != raft.StateLeader {
		return nil
	}
	active := make(map[uint64]bool)
	n.rn.WithProgress(func(id uint64, _ raft.ProgressType, p tracker.Progress) {
		if p.RecentActive {
			active[id] = true
		}
	})
	return active
}

// updateProgress copies the leader's replication progress into the status
// (on ticks: raft's Status allocates). A member counts as active if raft has heard from it since its last
// quorum check or was active before it (wasActive, taken before the tick
// that may have run one): with CheckQuorum the leader forgets every
// member's activity once an election timeout, in Tick, and relearns it
// from their next answers, so without wasActive every member would show
// inactive for a tick each election timeout (mntr's zk_synced_followers
// and zk_learners dropping to 0 on a healthy ensemble).
func (n *Node) updateProgress(wasActive map[uint64]bool) {
	var prog map[uint64]PeerProgress
	st := n.rn.Status()
	if st.RaftState == raft.StateLeader {
		prog = make(map[uint64]PeerProgress, len(st.Progress))
		for id, p := range st.Progress {
			prog[id] = PeerProgress{Match: p.Match, Next: p.Next, State: p.State.String(),
				Active: p.RecentActive || wasActive[id], IsLearner: p.IsLearner}
		}
	}
	voters := append([]uint64(nil), n.confState.Voters...)
	learners := append([]uint64(nil), n.confState.Learners...)
	n.mu.Lock()
	n.status.Progress = prog
	n.status.Voters, n.status.Learners = voters, learners
	n.mu.Unlock()
}

// The node is the TCP transport's Handler and Reporter (ReportUnreachable
// and ReportSnapshot above).

// Raft steps a message from another member (transport.Handler).
func (n *Node) Raft(m raftpb.Message) { n.Step(m) }

// App passes an application message to Config.OnApp (transport.Handler).
func (n *Node) App(from uint64, data []byte) {
	if n.cfg.OnApp != nil {
		n.cfg.OnApp(from, data)
	}
}

// Snapshot stores a snapshot a leader streams (transport.Handler).
func (n *Node) Snapshot(m raftpb.Message, r io.Reader, size int64) error {
	return n.ReceiveSnapshot(m, r, size)
}

// SendApp sends an application message to another member's OnApp; it
// reports false when the message was dropped (no TCP transport, unknown
// member, or its queue is full).
func (n *Node) SendApp(to uint64, data []byte) bool {
	if n.tcp == nil {
		return false
	}
	return n.tcp.SendApp(to, data)
}

// PeerConnected reports whether the stream to member id is up.
func (n *Node) PeerConnected(id uint64) bool {
	return n.tcp != nil && n.tcp.Connected(id)
}

// startTransport starts the TCP transport of Config.Peers.
func (n *Node) startTransport() error {
	tr, err := transport.New(transport.Config{
		ID:           n.cfg.ID,
		ClusterID:    n.cfg.ClusterID,
		Listen:       n.cfg.Listen,
		Peers:        n.cfg.Peers,
		Handler:      n,
		Reporter:     n,
		OpenSnapshot: n.OpenSnapshot,
		Logger:       n.cfg.Logger,
		PeerClosed:   n.peerClosed,
		// raft's messages hold entries of at most maxMsgBytes in all, or
		// one bigger entry (a proposal); twice that leaves room to spare.
		MaxRaftMessageBytes: 2*max(maxMsgBytes, n.cfg.MaxProposalBytes) + 64<<10,
	})
	if err != nil {
		return fmt.Errorf("raftnode: peer transport: %w", err)
	}
	if err := tr.Start(); err != nil {
		return fmt.Errorf("raftnode: peer transport: %w", err)
	}
	n.tcp = tr
	n.cfg.Transport = tr
	return nil
}
