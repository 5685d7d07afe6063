package tree

import (
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/zpath"
)

// Reserved paths, present in every tree.
const (
	ZooKeeperPath = "/zookeeper"
	QuotaPath     = "/zookeeper/quota"
	ConfigPath    = "/zookeeper/config"
)

// Canned ACL lists (ZooDefs.Ids).
var (
	OpenACL = []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}
	ReadACL = []proto.ACL{{Perms: proto.PermRead, ID: proto.ID{Scheme: "world", ID: "anyone"}}}
)

// Options are the tree's behaviour switches. Every member of an ensemble
// must use the same ones, and a tree restored from a snapshot gets them
// again from its owner (DecodeSnapshot), so that replicas, WAL replay and
// restore classify every node alike.
type Options struct {
	// ExtendedTypes is ZooKeeper's extendedTypesEnabled: an ephemeralOwner
	// whose top byte is 0xFF marks a TTL node only when it is set;
	// otherwise it is the session of an ephemeral node.
	ExtendedTypes bool
}

// Tree is the data tree. It is not safe for concurrent use; see the package doc.
type Tree struct {
	extended   bool // Options.ExtendedTypes
	root       *Node
	count      int
	dataSize   int64
	acls       *aclCache
	ephemerals map[int64]map[string]struct{}
	containers map[string]struct{}
	ttls       map[string]struct{}
	stream     *Stream // open snapshot stream, if any (see Stream)
	maxCzxid   int64   // the largest czxid of any node added (Stream.since)
	// order keeps, for parents with at least sortCacheMin children, the
	// children's names in order as the last snapshot stream walked them,
	// and the names added or removed since (childrenChanging): sorting a
	// parent's names anew for every snapshot was half of a snapshot's CPU
	// with 100,000 children under one parent, and most of it under a
	// parent that keeps growing. The next stream sorts only the changed
	// names and merges them in (Stream.begin, Stream.prepare).
	order map[*Node]*childOrder
	// config is what ShowConfig made /zookeeper/config show, or nil.
	config *configShown
	// quotas indexes the limits nodes by the quota they name (QuotaDepth).
	quotas quotaTrie
}

// childOrder is a parent's children in snapshot order, as of the start of
// the stream that sorted them, and the names that changed since.
type childOrder struct {
	// kids are sorted by name; their nodes are those the names had at
	// the start of the stream that sorted them, which hold for every name
	// not in changed. Nothing modifies kids once stored. A node deleted
	// since stays referenced here until the next stream replaces the
	// order.
	kids []child
	// changed lists the names added or removed since kids' stream began,
	// in the order they changed, a name once per change: noting a change
	// is an append, with no hashing and no map to grow on the apply path
	// (in a profile of paddock bench's create workload a set of names was
	// half of tree.Create's time). The next stream sorts the list and
	// drops the repeats.
	changed []string
}

// maxChangedPerKid bounds a kept order's changed list to this many entries
// per kept name: an order with more is dropped (childrenChanging). Sorting
// all the names again costs no more than the merge by then; the list
// counts a name once per change, so a name created and deleted over and
// over counts several times.
const maxChangedPerKid = 2

// New returns a tree holding "/" and ZooKeeper's reserved nodes as a fresh
// DataTree has them: empty (not null) data, all-zero Stat, open ACLs except
// /zookeeper/config, which is world-readable only and has aversion -1
// (DataTree.addConfigNode calls setACL with version -1). The reserved nodes do
// not count as child creations, so "/" shows cversion -1 and /zookeeper -2.
func New(opts Options) *Tree {
	t := newEmpty(opts)
	t.root = &Node{Data: []byte{}, ACL: t.acls.intern(OpenACL)}
	t.count = 1
	t.dataSize = rootSize
	t.Create(ZooKeeperPath, []byte{}, OpenACL, 0, 0, 0)
	t.Create(QuotaPath, []byte{}, OpenACL, 0, 0, 0)
	config := t.Create(ConfigPath, []byte{}, ReadACL, 0, 0, 0)
	config.Aversion = -1
	t.root.Cversion, t.Get(ZooKeeperPath).Cversion = 0, 0
	return t
}

// rootSize is what "/" adds to DataSize besides its data. ZooKeeper's
// approximateDataSize sums path length plus data length over its node map,
// where the root has the aliases "" and "/"; a fresh tree totals 44.
const rootSize = 1

func newEmpty(opts Options) *Tree {
	return &Tree{
		extended:   opts.ExtendedTypes,
		acls:       newACLCache(),
		ephemerals: make(map[int64]map[string]struct{}),
		containers: make(map[string]struct{}),
		ttls:       make(map[string]struct{}),
		order:      make(map[*Node]*childOrder),
	}
}

