package fsm

import (
	"fmt"
	"sort"
	"strings"

	"github.com/paddockhq/paddock/internal/acl"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/tree"
	"github.com/paddockhq/paddock/internal/zpath"
)

// model is a deliberately naive ZooKeeper state, written from
// PrepRequestProcessor and DataTree rather than from this package: a map from
// path to node, multis applied to a deep copy that is kept or dropped, no
// undo log, no ACL interning, no indexes.
type model struct {
	ext      bool
	nodes    map[string]*mnode
	sessions map[int64]Session
}

type mnode struct {
	data                              []byte
	acl                               []proto.ACL
	czxid, mzxid, pzxid, ctime, mtime int64
	version, creations, aversion      int32
	kind                              tree.Kind
	owner                             int64 // session of an ephemeral, TTL of a TTL node
	children                          map[string]bool
}

func newModel(ext bool) *model {
	m := &model{ext: ext, nodes: make(map[string]*mnode), sessions: make(map[int64]Session)}
	m.nodes["/"] = &mnode{data: []byte{}, acl: tree.OpenACL, children: map[string]bool{"zookeeper": true}}
	m.nodes["/zookeeper"] = &mnode{data: []byte{}, acl: tree.OpenACL, children: map[string]bool{"quota": true, "config": true}}
	m.nodes["/zookeeper/quota"] = &mnode{data: []byte{}, acl: tree.OpenACL, children: map[string]bool{}}
	m.nodes["/zookeeper/config"] = &mnode{data: []byte{}, acl: tree.ReadACL, aversion: -1, children: map[string]bool{}}
	return m
}

func (m *model) clone() *model {
	c := &model{ext: m.ext, nodes: make(map[string]*mnode, len(m.nodes)), sessions: m.sessions}
	for p, n := range m.nodes {
		cp := *n
		cp.children = make(map[string]bool, len(n.children))
		for k := range n.children {
			cp.children[k] = true
		}
		c.nodes[p] = &cp
	}
	return c
}

func mParent(p string) (string, string) {
	i := strings.LastIndex(p, "/")
	if i == 0 {
		return "/", p[1:]
	}
	return p[:i], p[i+1:]
}

func (n *mnode) stat() proto.Stat {
	owner := int64(0)
	if n.kind == tree.Ephemeral {
		owner = n.owner
	}
	nc := int32(len(n.children))
	return proto.Stat{Czxid: n.czxid, Mzxid: n.mzxid, Ctime: n.ctime, Mtime: n.mtime, Version: n.version,
		Cversion: 2*n.creations - nc, Aversion: n.aversion, EphemeralOwner: owner,
		DataLength: int32(len(n.data)), NumChildren: nc, Pzxid: n.pzxid}
}

func (n *mnode) rawOwner() int64 {
	switch n.kind {
	case tree.Ephemeral:
		return n.owner
	case tree.Container:
		return tree.ContainerOwner
	case tree.TTL:
		return tree.TTLOwner(n.owner)
	}
	return 0
}

func failed(code proto.ErrCode) (OpResult, []Change) {
	return OpResult{Op: proto.OpError, Err: code}, nil
}

// apply applies e at zxid and returns what Apply should return.
func (m *model) apply(e *Entry, zxid int64) (proto.ErrCode, []OpResult, []Change) {
	switch e.Type {
	case EntryCreateSession:
		if _, ok := m.sessions[e.Session]; !ok {
			m.sessions[e.Session] = Session{ID: e.Session, Timeout: e.Timeout, Passwd: e.Passwd}
		}
		return proto.ErrOK, nil, nil
	case EntryCloseSession:
		if _, ok := m.sessions[e.Session]; !ok {
			return proto.ErrSessionExpired, nil, nil
		}
		var mine []string
		for p, n := range m.nodes {
			if n.kind == tree.Ephemeral && n.owner == e.Session {
				mine = append(mine, p)
			}
		}
		sort.Strings(mine)
		var changes []Change
		for _, p := range mine {
			changes = append(changes, m.remove(p, zxid)...)
		}
		delete(m.sessions, e.Session)
		return proto.ErrOK, nil, changes
	}
	if _, ok := m.sessions[e.Session]; e.Session != 0 && !ok {
		return proto.ErrSessionExpired, nil, nil
	}
	if !e.Multi {
		res, ch := m.op(e, &e.Ops[0], zxid)
		return res.Err, []OpResult{res}, ch
	}
	c := m.clone()
	results := make([]OpResult, len(e.Ops))
	var changes []Change
	for i := range e.Ops {
		res, ch := c.op(e, &e.Ops[i], zxid)
		if res.Err != proto.ErrOK {
			for j := range results {
				code := proto.ErrOK
				if j == i {
					code = res.Err
				} else if j > i {
					code = proto.ErrRuntimeInconsistency
				}
				results[j] = OpResult{Op: proto.OpError, Err: code}
			}
			return proto.ErrOK, results, nil
		}
		results[i] = res
		changes = append(changes, ch...)
	}
	m.nodes = c.nodes
	return proto.ErrOK, results, changes
}

