package fsm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/paddockhq/paddock/internal/acl"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/tree"
	"github.com/paddockhq/paddock/internal/zpath"
)

// isSpecialPath reports the paths ZooKeeper refuses to delete.
func isSpecialPath(p string) bool {
	return p == "/" || p == tree.ZooKeeperPath || p == tree.QuotaPath || p == tree.ConfigPath
}

// checkVersion is ZooKeeper's checkAndIncVersion: -1 matches any version.
func checkVersion(current, expected int32) (int32, bool) {
	if expected != -1 && expected != current {
		return 0, false
	}
	return current + 1, true
}

func (m *Machine) create(e *Entry, op *Op, zxid int64, r *Result) OpResult {
	flags := op.Flags
	if flags < proto.FlagPersistent || flags > proto.FlagPersistentSequentialWithTTL {
		return fail(proto.ErrBadArguments)
	}
	// PrepRequestProcessor.validateCreateRequest: a TTL mode needs extended
	// types, then EphemeralType.validateTTL checks the TTL against the mode
	// (create/create2 carry ttl -1).
	ttlMode := flags == proto.FlagPersistentWithTTL || flags == proto.FlagPersistentSequentialWithTTL
	if ttlMode && !m.opts.ExtendedTypes {
		return fail(proto.ErrUnimplemented)
	}
	ttl := int64(-1)
	if op.Op == proto.OpCreateTTL {
		ttl = op.TTL
	}
	if ttlMode {
		if ttl <= 0 || ttl > tree.MaxTTL {
			return fail(proto.ErrBadArguments)
		}
	} else if ttl >= 0 {
		return fail(proto.ErrBadArguments)
	}
	ephemeral := flags == proto.FlagEphemeral || flags == proto.FlagEphemeralSequential
	sequential := flags == proto.FlagPersistentSequential || flags == proto.FlagEphemeralSequential ||
		flags == proto.FlagPersistentSequentialWithTTL
	if ephemeral && e.Session == 0 {
		return fail(proto.ErrSessionExpired)
	}
	path := op.Path
	slash := strings.LastIndexByte(path, '/')
	if slash < 0 || strings.IndexByte(path, 0) >= 0 {
		return fail(proto.ErrBadArguments)
	}
	parentPath := path[:slash]
	if parentPath == "" {
		parentPath = "/"
	}
	acls, ok := acl.Fixup(op.ACL, e.Auth)
	if !ok {
		return fail(proto.ErrInvalidACL)
	}
	parent := m.tree.Get(parentPath)
	if parent == nil {
		return fail(proto.ErrNoNode)
	}
	if !acl.Allowed(m.tree.ACL(parent), proto.PermCreate, e.Auth) {
		return fail(proto.ErrNoAuth)
	}
	cversion := m.cversion(parent)
	if sequential {
		path += fmt.Sprintf("%010d", cversion)
	}
	if zpath.Validate(path) != nil {
		return fail(proto.ErrBadArguments)
	}
	if name := path[slash+1:]; name == "" || parent.Child(name) != nil {
		// Also catches "/" itself, which has no name under a parent.
		return fail(proto.ErrNodeExists)
	}
	if m.tree.Kind(parent) == tree.Ephemeral || slices.Contains(m.ephemeralContainers, parent) {
		return fail(proto.ErrNoChildrenForEphemerals)
	}
	if e.Flags&EntryFlagEnforceQuota != 0 {
		if err := m.checkQuota(path, 1, int64(len(op.Data))); err != proto.ErrOK {
			return fail(err)
		}
	}
	if op.Op == proto.OpCreateTTL && !ttlMode {
		// createTTL with a non-TTL mode and a negative ttl passes every
		// check of ZooKeeper's PrepRequestProcessor (so a missing parent,
		// a missing permission or an existing node is answered as for
		// any create) and then fails in DataTree.processTxn
		// (EphemeralType.TTL.toEphemeralOwner throws), stopping the
		// server. Refusing it here, where ZooKeeper would have created
		// the node, is the only sane reading.
		return fail(proto.ErrBadArguments)
	}
	var owner int64
	switch {
	case op.Op == proto.OpCreateContainer:
		owner = tree.ContainerOwner
	case op.Op == proto.OpCreateTTL:
		owner = tree.TTLOwner(ttl)
	case ephemeral:
		owner = e.Session
	}
	oldCversion, oldPzxid := parent.Cversion, parent.Pzxid
	n := m.tree.CreateIn(parent, path, op.Data, acls, owner, zxid, e.Time)
	if m.recording && parent.Cversion != cversion+1 {
		// The parent's counter stopped at MaxInt32 (tree.CreateIn); the
		// multi's later ops count on from what this one took, wrapping.
		m.setPendingCversion(parent, cversion+1)
	}
	if op.Op == proto.OpCreateContainer && ephemeral && m.recording {
		// PrepRequestProcessor takes the node's pending record's owner
		// from the mode (the session) and the txn from the opcode (a
		// container): to the later ops of the same multi the node is
		// ephemeral, and a child of it fails.
		m.ephemeralContainers = append(m.ephemeralContainers, n)
	}
	m.record(undoStep{kind: undoCreate, path: path, parent: parent, version: oldCversion, mzxid: oldPzxid})
	m.quotaNodeCreated(path, n)
	m.updateQuota(path, 1, int64(len(op.Data)))
	res := OpResult{Op: op.Op, Path: path}
	if op.Op != proto.OpCreate {
		res.Stat = m.tree.Stat(n)
	}
	r.Changes = append(r.Changes,
		Change{Type: proto.EventNodeCreated, Path: path, ACL: m.tree.ACL(n)},
		Change{Type: proto.EventNodeChildrenChanged, Path: parentPath, ACL: m.tree.ACL(parent)})
	return res
}

