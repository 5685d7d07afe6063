package raftnode

import (
	"encoding/binary"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// WALSyncs returns how many fsyncs the node's WAL has done.
func (n *Node) WALSyncs() uint64 { return n.wal.Stats().Syncs }

// WALSegments returns how many WAL segment files exist.
func (n *Node) WALSegments() int64 { return n.wal.Stats().Segments }

// FirstIndex returns the first index still held in raft's in-memory log.
func (n *Node) FirstIndex() uint64 {
	i, err := n.ms.FirstIndex()
	if err != nil {
		panic(err)
	}
	return i
}

// SnapshotInFlight reports whether a snapshot is being written.
func (n *Node) SnapshotInFlight() bool {
	done := make(chan bool)
	select {
	case n.ctrlc <- func() { done <- n.snapInFlight }:
		return <-done
	case <-n.done:
		return false
	}
}

// SnapshotOrPurgeInFlight reports whether a snapshot is being written or
// the purge after one is running: either holds the next snapshot back
// (maybeSnapshot).
func (n *Node) SnapshotOrPurgeInFlight() bool {
	done := make(chan bool)
	select {
	case n.ctrlc <- func() { done <- n.snapInFlight || n.purging }:
		return <-done
	case <-n.done:
		return false
	}
}

// HoldPurges makes the node's purges of old snapshots and WAL segments wait
// until release is closed.
func (n *Node) HoldPurges(release <-chan struct{}) {
	done := make(chan struct{})
	n.ctrlc <- func() { n.purgeGate = release; close(done) }
	<-done
}

// ReadSeq returns the sequence number of the node's last ReadIndex request
// (the second half of its request context).
func (n *Node) ReadSeq() uint64 { return n.readSeq.Load() }

// DeliverReadTwice registers a ReadIndex call waiting for request seq, as
// ReadIndex does, and hands deliverReads raft's answer for it, index, twice
// in one batch, as a duplicate delivery would. It returns what the call
// received. It runs on the caller's goroutine (deliverReads needs only
// readMu), so that a deliverReads that blocks hangs the caller, not the
// node.
func (n *Node) DeliverReadTwice(seq, index uint64) (uint64, bool) {
	ch := make(chan readResult, 1)
	n.readMu.Lock()
	n.reads[seq] = ch
	n.readMu.Unlock()
	rctx := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, n.cfg.ID), seq)
	rs := raft.ReadState{Index: index, RequestCtx: rctx}
	n.deliverReads([]raft.ReadState{rs, rs})
	select {
	case res := <-ch:
		return res.index, true
	default:
		return 0, false
	}
}

// FailWALWhileBatching makes the node fail as it does when its WAL fails
// while its loop is taking proposals: on the node's goroutine, it puts a
// proposal of data (told of a drop through onDrop) in the batch that is
// not yet handed to raft, closes the WAL under the appender, and waits
// until the appender's failed write is waiting for the loop, which then
// stops with the proposal still batched.
func (n *Node) FailWALWhileBatching(data []byte, onDrop func(error)) {
	n.ctrlc <- func() {
		n.queueProposal(proposal{data: data, onDrop: onDrop})
		n.walMu.Lock()
		_ = n.wal.Close()
		n.walMu.Unlock()
		n.app.push(raftpb.Message{Type: raftpb.MsgStorageAppend})
		_ = n.app.waitIdle()
		<-n.app.done // the failure is signalled: leave it for the loop
		signal(n.app.done)
	}
}