// childAdding is called before a child called name, with czxid czxid, is
// added to parent: it keeps what an open snapshot stream needs, notes the
// name in the parent's kept order and the czxid in maxCzxid.
func (t *Tree) childAdding(parent *Node, name string, czxid int64) {
	t.preserveAdd(parent, name, czxid)
	t.childrenChanging(parent, name)
	t.maxCzxid = max(t.maxCzxid, czxid)
}

// childRemoving is called before the child called name is removed from
// parent: it keeps what an open snapshot stream needs and notes the name
// in the parent's kept order.
func (t *Tree) childRemoving(parent *Node, name string) {
	t.preserveRemove(parent, name)
	t.childrenChanging(parent, name)
}

// childrenChanging notes, in parent's kept order, that the child called
// name is being added or removed. An order with more than
// maxChangedPerKid changes per kept name is dropped (and so is the order
// of a parent whose last child is deleted, by Delete).
func (t *Tree) childrenChanging(parent *Node, name string) {
	if len(t.order) == 0 {
		return
	}
	o := t.order[parent]
	if o == nil {
		return
	}
	o.changed = append(o.changed, name)
	if len(o.changed) > maxChangedPerKid*len(o.kids) {
		delete(t.order, parent)
	}
}

// Get returns the node at path, or nil. Paths that are not absolute or that
// contain empty components are never found.
func (t *Tree) Get(path string) *Node {
	if path == "" || path[0] != '/' {
		return nil
	}
	n := t.root
	rest := path[1:]
	if rest == "" {
		return n
	}
	for {
		i := strings.IndexByte(rest, '/')
		name := rest
		if i >= 0 {
			name = rest[:i]
		}
		n = n.kids.get(name)
		if n == nil || name == "" {
			return nil
		}
		if i < 0 {
			return n
		}
		rest = rest[i+1:]
	}
}

// NodeCount returns the number of znodes, "/" and reserved nodes included.
func (t *Tree) NodeCount() int { return t.count }

// DataSize approximates the bytes of data held, as ZooKeeper's
// approximate_data_size: the sum over nodes of path length plus data length,
// 44 for a fresh tree. Path lengths are counted in bytes (ZooKeeper counts
// UTF-16 units; the two agree for ASCII paths).
func (t *Tree) DataSize() int64 { return t.dataSize }

// ACL returns the ACL list of n. The slice is shared: do not modify it.
func (t *Tree) ACL(n *Node) []proto.ACL { return t.acls.get(n.ACL) }

// Kind reports what sort of node n is under the tree's Options (see
// Node.kind).
func (t *Tree) Kind(n *Node) Kind { return n.kind(t.extended) }

// Stat returns n's metadata as clients see it (Node.Stat), with n
// classified under the tree's Options.
func (t *Tree) Stat(n *Node) proto.Stat { return n.stat(t.extended) }

// Create adds a node at path. The parent must exist and the name must be free.
// It bumps the parent's child-creation counter and pzxid as ZooKeeper does:
// once the counter is at MaxInt32 it changes neither.
func (t *Tree) Create(path string, data []byte, acl []proto.ACL, owner, zxid, now int64) *Node {
	parentPath, _ := zpath.Parent(path)
	return t.CreateIn(t.Get(parentPath), path, data, acl, owner, zxid, now)
}

// CreateIn is Create for a caller that has already looked up parent, the
// node at path's parent path: it saves walking the tree to it again.
func (t *Tree) CreateIn(parent *Node, path string, data []byte, acl []proto.ACL, owner, zxid, now int64) *Node {
	_, name := zpath.Parent(path)
	t.childAdding(parent, name, zxid)
	n := &Node{
		Data: data, Czxid: zxid, Mzxid: zxid, Pzxid: zxid, Ctime: now, Mtime: now,
		EphemeralOwner: owner, ACL: t.acls.intern(acl),
	}
	parent.addChild(name, n)
	// DataTree.createNode takes the txn's counter (the parent's plus one)
	// only when it is above the parent's: at MaxInt32 the increment wraps
	// below it, so the counter stays there for good, and pzxid is not set.
	if parent.Cversion != math.MaxInt32 {
		parent.Cversion++
		parent.Pzxid = zxid
	}
	t.count++
	t.dataSize += int64(len(data) + len(path))
	t.index(path, n)
	return n
}

// Delete removes the node at path, which must exist and have no children. It
// sets the parent's pzxid to zxid. The parent's last child takes the
// deleted one's place in the parent's order (Node.EachChild).
func (t *Tree) Delete(path string, zxid int64) *Node {
	parentPath, _ := zpath.Parent(path)
	return t.DeleteIn(t.Get(parentPath), path, zxid)
}

