// Package raftnode orders every state change of Paddock through an etcd raft
// group and drives the state machine with the committed log. It is, with
// internal/storage, the only importer of go.etcd.io/raft.
//
// # Ownership
//
// A Node owns the raft.Node, its MemoryStorage and the WAL. One goroutine
// (run) owns all three and loops over raft's Ready: for each Ready it
//
//  1. saves the hard state and the new entries to the WAL with one write and
//     at most one fsync (group commit: all proposals that raft gathered while
//     the previous fsync ran share this one),
//  2. appends the entries to the MemoryStorage,
//  3. hands the messages to the transport (none in standalone mode; this is
//     where a transport will plug in),
//  4. applies the committed entries, in log order, to the StateMachine,
//  5. calls Advance.
//
// StateMachine.Apply is therefore called from that goroutine only, for every
// committed entry with no gap, and only once the entry is durable. Entries
// raft writes itself get an Apply with empty data so that the state machine's
// applied index moves with the log: the empty entry a new leader appends, and
// membership changes, which raftnode applies to raft itself.
//
// # Snapshots and compaction
//
// Every Config.SnapCount applied entries the run goroutine calls
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
// concurrent use. Propose returns when raft accepted the proposal, not when
// it is applied: the state machine learns of it through Apply, and callers
// that need the outcome wait for it there. A cancelled context abandons the
// wait, not the write: a proposal raft already accepted may still commit.
//
// If persisting fails (a WAL write or fsync error), the node stops: raft's
// state could no longer be trusted. Done is closed and Err says why.
package raftnode
