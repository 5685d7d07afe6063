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
// Machine is not safe for concurrent use: the server serialises Apply with its
// reads under its own lock.
package fsm