// DeleteIn is Delete for a caller that has already looked up parent, the
// node at path's parent path.
func (t *Tree) DeleteIn(parent *Node, path string, zxid int64) *Node {
	_, name := zpath.Parent(path)
	t.childRemoving(parent, name)
	i := parent.kids.find(name)
	n := parent.kids.kids[i].n
	if moved, from := parent.kids.removeAt(i); from != i {
		t.childMoved(parent, moved, from, i)
	}
	if parent.kids.len() == 0 {
		parent.kids = nil
		delete(t.order, parent) // and the deleted nodes it holds
	}
	if zxid > parent.Pzxid {
		parent.Pzxid = zxid
	}
	t.count--
	t.dataSize -= int64(len(n.Data) + len(path))
	t.acls.release(n.ACL)
	t.unindex(path, n)
	return n
}

// Reinsert puts back a node removed by Delete, with the ACL list it had (used
// to undo a delete inside a failed multi), at place at in its parent's
// order, the child there going last: with the place the node had
// (Node.ChildIndex) and the tree as Delete left it, that is the order
// before the delete. A place out of range puts it last. The caller
// restores the parent's fields.
func (t *Tree) Reinsert(path string, n *Node, acl []proto.ACL, at int) {
	parentPath, name := zpath.Parent(path)
	parent := t.Get(parentPath)
	t.childAdding(parent, name, n.Czxid)
	t.preserve(n)
	parent.addChild(name, n)
	if last := parent.kids.len() - 1; at >= 0 && at < last {
		parent.kids.swap(at, last)
		t.childMoved(parent, parent.kids.kids[last], at, last)
		t.childMoved(parent, parent.kids.kids[at], last, at)
	}
	t.count++
	t.dataSize += int64(len(n.Data) + len(path))
	n.ACL = t.acls.intern(acl)
	t.index(path, n)
}

// SetData replaces the data of n.
func (t *Tree) SetData(n *Node, data []byte, version int32, zxid, now int64) {
	t.preserve(n)
	t.writing(n)
	t.dataSize += int64(len(data) - len(n.Data))
	n.Data, n.Version, n.Mzxid, n.Mtime = data, version, zxid, now
}

// SetACL replaces the ACL list of n.
func (t *Tree) SetACL(n *Node, acl []proto.ACL, aversion int32) {
	t.preserve(n)
	old := n.ACL
	n.ACL = t.acls.intern(acl)
	t.acls.release(old)
	n.Aversion = aversion
}

func (t *Tree) index(path string, n *Node) {
	t.indexQuota(path)
	switch t.Kind(n) {
	case Ephemeral:
		s := t.ephemerals[n.EphemeralOwner]
		if s == nil {
			s = make(map[string]struct{})
			t.ephemerals[n.EphemeralOwner] = s
		}
		s[path] = struct{}{}
	case Container:
		t.containers[path] = struct{}{}
	case TTL:
		t.ttls[path] = struct{}{}
	}
}

func (t *Tree) unindex(path string, n *Node) {
	t.unindexQuota(path)
	switch t.Kind(n) {
	case Ephemeral:
		if s := t.ephemerals[n.EphemeralOwner]; s != nil {
			delete(s, path)
			if len(s) == 0 {
				delete(t.ephemerals, n.EphemeralOwner)
			}
		}
	case Container:
		delete(t.containers, path)
	case TTL:
		delete(t.ttls, path)
	}
}

// Ephemerals returns the paths of the ephemeral nodes owned by session, sorted.
func (t *Tree) Ephemerals(session int64) []string { return sortedKeys(t.ephemerals[session]) }

// EphemeralCount returns the number of ephemeral nodes.
func (t *Tree) EphemeralCount() int {
	n := 0
	for _, s := range t.ephemerals {
		n += len(s)
	}
	return n
}

// EphemeralSessions returns the sessions owning ephemerals, for dump.
func (t *Tree) EphemeralSessions() []int64 {
	out := make([]int64, 0, len(t.ephemerals))
	for s := range t.ephemerals {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Containers returns the container paths, sorted.
func (t *Tree) Containers() []string { return sortedKeys(t.containers) }

// TTLNodes returns the TTL node paths, sorted.
func (t *Tree) TTLNodes() []string { return sortedKeys(t.ttls) }

func sortedKeys(m map[string]struct{}) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CountDescendants returns the number of nodes below n (n excluded).
func CountDescendants(n *Node) int {
	total := 0
	n.EachChild(func(_ string, c *Node) { total += 1 + CountDescendants(c) })
	return total
}

// Walk visits every node depth-first, parents before children, children in
// name order, so the order is deterministic.
func (t *Tree) Walk(fn func(path string, n *Node)) {
	walk("/", t.root, fn)
}

func walk(path string, n *Node, fn func(string, *Node)) {
	fn(path, n)
	if n.kids.len() == 0 {
		return
	}
	kids := slices.Clone(n.kids.kids)
	slices.SortFunc(kids, compareKids)
	for _, c := range kids {
		walk(zpath.Join(path, c.name), c.n, fn)
	}
}
