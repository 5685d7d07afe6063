package fsm

import (
	"fmt"
	"slices"
	"sort"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/tree"
	"github.com/paddockhq/paddock/internal/zpath"
)

// Options are the behaviour switches that must be identical on every member.
type Options struct {
	// ExtendedTypes enables TTL nodes (ZooKeeper's extendedTypesEnabled).
	ExtendedTypes bool
}

// treeOptions are the tree's share of the options: a tree made by New and
// one restored from a snapshot classify nodes alike.
func (o Options) treeOptions() tree.Options {
	return tree.Options{ExtendedTypes: o.ExtendedTypes}
}

// Session is a session as the replicated state knows it.
type Session struct {
	ID      int64
	Timeout int32
	Passwd  []byte
	// Owner is the ensemble member the session's client talks to (set by
	// EntryCreateSession and EntryMoveSession from Entry.Origin), or 0
	// when unknown (standalone).
	Owner uint64
	// conn and seq are the Entry.Conn and Entry.Seq of the last client
	// write of the session that applied (0 before any): the session's
	// next write must be the same connection's next (see follows).
	conn, seq uint64
}

// follows reports whether a write numbered seq on connection conn comes
// right after the session's last applied write: the next of the same
// connection, or the first of another.
func (s *Session) follows(conn, seq uint64) bool {
	if conn == s.conn {
		return seq == s.seq+1
	}
	return seq == 1
}

// moved reports whether a request proposed by member origin comes from a
// member the session has since moved away from.
func (s *Session) moved(origin uint64) bool {
	return origin != 0 && s.Owner != 0 && s.Owner != origin
}

// Machine is the replicated state: the data tree and the session table.
type Machine struct {
	opts     Options
	tree     *tree.Tree
	sessions map[int64]*Session
	applied  uint64
	lastZxid int64

	undo      []undoStep // undo log of the multi being applied
	recording bool       // whether ops record undo steps (only inside a multi)
	// preMulti holds the quotas as before the multi being applied, for
	// checkQuota, while a multi with EntryFlagEnforceQuota changes nodes
	// under /zookeeper/quota; nil otherwise.
	preMulti *quotasBefore
	// ephemeralContainers are the containers that createContainer ops with
	// an ephemeral mode made in the multi being applied (see create).
	ephemeralContainers []*tree.Node
	// pendingCversions are the counters a multi's creates have reached
	// under parents whose own counter stopped at MaxInt32 (see cversion).
	pendingCversions []pendingCversion

	// decoded is the entry ApplyTo decodes into, with room for the next
	// one's arrays and the identities seen: applying another member's
	// write then allocates only what the tree keeps.
	decoded Entry
	room    decodeRoom
}

// pendingCversion is a parent's child-creation counter as the multi being
// applied has counted it, where the parent's own has stopped (see
// Machine.cversion).
type pendingCversion struct {
	parent   *tree.Node
	cversion int32
}

// New returns a machine holding an empty tree.
func New(opts Options) *Machine {
	return &Machine{opts: opts, tree: tree.New(opts.treeOptions()), sessions: make(map[int64]*Session)}
}

// Tree returns the data tree for reads. Callers must hold the lock that
// serialises them with Apply.
func (m *Machine) Tree() *tree.Tree { return m.tree }

// ShowConfig makes /zookeeper/config show an ensemble member's own
// configuration, data, with mzxid and mtime as given and version -1, as
// ZooKeeper's ZKDatabase.initConfigInZKDatabase does (see tree.ShowConfig).
// It is the member's view, not replicated state: snapshots leave it out,
// entries apply by the node's replicated fields whatever it shows, and a
// committed setData of the node replaces it. Restore drops it: the caller
// shows it again. It fires no watch. The caller must hold the lock that
// excludes Apply.
func (m *Machine) ShowConfig(data []byte, mzxid, mtime int64) {
	m.tree.ShowConfig(data, mzxid, mtime)
}

