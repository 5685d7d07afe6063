package tree

import "github.com/paddockhq/paddock/internal/proto"

// ACLRef names an interned ACL list. Many znodes share few distinct lists, so
// nodes hold a 4-byte reference instead of a copy, as ZooKeeper's
// ReferenceCountedACLCache does.
type ACLRef uint32

// aclCache interns ACL lists with reference counts.
type aclCache struct {
	lists  map[ACLRef][]proto.ACL
	counts map[ACLRef]int64
	byKey  map[string]ACLRef
	next   ACLRef
}

func newACLCache() *aclCache {
	return &aclCache{
		lists:  make(map[ACLRef][]proto.ACL),
		counts: make(map[ACLRef]int64),
		byKey:  make(map[string]ACLRef),
		next:   1,
	}
}

// aclKey returns a key that identifies an ACL list exactly: its jute
// encoding, where every string is length-prefixed, so no two different lists
// share a key whatever bytes their ids hold.
func aclKey(acl []proto.ACL) string {
	return string(proto.AppendACLs(make([]byte, 0, 64), acl))
}

// intern returns the reference for acl, adding one use.
func (c *aclCache) intern(acl []proto.ACL) ACLRef {
	// The key is built on the stack and converted to a string only when a
	// new list is added: a lookup with string(k) does not allocate.
	var kb [128]byte
	k := proto.AppendACLs(kb[:0], acl)
	if ref, ok := c.byKey[string(k)]; ok {
		c.counts[ref]++
		return ref
	}
	ref := c.next
	c.next++
	cp := make([]proto.ACL, len(acl))
	copy(cp, acl)
	c.lists[ref] = cp
	c.counts[ref] = 1
	c.byKey[string(k)] = ref
	return ref
}

// release drops one use of ref, forgetting the list when unused.
func (c *aclCache) release(ref ACLRef) {
	n := c.counts[ref] - 1
	if n > 0 {
		c.counts[ref] = n
		return
	}
	if acl, ok := c.lists[ref]; ok {
		delete(c.byKey, aclKey(acl))
	}
	delete(c.lists, ref)
	delete(c.counts, ref)
}

func (c *aclCache) get(ref ACLRef) []proto.ACL { return c.lists[ref] }
