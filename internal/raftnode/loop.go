package raftnode

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/paddockhq/paddock/internal/storage"
)

// run is the goroutine that owns the raft node, the in-memory log and the
// WAL.
func (n *Node) run() {
	defer n.shutdown()
	ticker := time.NewTicker(n.cfg.TickInterval)
	defer ticker.Stop()
	n.maybeCampaign()
	for {
		// Wait for work unless raft already has some.
		if !n.rn.HasReady() {
			select {
			case <-ticker.C:
				active := n.recentlyActive()
				n.rn.Tick()
				n.updateProgress(active)
				n.watchLeader()
			case p := <-n.propc:
				n.queueProposal(p)
			case m := <-n.recvc:
				n.step(m)
			case f := <-n.ctrlc:
				f()
			case <-n.app.done:
				if err := n.stepAppended(); err != nil {
					n.fail(err)
					return
				}
			case res := <-n.snapDone:
				if err := n.finishSnapshot(res); err != nil {
					n.fail(err)
					return
				}
				// Entries applied while it was written may already call
				// for the next one; do not wait for another Ready.
				n.maybeSnapshot()
			case <-n.stopc:
				return
			}
		}
		select {
		case <-n.stopc:
			n.dropBatch(ErrStopped)
			return
		default:
		}
		// Take everything queued meanwhile, so it shares this Ready's fsync.
		for i := 0; i < maxProposalsPerReady; i++ {
			select {
			case p := <-n.propc:
				n.queueProposal(p)
				continue
			case m := <-n.recvc:
				n.proposeBatch() // keep proposals and messages in arrival order
				n.step(m)
				continue
			case <-n.app.done:
				if err := n.stepAppended(); err != nil {
					n.fail(err)
					return
				}
				continue
			default:
			}
			break
		}
		n.proposeBatch()
		if n.rn.HasReady() {
			if err := n.handleReady(n.rn.Ready()); err != nil {
				n.fail(err)
				return
			}
		}
	}
}

// queueProposal adds a proposal taken from the queue to the batch that
// proposeBatch hands to raft, first proposing the batch if p would take it
// past maxBatchBytes.
func (n *Node) queueProposal(p proposal) {
	if len(n.batch) > 0 && n.batchBytes+len(p.data) > maxBatchBytes {
		n.proposeBatch()
	}
	n.batch = append(n.batch, p)
	n.batchBytes += len(p.data)
}

// proposeBatch hands the batched proposals to raft as one proposal message
// of several entries, in their queue order: raft then appends them, and a
// leader replicates them, in one step instead of one per entry. If raft
// refuses the message, every proposal in it is dropped.
func (n *Node) proposeBatch() {
	if len(n.batch) == 0 {
		return
	}
	// raft keeps the entries (its unstable log may take over this slice),
	// so each batch gets its own.
	ents := make([]raftpb.Entry, len(n.batch))
	for i := range n.batch {
		ents[i].Data = n.batch[i].data
	}
	err := n.rn.Step(raftpb.Message{Type: raftpb.MsgProp, From: n.cfg.ID, Entries: ents})
	if err != nil {
		if errors.Is(err, raft.ErrProposalDropped) {
			err = fmt.Errorf("%w: %v", ErrProposalDropped, err)
		}
		n.dropBatch(err)
	}
	clear(n.batch)
	n.batch, n.batchBytes = n.batch[:0], 0
}

// dropBatch tells the owners of the batched proposals that they were
// dropped, and empties the batch.
func (n *Node) dropBatch(err error) {
	for _, p := range n.batch {
		p.dropped(err)
	}
	clear(n.batch)
	n.batch, n.batchBytes = n.batch[:0], 0
}

// step hands a received message to raft.
func (n *Node) step(m raftpb.Message) {
	if m.From == n.raftLead && n.raftLead != raft.None {
		n.leaderTicks = 0
		if n.lead == raft.None { // a learner hears from its leader again
			n.setLeader(n.raftLead, false)
		}
	}
	if err := n.rn.Step(m); err != nil && !errors.Is(err, raft.ErrStepPeerNotFound) {
		n.logger.Debug("raft refused a message", "type", m.Type.String(), "from", m.From, "err", err)
	}
}