// cversion returns the child-creation counter a create under parent
// names a sequential node by: the parent's, or inside a multi, once the
// parent's counter has stopped at MaxInt32 (tree.CreateIn), the count the
// multi's earlier creates under it reached. PrepRequestProcessor numbers a
// multi's ops from its pending change records, whose counter wraps, while
// DataTree keeps the parent's at MaxInt32: a multi of three creates under a
// parent at MaxInt32-1 names them 2147483646, 2147483647 and -2147483648,
// and leaves the parent at MaxInt32.
func (m *Machine) cversion(parent *tree.Node) int32 {
	for _, p := range m.pendingCversions {
		if p.parent == parent {
			return p.cversion
		}
	}
	return parent.Cversion
}

func (m *Machine) setPendingCversion(parent *tree.Node, cversion int32) {
	for i := range m.pendingCversions {
		if m.pendingCversions[i].parent == parent {
			m.pendingCversions[i].cversion = cversion
			return
		}
	}
	m.pendingCversions = append(m.pendingCversions, pendingCversion{parent, cversion})
}

func (m *Machine) delete(e *Entry, op *Op, zxid int64, r *Result) OpResult {
	path := op.Path
	slash := strings.LastIndexByte(path, '/')
	if slash < 0 || strings.IndexByte(path, 0) >= 0 || isSpecialPath(path) {
		return fail(proto.ErrBadArguments)
	}
	parentPath := path[:slash]
	if parentPath == "" {
		parentPath = "/"
	}
	parent := m.tree.Get(parentPath)
	if parent == nil {
		return fail(proto.ErrNoNode)
	}
	container := op.Op == proto.OpDeleteContainer
	if !container && !acl.Allowed(m.tree.ACL(parent), proto.PermDelete, e.Auth) {
		return fail(proto.ErrNoAuth)
	}
	var n *tree.Node
	name := path[slash+1:]
	if name != "" {
		n = parent.Child(name) // m.tree.Get(path), without walking to parent again
	}
	if n == nil {
		return fail(proto.ErrNoNode)
	}
	if container {
		if n.NumChildren() > 0 {
			return fail(proto.ErrNotEmpty)
		}
		if !m.reapable(e, n) {
			return fail(proto.ErrBadVersion)
		}
	} else {
		if _, ok := checkVersion(n.Version, op.Version); !ok {
			return fail(proto.ErrBadVersion)
		}
		if n.NumChildren() > 0 {
			return fail(proto.ErrNotEmpty)
		}
	}
	nodeACL := m.tree.ACL(n)
	oldCversion, oldPzxid := parent.Cversion, parent.Pzxid
	at := -1
	if m.recording { // a failed multi puts n back where it was
		at = parent.ChildIndex(name)
	}
	m.tree.DeleteIn(parent, path, zxid)
	m.record(undoStep{kind: undoDelete, path: path, node: n, acl: nodeACL, parent: parent, version: oldCversion, mzxid: oldPzxid, at: at})
	m.updateQuota(path, -1, -int64(len(n.Data)))
	r.Changes = append(r.Changes,
		Change{Type: proto.EventNodeDeleted, Path: path, ACL: nodeACL},
		Change{Type: proto.EventNodeChildrenChanged, Path: parentPath, ACL: m.tree.ACL(parent)})
	return OpResult{Op: op.Op}
}