// AppliedIndex is the index of the last applied entry.
func (m *Machine) AppliedIndex() uint64 { return m.applied }

// LastZxid is the zxid of the last applied entry (ZooKeeper's
// lastProcessedZxid).
func (m *Machine) LastZxid() int64 { return m.lastZxid }

// Session returns a session, or nil if it is not open.
func (m *Machine) Session(id int64) *Session { return m.sessions[id] }

// Sessions returns the open sessions sorted by id.
func (m *Machine) Sessions() []*Session {
	out := make([]*Session, 0, len(m.sessions))
	for _, s := range m.sessions {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// ApplyEmpty records an index that carries no entry (raft's empty entries).
func (m *Machine) ApplyEmpty(index uint64) {
	m.applied = index
	m.lastZxid = int64(index)
}

// Apply decodes and applies the entry at index. It panics if data does not
// decode: the log is corrupt and carrying on would diverge.
func (m *Machine) Apply(index uint64, data []byte) Result {
	var r Result
	m.ApplyTo(index, data, &r)
	return r
}

// ApplyTo is Apply writing the result to *r, as ApplyEntryTo does.
func (m *Machine) ApplyTo(index uint64, data []byte, r *Result) {
	e := &m.decoded
	if err := decodeEntry(data, e, &m.room); err != nil {
		panic(fmt.Sprintf("fsm: log entry %d is corrupt: %v", index, err))
	}
	m.ApplyEntryTo(index, e, r)
	m.room.keep(e)
}

// ApplyEntry applies a decoded entry at index.
func (m *Machine) ApplyEntry(index uint64, e *Entry) Result {
	var r Result
	m.ApplyEntryTo(index, e, &r)
	return r
}

// ApplyEntryTo is ApplyEntry writing the result to *r. The result's Ops and
// Changes are appended to r.Ops[:0] and r.Changes[:0], so a caller that
// gives them room (as the server does, from storage in its per-request
// record) applies a write without allocating them.
func (m *Machine) ApplyEntryTo(index uint64, e *Entry, r *Result) {
	if index <= m.applied {
		panic(fmt.Sprintf("fsm: entry %d applied after %d", index, m.applied))
	}
	zxid := int64(index)
	m.applied, m.lastZxid = index, zxid
	*r = Result{Index: index, Zxid: zxid, ReqID: e.ReqID, Session: e.Session, Type: e.Type,
		Ops: r.Ops[:0], Changes: r.Changes[:0]}
	switch e.Type {
	case EntryCreateSession:
		if _, ok := m.sessions[e.Session]; !ok {
			m.sessions[e.Session] = &Session{ID: e.Session, Timeout: e.Timeout, Passwd: e.Passwd, Owner: e.Origin}
		}
	case EntryMoveSession:
		ss, ok := m.sessions[e.Session]
		if !ok {
			r.Err = proto.ErrSessionExpired
			return
		}
		ss.Owner = e.Origin
	case EntryCloseSession:
		ss, ok := m.sessions[e.Session]
		if !ok {
			r.Err = proto.ErrSessionExpired
			return
		}
		if ss.moved(e.Origin) {
			r.Err = proto.ErrSessionMoved
			return
		}
		m.closeSession(e.Session, zxid, r)
	case EntryTxn:
		if e.Session != 0 {
			ss := m.sessions[e.Session]
			if ss == nil {
				r.Err = proto.ErrSessionExpired
				return
			}
			if ss.moved(e.Origin) {
				r.Err = proto.ErrSessionMoved
				return
			}
			if e.Conn != 0 {
				if !ss.follows(e.Conn, e.Seq) {
					// An earlier write of the connection never applied:
					// refuse this one too (its client has lost the
					// connection, or will).
					r.Err = proto.ErrConnectionLoss
					return
				}
				ss.conn, ss.seq = e.Conn, e.Seq
			}
		}
		m.applyTxn(e, zxid, r)
	default:
		panic(fmt.Sprintf("fsm: log entry %d has unknown type %d", index, e.Type))
	}
}

func (m *Machine) closeSession(id int64, zxid int64, r *Result) {
	m.recording = false // a close is never rolled back
	for _, p := range m.tree.Ephemerals(id) {
		n := m.tree.Get(p)
		acl := m.tree.ACL(n)
		m.tree.Delete(p, zxid)
		m.updateQuota(p, -1, -int64(len(n.Data)))
		parent, _ := zpath.Parent(p)
		r.Changes = append(r.Changes,
			Change{Type: proto.EventNodeDeleted, Path: p, ACL: acl},
			Change{Type: proto.EventNodeChildrenChanged, Path: parent, ACL: m.tree.ACL(m.tree.Get(parent))})
	}
	delete(m.sessions, id)
}

func (m *Machine) applyTxn(e *Entry, zxid int64, r *Result) {
	if n := len(e.Ops); cap(r.Ops) >= n {
		r.Ops = r.Ops[:n]
		clear(r.Ops)
	} else {
		r.Ops = make([]OpResult, n)
	}
	// The ops append their changes to r.Changes; a failed op appends none.
	changes := r.Changes
	// Only a multi can roll back, so only a multi records undo steps.
	m.recording = e.Multi
	if !e.Multi {
		if len(e.Ops) != 1 {
			panic(fmt.Sprintf("fsm: log entry %d: single txn with %d ops", zxid, len(e.Ops)))
		}
		m.undo = m.undo[:0]
		res := m.applyOp(e, &e.Ops[0], zxid, r)
		r.Ops[0] = res
		r.Err = res.Err
		return
	}
	m.undo = m.undo[:0]
	if e.Flags&EntryFlagEnforceQuota != 0 && quotaOps(e.Ops) {
		m.preMulti = m.quotasBeforeMulti()
		defer func() { m.preMulti = nil }()
	}
	// Room for every op's changes at once (at most two each), instead of
	// growing the slice several times over a multi.
	r.Changes = slices.Grow(r.Changes, 2*len(e.Ops))
	for i := range e.Ops {
		res := m.applyOp(e, &e.Ops[i], zxid, r)
		if res.Err != proto.ErrOK {
			// Roll back in reverse order and report ZooKeeper's shape:
			// 0 for ops before, the code for this op, -2 after.
			m.rollBack()
			clear(r.Changes[len(changes):])
			r.Changes = changes
			if res.Err == proto.ErrMarshallingError {
				// A quota StatsTrack cannot read (checkQuota): ZooKeeper's
				// request processor fails the whole multi with an error
				// txn, answered without per-op results.
				r.Err, r.Ops = res.Err, r.Ops[:0]
				return
			}
			for j := range r.Ops {
				code := proto.ErrOK
				switch {
				case j == i:
					code = res.Err
				case j > i:
					code = proto.ErrRuntimeInconsistency
				}
				r.Ops[j] = OpResult{Op: proto.OpError, Err: code}
			}
			return
		}
		r.Ops[i] = res
	}
	m.forget()
}

func fail(code proto.ErrCode) OpResult {
	return OpResult{Op: proto.OpError, Err: code}
}

// applyOp validates and applies one op, recording how to undo it. A
// successful op appends the changes it made to r.Changes.
func (m *Machine) applyOp(e *Entry, op *Op, zxid int64, r *Result) OpResult {
	switch op.Op {
	case proto.OpCreate, proto.OpCreate2, proto.OpCreateContainer, proto.OpCreateTTL:
		return m.create(e, op, zxid, r)
	case proto.OpDelete, proto.OpDeleteContainer:
		return m.delete(e, op, zxid, r)
	case proto.OpSetData:
		return m.setData(e, op, zxid, r)
	case proto.OpSetACL:
		return m.setACL(e, op, zxid)
	case proto.OpCheck:
		return m.check(e, op)
	default:
		return fail(proto.ErrUnimplemented)
	}
}