// fail records why the node stops by itself.
func (n *Node) fail(err error) {
	n.logger.Error("raft node stopping after a failure", "err", err)
	n.mu.Lock()
	n.err = err
	n.mu.Unlock()
}

// shutdown stops raft and the snapshotter and closes the WAL. After a
// failure (fail) it also forgets the leader and calls Config.OnStop.
func (n *Node) shutdown() {
	close(n.quit) // aborts a snapshot being written, refuses new proposals
	// Proposals still batched or queued will never be applied: tell their
	// owners. The batch is not empty when a failure stopped the loop while
	// it was taking proposals.
	dropErr := n.stoppedErr()
	n.dropBatch(dropErr)
	n.dropQueued(dropErr) // a proposer that queues one after this drops it (propose)
	if err := n.Err(); err != nil {
		// A stopped node follows no leader: Status must not go on
		// naming one (a server would keep sending it session
		// liveness, and report a leader it no longer hears from).
		n.mu.Lock()
		n.status.Lead, n.status.IsLeader = raft.None, false
		n.mu.Unlock()
		if n.cfg.OnStop != nil {
			n.cfg.OnStop(err)
		}
	}
	n.snapWG.Wait()
	n.app.stop()
	select {
	case res := <-n.snapDone:
		if res.err == nil {
			n.logger.Info("snapshot finished during shutdown; its WAL marker is not written", "path", res.path)
		}
	default:
	}
	if n.tcp != nil {
		if err := n.tcp.Close(); err != nil {
			n.logger.Warn("closing the peer transport", "err", err)
		}
	}
	n.walMu.Lock()
	n.closeErr = n.wal.Close()
	n.walMu.Unlock()
	// Snapshot writers and purges are over (snapWG): another server may
	// use the snapshot directory now.
	if err := n.unlockSnap(); err != nil && n.closeErr == nil {
		n.closeErr = fmt.Errorf("raftnode: releasing the snapshot directory's lock: %w", err)
	}
	close(n.done)
}

// handleReady handles one Ready of raft with asynchronous storage writes:
// the append (entries, hard state) goes to the appender, messages to other
// members go out at once (raft keeps back those that must wait for the
// append, and attaches them to it), and committed entries, which raft hands
// out only once they are durable here, are applied now.
func (n *Node) handleReady(rd raft.Ready) error {
	// A change of leader is reported (OnLeaderChange) before Term moves
	// on to the new term, which comes in the same Ready: a caller that
	// reads Term and then finds it still leads knows it led in that term
	// (see Term).
	if rd.SoftState != nil {
		n.raftLead, n.leaderTicks = rd.SoftState.Lead, 0
		n.setLeader(rd.SoftState.Lead, rd.SoftState.RaftState == raft.StateLeader)
	}
	if !raft.IsEmptyHardState(rd.HardState) {
		n.mu.Lock()
		n.status.Term, n.status.Commit = rd.HardState.Term, max(n.status.Commit, rd.HardState.Commit)
		n.mu.Unlock()
	}
	out := n.outBuf[:0]
	var apply *raftpb.Message
	for i := range rd.Messages {
		m := rd.Messages[i]
		switch m.To {
		case raft.LocalAppendThread:
			if m.Snapshot != nil {
				// A leader sent a snapshot (ReceiveSnapshot stored it): it
				// replaces the state once the appends before it are
				// durable, and before this message's entries, which
				// follow it.
				if err := n.app.waitIdle(); err != nil {
					return err
				}
				if err := n.installSnapshot(*m.Snapshot); err != nil {
					return err
				}
				n.wakeApplied()
				m.Snapshot = nil
			}
			n.app.push(m)
		case raft.LocalApplyThread:
			apply = &rd.Messages[i]
		default:
			out = append(out, m)
		}
	}
	n.send(out) // the transport copies what it queues
	clear(out)
	n.outBuf = out[:0]
	if apply != nil {
		if err := n.apply(apply.Entries); err != nil {
			return err
		}
		if len(apply.Entries) > 0 {
			n.mu.Lock()
			n.status.Commit = max(n.status.Commit, n.applied.Load())
			n.mu.Unlock()
			n.wakeApplied()
		}
		for _, r := range apply.Responses {
			n.stepLocal(r)
		}
	}
	n.deliverReads(rd.ReadStates)
	n.maybeCampaign()
	n.maybeSnapshot()
	return nil
}

