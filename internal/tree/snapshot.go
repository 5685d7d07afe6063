package tree

import (
	"fmt"
	"sort"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/zpath"
)

// AppendSnapshot appends the tree's serialized form to b: the ACL table, then
// every node depth-first with parents first (jute primitives):
//
//	int nACL, nACL × (int ref, vector<ACL>)
//	long nNodes, nNodes × (ustring path, buffer data, long czxid, long mzxid,
//	  long pzxid, long ctime, long mtime, long ephemeralOwner, int version,
//	  int cversion, int aversion, int aclRef)
//
// The enclosing snapshot format carries the version number. A configuration
// ShowConfig made /zookeeper/config show is left out: the node is written
// as the replicated state holds it.
func (t *Tree) AppendSnapshot(b []byte) []byte {
	b = appendACLTable(b, t.acls.lists)
	b = proto.AppendInt64(b, int64(t.count))
	t.Walk(func(path string, n *Node) { b = appendNode(b, path, snapshotNode(n, n, t.config)) })
	return b
}

// appendACLTable appends the interned ACL lists in reference order.
func appendACLTable(b []byte, lists map[ACLRef][]proto.ACL) []byte {
	refs := make([]ACLRef, 0, len(lists))
	for ref := range lists {
		refs = append(refs, ref)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i] < refs[j] })
	b = proto.AppendInt32(b, int32(len(refs)))
	for _, ref := range refs {
		b = proto.AppendInt32(b, int32(ref))
		b = proto.AppendACLs(b, lists[ref])
	}
	return b
}

// appendNode appends one node record.
func appendNode(b []byte, path string, n *Node) []byte {
	return appendNodeFields(proto.AppendString(b, path), n)
}

// appendNodeFields appends a node record's fields after its path.
func appendNodeFields(b []byte, n *Node) []byte {
	b = proto.AppendBuffer(b, n.Data)
	b = proto.AppendInt64(b, n.Czxid)
	b = proto.AppendInt64(b, n.Mzxid)
	b = proto.AppendInt64(b, n.Pzxid)
	b = proto.AppendInt64(b, n.Ctime)
	b = proto.AppendInt64(b, n.Mtime)
	b = proto.AppendInt64(b, n.EphemeralOwner)
	b = proto.AppendInt32(b, n.Version)
	b = proto.AppendInt32(b, n.Cversion)
	b = proto.AppendInt32(b, n.Aversion)
	return proto.AppendInt32(b, int32(n.ACL))
}

// DecodeSnapshot rebuilds a tree from AppendSnapshot's output. The
// snapshot does not carry the tree's Options: the caller passes those it
// runs with, as for New.
func DecodeSnapshot(d *proto.Decoder, opts Options) (*Tree, error) {
	t := newEmpty(opts)
	nacl := d.Int32()
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("tree snapshot: ACL count: %w", err)
	}
	if nacl < 0 || int(nacl) > d.Remaining()/4 {
		return nil, fmt.Errorf("tree snapshot: bad ACL count %d", nacl)
	}
	lists := make(map[ACLRef][]proto.ACL, nacl)
	for i := int32(0); i < nacl && d.Err() == nil; i++ {
		ref := ACLRef(d.Int32())
		lists[ref] = proto.DecodeACLs(d)
	}
	count := d.Int64()
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("tree snapshot: node count: %w", err)
	}
	if count < 1 || count > int64(d.Remaining()) {
		return nil, fmt.Errorf("tree snapshot: bad node count %d", count)
	}
	for i := int64(0); i < count && d.Err() == nil; i++ {
		path := d.String()
		n := &Node{Data: d.Buffer()}
		n.Czxid, n.Mzxid, n.Pzxid = d.Int64(), d.Int64(), d.Int64()
		n.Ctime, n.Mtime, n.EphemeralOwner = d.Int64(), d.Int64(), d.Int64()
		n.Version, n.Cversion, n.Aversion = d.Int32(), d.Int32(), d.Int32()
		t.maxCzxid = max(t.maxCzxid, n.Czxid)
		ref := ACLRef(d.Int32())
		if d.Err() != nil {
			break
		}
		acl, ok := lists[ref]
		if !ok {
			return nil, fmt.Errorf("tree snapshot: node %q names unknown ACL %d", path, ref)
		}
		n.ACL = t.acls.intern(acl)
		if path == "/" {
			if t.root != nil {
				return nil, fmt.Errorf("tree snapshot: root twice")
			}
			if n.EphemeralOwner != 0 {
				return nil, fmt.Errorf("tree snapshot: root has ephemeralOwner %#x", n.EphemeralOwner)
			}
			t.root = n
			t.count = 1
			t.dataSize += int64(len(n.Data)) + rootSize
			continue
		}
		if t.root == nil {
			return nil, fmt.Errorf("tree snapshot: node %q before the root", path)
		}
		parentPath, name := zpath.Parent(path)
		parent := t.Get(parentPath)
		if parent == nil || name == "" || parent.Child(name) != nil {
			return nil, fmt.Errorf("tree snapshot: node %q out of order", path)
		}
		if zpath.Join(parentPath, name) != path {
			// "//a" names the root's child "a" under another path.
			return nil, fmt.Errorf("tree snapshot: node path %q is not canonical", path)
		}
		if t.Kind(parent) == Ephemeral {
			if parent.Kind() == TTL {
				// Written with extended types on; read without them, the
				// TTL node's owner is a session.
				return nil, fmt.Errorf("tree snapshot: node %q is under a TTL node, which is ephemeral with extended types off", path)
			}
			return nil, fmt.Errorf("tree snapshot: node %q has an ephemeral parent", path)
		}
		parent.addChild(name, n) // in name order, as walked
		t.count++
		t.dataSize += int64(len(n.Data) + len(path))
		t.index(path, n)
	}
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("tree snapshot: %w", err)
	}
	if t.root == nil {
		return nil, fmt.Errorf("tree snapshot: no root")
	}
	return t, nil
}
