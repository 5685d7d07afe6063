// Package raftnode orders every state change of Paddock through an etcd raft
// group and drives the state machine with the committed log. It is, with
// internal/storage, the only importer of go.etcd.io/raft.
//
// # Ownership
//
// A Node owns a raft.RawNode, its in-memory log (logStore: a raft.Storage
// with the semantics of raft.MemoryStorage, its entries kept in chunks so
// that appending never copies the whole log) and the WAL. One goroutine
// (run) owns the RawNode. raft runs with AsyncStorageWrites: the run
// goroutine takes every proposal queued by Propose (a bounded channel),
// hands it to raft, and processes raft's Ready:
//
//  1. the append (new entries, hard state) goes to the appender, a goroutine
//     of its own that writes everything queued with one WAL write and at
//     most one fsync (group commit: all appends queued while the previous
//     fsync ran share this one), then loads it into the in-memory log and
//     delivers the responses raft attached to it: to other members through
//     the transport, to this node back to the run goroutine, which steps
//     them;
//  2. messages to other members go to the transport at once (a leader's
//     appends reach its followers while it writes them itself; raft keeps
//     back what must wait for the local write, such as acknowledgements
//     and votes, and attaches it to the append);
//  3. committed entries, which raft hands out only once they are durable
//     here, are applied in log order to the StateMachine.
//
// So the run goroutine never waits for the disk: a leader steps its
// followers' acknowledgements while its own fsync runs, commits on a quorum
// of durable copies, and keeps sending heartbeats. A snapshot received from
// the leader is installed on the run goroutine once every earlier append is
// durable.
//
// StateMachine.Apply is therefore called from the run goroutine only, for
// every committed entry with no gap, and only once the entry is durable
// locally. Entries
// raft writes itself get an Apply with empty data so that the state machine's
// applied index moves with the log: the empty entry a new leader appends, and
// membership changes, which raftnode applies to raft itself.
//
// # Snapshots and compaction
//
// Every SnapCount/2 to SnapCount applied entries (drawn at random each time,
// as ZooKeeper does, so that members do not snapshot at once) the run
// goroutine calls
// StateMachine.Snapshot, then a background goroutine (one at a time) runs the
// returned function into storage.SaveSnapshot while Apply goes on. When the
// file is durable, the run goroutine records a snapshot marker in the WAL,
// compacts the in-memory log (keeping some entries for followers that are a
// little behind), deletes all but the Config.SnapRetainCount newest snapshot
// files, and releases the WAL segments older than the oldest snapshot kept, so
// any kept snapshot can still be replayed from.
//
// # Start-up
//
// Start restores the newest snapshot whose checksum verifies (an older one if
// the newest is damaged) with StateMachine.Restore, replays the WAL entries
// after it into the in-memory log, and restarts raft with Applied set to the
// snapshot index, so that raft delivers the committed entries after it
// through Ready and they reach the state machine through the same Apply as
// live ones. An empty data and log directory starts a new single-member
// group. In standalone mode (the node is the group's only voter) the node
// campaigns at once and is leader within a few milliseconds.
//
// # Callers
//
// Propose, WaitLeader, AppliedIndex, Status, Err, Done and Close are safe for
// concurrent use. Propose returns once the proposal is queued, not when it
// is applied: the state machine learns of it through Apply, and callers that
// need the outcome wait for it there; a proposal raft refuses is reported to
// the callback given to Propose, and so is, with ErrStopped, every proposal
// Propose accepted that the node had not handed to raft when it stopped
// (Close or a failure), even one queued as it stopped. A cancelled context
// abandons the wait for queue space, not the write: a queued proposal may
// still commit.
//
// If persisting fails (a WAL write or fsync error), the node stops: raft's
// state could no longer be trusted. Proposals not yet handed to raft are
// reported dropped, Status names no leader any more, Config.OnStop is told
// why, then Done is closed and Err says why. Entries raft had accepted are
// never applied: the caller fails whatever waits for them.
package raftnode
