package tree

import "github.com/paddockhq/paddock/internal/proto"

// Special ephemeralOwner values (ZooKeeper's EphemeralType).
const (
	// ContainerOwner marks a container node.
	ContainerOwner int64 = -0x8000000000000000
	// ttlMask marks a TTL node; the low bits hold the TTL in milliseconds.
	ttlMask int64 = -0x100000000000000 // 0xFF00000000000000
	// MaxTTL is the largest TTL ZooKeeper accepts (0xFFFFFFFFFF ms).
	MaxTTL int64 = 0xFFFFFFFFFF
)

// TTLOwner returns the ephemeralOwner stored for a TTL node.
func TTLOwner(ttl int64) int64 { return ttlMask | ttl }

// Node is one znode. Fields mirror ZooKeeper's StatPersisted; Cversion counts
// child creations, as ZooKeeper persists it (clients see a derived value).
type Node struct {
	Data           []byte
	Czxid          int64
	Mzxid          int64
	Pzxid          int64
	Ctime          int64
	Mtime          int64
	EphemeralOwner int64
	Version        int32
	Cversion       int32
	Aversion       int32
	ACL            ACLRef
	kids           *childList // nil without children
}

// Kind classifies a node by its ephemeralOwner.
type Kind uint8

// Node kinds.
const (
	Persistent Kind = iota
	Ephemeral
	Container
	TTL
)

// Kind reports what sort of node n is as ZooKeeper classifies it with
// extended types enabled, the setting under which TTL nodes exist: an
// ephemeralOwner whose top byte is 0xFF marks a TTL node. A tree
// classifies its nodes under its own setting: use Tree.Kind for them.
func (n *Node) Kind() Kind { return n.kind(true) }

// kind is ZooKeeper's EphemeralType.get: the 0xFF top byte marks a TTL
// node only with extended types; without them such an owner is the
// session of an ephemeral node (a server with myid 255 makes such
// session ids).
func (n *Node) kind(extended bool) Kind {
	switch o := n.EphemeralOwner; {
	case o == 0:
		return Persistent
	case o == ContainerOwner:
		return Container
	case extended && o&ttlMask == ttlMask:
		return TTL
	default:
		return Ephemeral
	}
}

// TTL returns the time-to-live of a node that Kind classifies as a TTL
// node, in milliseconds, else 0.
func (n *Node) TTL() int64 {
	if n.Kind() != TTL {
		return 0
	}
	return n.EphemeralOwner &^ ttlMask
}

// NumChildren returns the number of children.
func (n *Node) NumChildren() int { return n.kids.len() }

// Child returns the named child or nil.
func (n *Node) Child(name string) *Node { return n.kids.get(name) }

// Children returns the child names in the node's order (see EachChild).
func (n *Node) Children() []string {
	if n.kids == nil {
		return []string{}
	}
	out := make([]string, len(n.kids.kids))
	for i, c := range n.kids.kids {
		out[i] = c.name
	}
	return out
}

// EachChild calls fn for every child, in the node's order: the order in
// which they were added, except that a deleted child's place goes to the
// child that was last. The same creates and deletes give the same order,
// on every replica and at every call; a node restored from a snapshot
// starts with its children in name order. ZooKeeper promises no order;
// it lists a HashSet, also the same while it is unchanged. fn must not
// add or remove children of n.
func (n *Node) EachChild(fn func(name string, c *Node)) {
	if n.kids == nil {
		return
	}
	for _, c := range n.kids.kids {
		fn(c.name, c.n)
	}
}

// ChildIndex returns the place of the child called name in the node's
// order, or -1: what Reinsert takes to put it back there.
func (n *Node) ChildIndex(name string) int { return n.kids.find(name) }

// addChild puts c last among n's children under name, which must be free.
func (n *Node) addChild(name string, c *Node) {
	if n.kids == nil {
		n.kids = &childList{kids: make([]child, 0, 1)}
	}
	n.kids.add(name, c)
}

// Stat returns the metadata as clients see it, with n classified as Kind
// does: container and TTL nodes show ephemeralOwner 0, and cversion counts
// child creations and deletions (2*creations - live children), as
// DataNode.copyStat computes it. A tree's nodes are shown under its own
// setting: use Tree.Stat for them.
func (n *Node) Stat() proto.Stat { return n.stat(true) }

// stat is Stat with n classified under extended.
func (n *Node) stat(extended bool) proto.Stat {
	owner := n.EphemeralOwner
	if k := n.kind(extended); k == Container || k == TTL {
		owner = 0
	}
	nc := int32(n.kids.len())
	return proto.Stat{
		Czxid: n.Czxid, Mzxid: n.Mzxid, Ctime: n.Ctime, Mtime: n.Mtime,
		Version: n.Version, Cversion: n.Cversion*2 - nc, Aversion: n.Aversion,
		EphemeralOwner: owner, DataLength: int32(len(n.Data)), NumChildren: nc,
		Pzxid: n.Pzxid,
	}
}