// remove deletes p and returns the changes a delete fires.
func (m *model) remove(p string, zxid int64) []Change {
	n := m.nodes[p]
	pp, name := mParent(p)
	parent := m.nodes[pp]
	delete(parent.children, name)
	if zxid > parent.pzxid {
		parent.pzxid = zxid
	}
	delete(m.nodes, p)
	return []Change{{Type: proto.EventNodeDeleted, Path: p, ACL: n.acl}, {Type: proto.EventNodeChildrenChanged, Path: pp, ACL: parent.acl}}
}

func versionOK(cur, want int32) bool { return want == -1 || want == cur }

func special(p string) bool {
	return p == "/" || p == "/zookeeper" || p == "/zookeeper/quota" || p == "/zookeeper/config"
}

func (m *model) op(e *Entry, op *Op, zxid int64) (OpResult, []Change) {
	switch op.Op {
	case proto.OpCreate, proto.OpCreate2, proto.OpCreateContainer, proto.OpCreateTTL:
		return m.create(e, op, zxid)
	case proto.OpDelete, proto.OpDeleteContainer:
		return m.del(e, op, zxid)
	case proto.OpSetData, proto.OpSetACL, proto.OpCheck:
		return m.update(e, op, zxid)
	}
	return failed(proto.ErrUnimplemented)
}

func (m *model) create(e *Entry, op *Op, zxid int64) (OpResult, []Change) {
	f := op.Flags
	if f < 0 || f > 6 {
		return failed(proto.ErrBadArguments)
	}
	ttlMode := f == 5 || f == 6
	if ttlMode && !m.ext {
		return failed(proto.ErrUnimplemented)
	}
	ttl := int64(-1)
	if op.Op == proto.OpCreateTTL {
		ttl = op.TTL
	}
	if ttlMode && (ttl <= 0 || ttl > 0xFFFFFFFFFF) || !ttlMode && ttl >= 0 {
		return failed(proto.ErrBadArguments)
	}
	ephemeral := f == 1 || f == 3
	if ephemeral && e.Session == 0 {
		return failed(proto.ErrSessionExpired)
	}
	path := op.Path
	slash := strings.LastIndex(path, "/")
	if slash < 0 || strings.Contains(path, "\x00") {
		return failed(proto.ErrBadArguments)
	}
	list, ok := acl.Fixup(op.ACL, e.Auth)
	if !ok {
		return failed(proto.ErrInvalidACL)
	}
	pp := path[:slash]
	if pp == "" {
		pp = "/"
	}
	parent := m.nodes[pp]
	if parent == nil {
		return failed(proto.ErrNoNode)
	}
	if !acl.Allowed(parent.acl, proto.PermCreate, e.Auth) {
		return failed(proto.ErrNoAuth)
	}
	if f == 2 || f == 3 || f == 6 {
		path += fmt.Sprintf("%010d", parent.creations)
	}
	if zpath.Validate(path) != nil {
		return failed(proto.ErrBadArguments)
	}
	if m.nodes[path] != nil {
		return failed(proto.ErrNodeExists)
	}
	if parent.kind == tree.Ephemeral {
		return failed(proto.ErrNoChildrenForEphemerals)
	}
	if op.Op == proto.OpCreateTTL && !ttlMode {
		// A negative ttl with another mode passes ZooKeeper's checks;
		// refused where ZooKeeper would fail in DataTree.
		return failed(proto.ErrBadArguments)
	}
	n := &mnode{data: op.Data, acl: list, czxid: zxid, mzxid: zxid, pzxid: zxid, ctime: e.Time, mtime: e.Time,
		children: map[string]bool{}}
	switch {
	case op.Op == proto.OpCreateContainer:
		n.kind = tree.Container
	case op.Op == proto.OpCreateTTL:
		n.kind, n.owner = tree.TTL, ttl
	case ephemeral:
		n.kind, n.owner = tree.Ephemeral, e.Session
	}
	m.nodes[path] = n
	_, name := mParent(path)
	parent.children[name] = true
	parent.creations++
	parent.pzxid = zxid
	res := OpResult{Op: op.Op, Path: path}
	if op.Op != proto.OpCreate {
		res.Stat = n.stat()
	}
	return res, []Change{{Type: proto.EventNodeCreated, Path: path, ACL: list}, {Type: proto.EventNodeChildrenChanged, Path: pp, ACL: parent.acl}}
}