// stepAppended steps the responses of the appends the appender has made
// durable, or returns the error that stopped it.
func (n *Node) stepAppended() error {
	resps, err := n.app.take(n.respBuf)
	for _, r := range resps {
		n.stepLocal(r)
	}
	clear(resps)
	n.respBuf = resps[:0]
	return err
}

// stepLocal steps a response raft addressed to this node itself.
func (n *Node) stepLocal(m raftpb.Message) {
	if err := n.rn.Step(m); err != nil {
		n.logger.Debug("raft refused a local message", "type", m.Type.String(), "err", err)
	}
}

// send hands raft messages to the transport (a group of one has none).
func (n *Node) send(msgs []raftpb.Message) {
	if len(msgs) == 0 {
		return
	}
	if n.cfg.Transport == nil {
		for _, m := range msgs {
			n.logger.Debug("dropping raft message: no transport", "type", m.Type.String(), "to", m.To)
		}
		return
	}
	n.cfg.Transport.Send(msgs)
}

// apply hands committed entries to the state machine in order.
func (n *Node) apply(ents []raftpb.Entry) error {
	for i := range ents {
		e := &ents[i]
		if applied := n.applied.Load(); e.Index != applied+1 {
			return fmt.Errorf("raftnode: committed entry %d does not follow applied index %d", e.Index, applied)
		}
		switch e.Type {
		case raftpb.EntryNormal:
			n.sm.Apply(e.Index, e.Term, e.Data)
		case raftpb.EntryConfChange:
			var cc raftpb.ConfChange
			if err := cc.Unmarshal(e.Data); err != nil {
				return fmt.Errorf("raftnode: decoding membership change at index %d: %w", e.Index, err)
			}
			n.confState = *n.rn.ApplyConfChange(cc)
			n.campaigned = false
			n.sm.Apply(e.Index, e.Term, nil)
		case raftpb.EntryConfChangeV2:
			var cc raftpb.ConfChangeV2
			if err := cc.Unmarshal(e.Data); err != nil {
				return fmt.Errorf("raftnode: decoding membership change at index %d: %w", e.Index, err)
			}
			n.confState = *n.rn.ApplyConfChange(cc)
			n.campaigned = false
			n.sm.Apply(e.Index, e.Term, nil)
		default:
			return fmt.Errorf("raftnode: entry %d has unknown type %v", e.Index, e.Type)
		}
		n.appliedTerm = e.Term
		n.applied.Store(e.Index)
	}
	return nil
}

// setLeader records the leader raft reports, wakes WaitLeader, fails
// ReadIndex calls the old leader may have lost, and tells OnLeaderChange.
func (n *Node) setLeader(lead uint64, isLeader bool) {
	changed := lead != n.lead
	n.lead = lead
	n.mu.Lock()
	known := n.status.Lead != raft.None
	if changed {
		n.logger.Info("raft leader changed", "leader", lead, "is_leader", isLeader, "term", n.status.Term)
	}
	n.status.Lead, n.status.IsLeader = lead, isLeader
	switch {
	case lead != raft.None && !known:
		close(n.leaderc)
	case lead == raft.None && known:
		n.leaderc = make(chan struct{})
	}
	n.mu.Unlock()
	if changed {
		n.failReads(ErrLeaderChanged)
		if n.cfg.OnLeaderChange != nil {
			n.cfg.OnLeaderChange(lead, isLeader)
		}
	}
}