// reapable decides whether deleteContainer may remove n (already known to
// have no children). A client's request may remove any node but an ephemeral
// one: PrepRequestProcessor refuses only EphemeralType.NORMAL with BadVersion,
// so persistent (VOID), container and TTL nodes all go, with no ACL or
// version check. The server's own reaper entries (no session) re-check, with
// the entry's time, that the node is still due as ContainerManager judged it,
// so a node used or replaced since the reaper looked survives.
func (m *Machine) reapable(e *Entry, n *tree.Node) bool {
	kind := m.tree.Kind(n)
	if e.Session != 0 {
		return kind != tree.Ephemeral
	}
	switch kind {
	case tree.Container:
		return n.Cversion > 0
	case tree.TTL:
		return e.Time-n.Mtime > n.TTL()
	default:
		return false
	}
}

func (m *Machine) setData(e *Entry, op *Op, zxid int64, r *Result) OpResult {
	if zpath.Validate(op.Path) != nil {
		return fail(proto.ErrBadArguments)
	}
	n := m.tree.Get(op.Path)
	if n == nil {
		return fail(proto.ErrNoNode)
	}
	if !acl.Allowed(m.tree.ACL(n), proto.PermWrite, e.Auth) {
		return fail(proto.ErrNoAuth)
	}
	// What the replicated state holds, not a member's configuration that
	// /zookeeper/config may show instead (tree.ShowConfig).
	old := m.tree.Replicated(n)
	if e.Flags&EntryFlagEnforceQuota != 0 {
		// Before the version, as PrepRequestProcessor checks.
		if err := m.checkQuota(op.Path, 0, int64(len(op.Data)-len(old.Data))); err != proto.ErrOK {
			return fail(err)
		}
	}
	version, ok := checkVersion(old.Version, op.Version)
	if !ok {
		return fail(proto.ErrBadVersion)
	}
	if data, mzxid, mtime, shown := m.tree.ConfigShown(); shown && op.Path == tree.ConfigPath {
		// The write replaces the configuration shown: a failed multi
		// shows it again (after undoSetData, recorded next).
		m.record(undoStep{kind: undoShowConfig, data: data, mzxid: mzxid, mtime: mtime})
	}
	m.tree.SetData(n, op.Data, version, zxid, e.Time)
	m.record(undoStep{kind: undoSetData, node: n, data: old.Data, version: old.Version, mzxid: old.Mzxid, mtime: old.Mtime})
	m.updateQuota(op.Path, 0, int64(len(op.Data)-len(old.Data)))
	r.Changes = append(r.Changes, Change{Type: proto.EventNodeDataChanged, Path: op.Path, ACL: m.tree.ACL(n)})
	return OpResult{Op: op.Op, Stat: m.tree.Stat(n)}
}

func (m *Machine) setACL(e *Entry, op *Op, _ int64) OpResult {
	if zpath.Validate(op.Path) != nil {
		return fail(proto.ErrBadArguments)
	}
	acls, ok := acl.Fixup(op.ACL, e.Auth)
	if !ok {
		return fail(proto.ErrInvalidACL)
	}
	n := m.tree.Get(op.Path)
	if n == nil {
		return fail(proto.ErrNoNode)
	}
	if !acl.Allowed(m.tree.ACL(n), proto.PermAdmin, e.Auth) {
		return fail(proto.ErrNoAuth)
	}
	aversion, ok := checkVersion(n.Aversion, op.Version)
	if !ok {
		return fail(proto.ErrBadVersion)
	}
	oldACL, oldAversion := m.tree.ACL(n), n.Aversion
	m.tree.SetACL(n, acls, aversion)
	m.record(undoStep{kind: undoSetACL, node: n, acl: oldACL, version: oldAversion})
	return OpResult{Op: op.Op, Stat: m.tree.Stat(n)}
}

func (m *Machine) check(e *Entry, op *Op) OpResult {
	if zpath.Validate(op.Path) != nil {
		return fail(proto.ErrBadArguments)
	}
	n := m.tree.Get(op.Path)
	if n == nil {
		return fail(proto.ErrNoNode)
	}
	if !acl.Allowed(m.tree.ACL(n), proto.PermRead, e.Auth) {
		return fail(proto.ErrNoAuth)
	}
	if _, ok := checkVersion(m.tree.Replicated(n).Version, op.Version); !ok {
		return fail(proto.ErrBadVersion)
	}
	return OpResult{Op: op.Op}
}
