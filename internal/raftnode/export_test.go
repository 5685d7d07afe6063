package raftnode

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

// HoldPurges makes the node's purges of old snapshots and WAL segments wait
// until release is closed.
func (n *Node) HoldPurges(release <-chan struct{}) {
	done := make(chan struct{})
	n.ctrlc <- func() { n.purgeGate = release; close(done) }
	<-done
}