func (m *model) del(e *Entry, op *Op, zxid int64) (OpResult, []Change) {
	path := op.Path
	slash := strings.LastIndex(path, "/")
	if slash < 0 || strings.Contains(path, "\x00") || special(path) {
		return failed(proto.ErrBadArguments)
	}
	pp := path[:slash]
	if pp == "" {
		pp = "/"
	}
	parent := m.nodes[pp]
	if parent == nil {
		return failed(proto.ErrNoNode)
	}
	reaper := op.Op == proto.OpDeleteContainer
	if !reaper && !acl.Allowed(parent.acl, proto.PermDelete, e.Auth) {
		return failed(proto.ErrNoAuth)
	}
	n := m.nodes[path]
	if n == nil {
		return failed(proto.ErrNoNode)
	}
	if !reaper && !versionOK(n.version, op.Version) {
		return failed(proto.ErrBadVersion)
	}
	if len(n.children) > 0 {
		return failed(proto.ErrNotEmpty)
	}
	if reaper {
		due := false
		switch {
		case e.Session != 0:
			due = n.kind != tree.Ephemeral
		case n.kind == tree.Container:
			due = n.creations > 0
		case n.kind == tree.TTL:
			due = e.Time-n.mtime > n.owner
		}
		if !due {
			return failed(proto.ErrBadVersion)
		}
	}
	return OpResult{Op: op.Op}, m.remove(path, zxid)
}

func (m *model) update(e *Entry, op *Op, zxid int64) (OpResult, []Change) {
	if zpath.Validate(op.Path) != nil {
		return failed(proto.ErrBadArguments)
	}
	var list []proto.ACL
	if op.Op == proto.OpSetACL {
		var ok bool
		if list, ok = acl.Fixup(op.ACL, e.Auth); !ok {
			return failed(proto.ErrInvalidACL)
		}
	}
	n := m.nodes[op.Path]
	if n == nil {
		return failed(proto.ErrNoNode)
	}
	perm := map[proto.OpCode]int32{proto.OpSetData: proto.PermWrite, proto.OpSetACL: proto.PermAdmin, proto.OpCheck: proto.PermRead}[op.Op]
	if !acl.Allowed(n.acl, perm, e.Auth) {
		return failed(proto.ErrNoAuth)
	}
	switch op.Op {
	case proto.OpSetData:
		if !versionOK(n.version, op.Version) {
			return failed(proto.ErrBadVersion)
		}
		n.data, n.version, n.mzxid, n.mtime = op.Data, n.version+1, zxid, e.Time
		return OpResult{Op: op.Op, Stat: n.stat()}, []Change{{Type: proto.EventNodeDataChanged, Path: op.Path, ACL: n.acl}}
	case proto.OpSetACL:
		if !versionOK(n.aversion, op.Version) {
			return failed(proto.ErrBadVersion)
		}
		n.acl, n.aversion = list, n.aversion+1
		return OpResult{Op: op.Op, Stat: n.stat()}, nil
	default:
		if !versionOK(n.version, op.Version) {
			return failed(proto.ErrBadVersion)
		}
		return OpResult{Op: op.Op}, nil
	}
}

// dump renders the model like dumpMachine renders a Machine.
func (m *model) dump(applied uint64) stateDump {
	d := stateDump{Applied: applied, LastZxid: int64(applied), Nodes: make(map[string]nodeDump),
		Count: len(m.nodes), DataSize: 1, Ephemerals: make(map[int64][]string)}
	ids := make([]int64, 0, len(m.sessions))
	for id := range m.sessions {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		d.Sessions = append(d.Sessions, m.sessions[id])
	}
	for p, n := range m.nodes {
		d.DataSize += int64(len(n.data))
		if p != "/" {
			d.DataSize += int64(len(p))
		}
		d.Nodes[p] = nodeDump{Stat: n.stat(), Data: n.data, DataNil: n.data == nil, ACL: n.acl,
			Owner: n.rawOwner(), Cversion: n.creations, Kind: n.kind}
		switch n.kind {
		case tree.Ephemeral:
			d.Ephemerals[n.owner] = append(d.Ephemerals[n.owner], p)
		case tree.Container:
			d.Containers = append(d.Containers, p)
		case tree.TTL:
			d.TTLs = append(d.TTLs, p)
		}
	}
	for _, ps := range d.Ephemerals {
		sort.Strings(ps)
	}
	sort.Strings(d.Containers)
	sort.Strings(d.TTLs)
	if d.Containers == nil {
		d.Containers = []string{}
	}
	if d.TTLs == nil {
		d.TTLs = []string{}
	}
	return d
}