// watchLeader makes a learner notice that its leader is gone, which raft
// never does: a learner has no election timeout (etcd raft's tickElection
// only acts for promotable nodes), so it would keep a dead leader forever,
// and serve while no quorum exists. After an election timeout without a
// message from its leader, a learner reports no leader, until it hears from
// that leader again or raft reports a new one.
func (n *Node) watchLeader() {
	if n.raftLead == raft.None || n.lead == raft.None || !slices.Contains(n.confState.Learners, n.cfg.ID) {
		return
	}
	n.leaderTicks++
	if n.leaderTicks > n.cfg.ElectionTicks {
		n.setLeader(raft.None, false)
	}
}

// maybeCampaign makes a node that is its group's only voter campaign at
// once instead of waiting for an election timeout. Other nodes wait for
// raft's randomized timeouts.
func (n *Node) maybeCampaign() {
	if n.campaigned || n.lead != raft.None {
		return
	}
	cs := n.confState
	if len(cs.Voters) != 1 || cs.Voters[0] != n.cfg.ID || len(cs.VotersOutgoing) != 0 {
		return
	}
	n.campaigned = true
	if err := n.rn.Campaign(); err != nil {
		n.logger.Warn("campaign failed", "err", err)
	}
}

// snapResult is the outcome of writing one snapshot.
type snapResult struct {
	meta    raftpb.SnapshotMetadata
	path    string
	err     error
	started time.Time
}

// maybeSnapshot starts a snapshot once snapEvery entries (at most
// SnapCount; see snapInterval) were applied since the last one started and
// the WAL written since then reaches SnapLogPercent of the last snapshot's
// size, unless one is being written.
func (n *Node) maybeSnapshot() {
	applied := n.applied.Load()
	if n.snapEvery == 0 {
		n.snapEvery = snapInterval(n.cfg.SnapCount)
	}
	if n.snapInFlight || n.purging || applied-n.snapBase < n.snapEvery {
		return
	}
	walBytes := n.wal.Stats().BytesWritten
	if n.cfg.SnapLogPercent > 0 && n.lastSnapSize > 0 &&
		(walBytes-n.snapWALBase)*100 < uint64(n.lastSnapSize)*n.cfg.SnapLogPercent {
		return
	}
	n.snapBase, n.snapWALBase = applied, walBytes
	n.snapEvery = snapInterval(n.cfg.SnapCount)
	write, err := n.sm.Snapshot()
	if err != nil {
		n.logger.Error("state machine could not capture a snapshot", "index", applied, "err", err)
		return
	}
	meta := raftpb.SnapshotMetadata{Index: applied, Term: n.appliedTerm, ConfState: cloneConfState(n.confState)}
	n.snapInFlight = true
	n.snapWG.Add(1)
	go func() {
		defer n.snapWG.Done()
		start := time.Now()
		path, err := storage.SaveSnapshot(n.cfg.DataDir, meta, func(w io.Writer) error {
			return write(abortWriter{w: w, quit: n.quit})
		})
		n.snapDone <- snapResult{meta: meta, path: path, err: err, started: start}
	}()
}

// snapInterval draws how many applied entries the next snapshot waits for:
// between half of snapCount and snapCount, at random, as ZooKeeper does
// (SyncRequestProcessor), so that the members of an ensemble, which apply
// the same entries, do not all spend the CPU and disk of a snapshot at
// once.
func snapInterval(snapCount uint64) uint64 {
	if snapCount < 2 {
		return snapCount
	}
	return snapCount/2 + 1 + rand.Uint64N(snapCount-snapCount/2)
}

