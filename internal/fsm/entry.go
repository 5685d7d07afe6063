package fsm

import "github.com/paddockhq/paddock/internal/proto"

// EntryType says what a log entry does.
type EntryType uint8

// Entry types. Values are part of the on-disk format: never renumber.
const (
	// EntryCreateSession opens a session (Session, Timeout, Passwd).
	EntryCreateSession EntryType = 1
	// EntryCloseSession closes or expires a session and removes its ephemerals.
	EntryCloseSession EntryType = 2
	// EntryTxn applies Ops: one write request, or a multi when Multi is set.
	EntryTxn EntryType = 3
	// EntryMoveSession records that the session's client now talks to
	// ensemble member Origin (ZooKeeper's session owner): from then on,
	// requests of the session that other members proposed are refused with
	// SESSIONMOVED.
	EntryMoveSession EntryType = 4
)

// Entry is one state change as it travels through the log.
type Entry struct {
	Type EntryType
	// ReqID lets the proposing server match the applied entry to the waiting
	// request; 0 when nobody waits.
	ReqID uint64
	// Time is the proposer's wall clock in milliseconds since the epoch; it
	// becomes ctime/mtime.
	Time    int64
	Session int64
	// Timeout and Passwd describe a new session (EntryCreateSession).
	Timeout int32
	Passwd  []byte
	// Auth is the caller's authenticated identities, for ACL checks.
	Auth  []proto.ID
	Multi bool
	Ops   []Op
	// Term is the raft term the proposing server saw when it proposed a
	// client's write, a session move or (in an ensemble) a session's
	// expiry, or 0. The server applies an entry with a Term only
	// if raft committed it in that term: a write that reached a later
	// leader late (forwarded by a member that had it queued for the old
	// one) after its client was told the connection was lost is dropped,
	// so it cannot land after the session's later writes.
	Term uint64
	// Origin is the ensemble member (server id) whose client made the
	// request, or 0: standalone, or an entry no client asked for (expiry,
	// the reaper). A request of a session that has moved to another member
	// since (EntryMoveSession) is refused with SESSIONMOVED and changes
	// nothing, so that a write delayed on the way from the old member can
	// never apply after what the client did through the new one.
	Origin uint64
	// Conn and Seq place a client's write in its connection's order:
	// Conn names the connection (a random number, never 0), Seq counts
	// its writes from 1. A write applies only after the connection's
	// previous one (Seq-1) did; otherwise that one was lost on the way
	// (a proposal dropped, or forwarded to a leader that never got it, or
	// dropped for its term) and this one is refused, on every member
	// alike, so that no one sees a client's later write without its
	// earlier ones (FIFO client order). 0 for entries no connection made.
	Conn uint64
	Seq  uint64
	// Flags are the proposing server's settings that decide how the entry
	// applies (EntryFlag...), so that every member, a replay of the log
	// and a restore decide alike whatever their own configuration says.
	Flags uint64
}

// Entry flags.
const (
	// EntryFlagEnforceQuota: a create or setData that would take a quota
	// past its hard limit fails with QUOTAEXCEEDED (ZooKeeper's
	// zookeeper.enforceQuota; Options.EnforceQuota, checkQuota).
	EntryFlagEnforceQuota uint64 = 1 << iota
)

// Op is one write operation. The fields used depend on Op: create-like ops use
// Path, Data, ACL, Flags and TTL; delete, setData and check use Version;
// setACL uses ACL and Version.
type Op struct {
	Op      proto.OpCode
	Path    string
	Data    []byte
	ACL     []proto.ACL
	Flags   int32
	TTL     int64
	Version int32
}

// OpResult is the outcome of one Op.
type OpResult struct {
	// Op is the op's code, or proto.OpError when the op failed or a multi
	// aborted.
	Op   proto.OpCode
	Err  proto.ErrCode
	Path string     // created path (create ops)
	Stat proto.Stat // create2/createContainer/createTTL, setData, setACL
}

// Change is a state change that watches fire on.
type Change struct {
	Type proto.EventType
	Path string
	// ACL is the node's ACL (for a deleted node, the ACL it had), so the
	// server can hold back events from watchers without READ permission.
	ACL []proto.ACL
}

// Result is what applying an entry produced.
type Result struct {
	Index   uint64
	Zxid    int64
	ReqID   uint64
	Session int64
	Type    EntryType
	// Err is the request-level error: for a single op its code; for a multi
	// OK (failures are in Ops), except for an unknown session, and
	// MARSHALLINGERROR, with no Ops, when an op's quota could not be read
	// (checkQuota).
	Err     proto.ErrCode
	Ops     []OpResult
	Changes []Change
}
