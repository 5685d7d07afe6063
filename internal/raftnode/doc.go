// Package raftnode orders every state change of Paddock through an etcd raft
// group and drives the state machine with the committed log. It is, with
// internal/storage, the only importer of go.etcd.io/raft.
//
// # Ownership
//
// A Node owns a raft.RawNode, its MemoryStorage and the WAL. One goroutine
// (run) owns all three. It takes every proposal queued by Propose (a bounded
// channel) and hands it to raft, then processes raft's Ready:
//
//  1. applies the committed entries that are already durable in the WAL, in
//     log order, to the StateMachine (so a write is answered after one fsync,
//     not after the next batch's as well),
//  2. saves the hard state and the new entries to the WAL with one write and
//     at most one fsync (group commit: all proposals queued while the
//     previous fsync ran share this one),
//  3. appends the entries to the MemoryStorage,
//  4. hands the messages to the transport (none in standalone mode; this is
//     where a transport will plug in),
//  5. applies any committed entries not yet durable locally (possible only
//     with more members), then calls Advance.
//
// StateMachine.Apply is therefore called from that goroutine only, for every
// committed entry with no gap, and only once the entry is durable. Entries
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
// compacts the MemoryStorage (keeping some entries for followers that are a
// little behind), deletes all but the Config.SnapRetainCount newest snapshot
// files, and releases the WAL segments older than the oldest snapshot kept, so
// any kept snapshot can still be replayed from.
//
// # Start-up
//
// Start restores the newest snapshot whose checksum verifies (an older one if
// the newest is damaged) with StateMachine.Restore, replays the WAL entries
// after it into the MemoryStorage, and restarts raft with Applied set to the
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
// the callback given to Propose. A cancelled context abandons the wait for
// queue space, not the write: a queued proposal may still commit.
//
// If persisting fails (a WAL write or fsync error), the node stops: raft's
// state could no longer be trusted. Done is closed and Err says why.
package raftnode