// finishSnapshot records a durable snapshot in the WAL, compacts the
// in-memory log and deletes old snapshots and WAL segments. Only a WAL write
// failure is fatal.
func (n *Node) finishSnapshot(res snapResult) error {
	n.snapInFlight = false
	if res.err != nil {
		n.logger.Error("writing snapshot failed", "index", res.meta.Index, "err", res.err)
		return nil
	}
	index := res.meta.Index
	if index <= n.snapIndex {
		// A newer snapshot from the leader was installed while this one
		// was written: recording this one would take the snapshot index
		// (and the WAL's marker) back. Its file goes with the next purge.
		n.logger.Info("snapshot saved after a newer one was installed; not recording it",
			"path", res.path, "index", index, "installed_index", n.snapIndex)
		return nil
	}
	n.walMu.Lock()
	err := n.wal.SaveSnapshotMarker(storage.SnapshotMarker{Index: index, Term: res.meta.Term})
	n.walMu.Unlock()
	if err != nil {
		return fmt.Errorf("raftnode: recording snapshot %d in the WAL: %w", index, err)
	}
	n.snapIndex = index
	n.mu.Lock()
	n.status.SnapshotIndex = index
	n.mu.Unlock()
	if _, err := n.ms.CreateSnapshot(index, &res.meta.ConfState, nil); err != nil && !errors.Is(err, raft.ErrSnapOutOfDate) {
		n.logger.Error("recording snapshot in raft storage", "index", index, "err", err)
	}
	slack := min(catchUpEntries, n.cfg.SnapCount)
	if index > slack {
		if err := n.ms.Compact(index - slack); err != nil && !errors.Is(err, raft.ErrCompacted) {
			n.logger.Error("compacting raft storage", "index", index-slack, "err", err)
		}
	}
	// Deleting old snapshots and WAL segments (unlinking hundreds of
	// megabytes, syncing directories) runs on its own goroutine: on this
	// one it held up raft, and every write with it, for as long. The next
	// snapshot waits for it (purging).
	n.purging = true
	n.snapWG.Add(1)
	gate := n.purgeGate
	go func() {
		defer n.snapWG.Done()
		if gate != nil {
			select {
			case <-gate:
			case <-n.quit:
			}
		}
		n.purge()
		// Back on the node's goroutine: the purge is over, and entries
		// applied meanwhile may call for the next snapshot (if no more
		// come, nothing else would start it).
		select {
		case n.ctrlc <- func() { n.purging = false; n.maybeSnapshot() }:
		case <-n.quit:
		}
	}()
	took := time.Since(res.started)
	var size int64
	if fi, err := os.Stat(res.path); err == nil {
		size = fi.Size()
	}
	n.lastSnapSize = size
	n.logger.Info("snapshot saved", "path", res.path, "index", index, "term", res.meta.Term,
		"took", took, "bytes", size)
	if n.cfg.OnSnapshot != nil {
		n.cfg.OnSnapshot(took, size)
	}
	return nil
}

// purge deletes the snapshots past SnapRetainCount and the WAL segments
// older than the oldest snapshot kept. The WAL lock is held only to drop
// the segments from the WAL, not while their files are deleted.
func (n *Node) purge() {
	kept, err := storage.PurgeSnapshots(n.cfg.DataDir, n.cfg.SnapRetainCount)
	if err != nil {
		n.logger.Error("purging old snapshots", "err", err)
		return
	}
	if len(kept) == 0 {
		return
	}
	n.walMu.Lock()
	remove, err := n.wal.Release(kept[0].Index)
	n.walMu.Unlock()
	if err == nil {
		err = remove()
	}
	if err != nil {
		n.logger.Error("releasing WAL segments", "index", kept[0].Index, "err", err)
	}
}

// abortWriter fails writes once the node shuts down, so that Close does not
// wait for a large snapshot to finish.
type abortWriter struct {
	w    io.Writer
	quit <-chan struct{}
}

func (a abortWriter) Write(p []byte) (int, error) {
	select {
	case <-a.quit:
		return 0, ErrStopped
	default:
		return a.w.Write(p)
	}
}

func cloneConfState(cs raftpb.ConfState) raftpb.ConfState {
	return raftpb.ConfState{
		Voters:         append([]uint64(nil), cs.Voters...),
		Learners:       append([]uint64(nil), cs.Learners...),
		VotersOutgoing: append([]uint64(nil), cs.VotersOutgoing...),
		LearnersNext:   append([]uint64(nil), cs.LearnersNext...),
		AutoLeave:      cs.AutoLeave,
	}
}
