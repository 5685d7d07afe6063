package fsm

import (
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/tree"
)

// undoKind says which change an undoStep takes back.
type undoKind uint8

const (
	undoCreate     undoKind = iota // delete the node created at path; restore the parent's cversion and pzxid
	undoDelete                     // put node back at path with acl, at its place; restore the parent's cversion and pzxid
	undoSetData                    // restore node's data, version, mzxid and mtime
	undoData                       // restore node's data only (a quota node's statistics)
	undoSetACL                     // restore node's ACL and aversion
	undoShowConfig                 // show the member's configuration again (data, mzxid, mtime; tree.ShowConfig)
)

// undoStep records how to take back one change made inside a multi, so
// that a failed multi leaves the tree as it was. A step is a value in
// Machine.undo, reused from multi to multi, rather than a closure: a
// closure per op was a third of the allocations of applying a multi.
type undoStep struct {
	kind    undoKind
	path    string
	node    *tree.Node
	parent  *tree.Node
	data    []byte
	acl     []proto.ACL
	version int32 // version (setData), aversion (setACL) or the parent's cversion (create, delete)
	mzxid   int64 // mzxid (setData) or the parent's pzxid (create, delete)
	mtime   int64
	at      int // the deleted node's place in its parent's order (delete)
}

// record appends u to the undo log when the op being applied is inside a
// multi.
func (m *Machine) record(u undoStep) {
	if m.recording {
		m.undo = append(m.undo, u)
	}
}

// rollBack takes back every recorded step, newest first, and empties the
// log.
func (m *Machine) rollBack() {
	for j := len(m.undo) - 1; j >= 0; j-- {
		u := &m.undo[j]
		switch u.kind {
		case undoCreate:
			m.tree.Delete(u.path, 0)
			u.parent.Cversion, u.parent.Pzxid = u.version, u.mzxid
		case undoDelete:
			m.tree.Reinsert(u.path, u.node, u.acl, u.at)
			u.parent.Cversion, u.parent.Pzxid = u.version, u.mzxid
		case undoSetData:
			m.tree.SetData(u.node, u.data, u.version, u.mzxid, u.mtime)
		case undoData:
			n := u.node
			m.tree.SetData(n, u.data, n.Version, n.Mzxid, n.Mtime)
		case undoSetACL:
			m.tree.SetACL(u.node, u.acl, u.version)
		case undoShowConfig:
			m.tree.ShowConfig(u.data, u.mzxid, u.mtime)
		}
	}
	m.forget()
}

// forget empties the undo log, keeping its room (up to maxUndoRoom steps)
// but nothing it pointed to, and ends the multi's ephemeralContainers and
// pendingCversions.
func (m *Machine) forget() {
	clear(m.ephemeralContainers)
	m.ephemeralContainers = m.ephemeralContainers[:0]
	clear(m.pendingCversions)
	m.pendingCversions = m.pendingCversions[:0]
	if cap(m.undo) > maxUndoRoom {
		m.undo = nil
		return
	}
	clear(m.undo)
	m.undo = m.undo[:0]
}

// maxUndoRoom bounds the undo log kept between multis: a multi of
// thousands of ops does not leave its log's room behind for good.
const maxUndoRoom = 1024
