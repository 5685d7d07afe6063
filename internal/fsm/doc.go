// Package fsm is Paddock's replicated state machine: the one deterministic
// function that applies a committed log entry to the data tree and the session
// table. Live apply, WAL replay and snapshot restore all go through Apply.
//
// An Entry carries every non-deterministic value (time, session id and
// password, the caller's authenticated identities); the zxid of an entry is its
// raft log index. Apply returns the per-operation results and the changes that
// watches fire on; it never performs I/O, reads a clock, or fires watches
// itself. Expected failures (NoNode, BadVersion, NoAuth...) are results. An
// entry that cannot be decoded means the log is corrupt: Apply panics naming
// the index.
//
// Checks run in PrepRequestProcessor's order, so a request that breaks two
// rules gets the code ZooKeeper gives. A multi applies its ops one by one with
// an undo log; when one fails, everything is rolled back and every op reports
// an error (0 before the failing op, its code, -2 after), as ZooKeeper does.
//
// deleteContainer (opcode 20) follows ZooKeeper for clients (no ACL or
// version check; only ephemerals are refused, with BadVersion). Entries with
// no session come from the server's container reaper and delete only what
// ContainerManager would still pick at the entry's time: an empty container
// that has had children, or an empty TTL node whose mtime is more than its
// TTL ago.
//
// An ensemble member's configuration shown at /zookeeper/config
// (Machine.ShowConfig) is its own view, outside the replicated state:
// snapshots leave it out and every op decides by the node's replicated
// fields (tree.Tree.Replicated), so members whose nodes show different
// things, and a replay of the log, still apply every entry alike.
//
// Machine is not safe for concurrent use: the server serialises Apply with its
// reads under its own lock.
package fsm
