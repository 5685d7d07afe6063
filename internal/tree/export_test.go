package tree

import "github.com/paddockhq/paddock/internal/proto"

// ACLUses returns how many nodes use the interned list equal to acl (0 when
// it is not interned) and its reference.
func (t *Tree) ACLUses(acl []proto.ACL) (int64, ACLRef) {
	ref, ok := t.acls.byKey[aclKey(acl)]
	if !ok {
		return 0, 0
	}
	return t.acls.counts[ref], ref
}

// ACLLists returns the number of interned lists, checking that the cache's
// three maps agree.
func (t *Tree) ACLLists() int {
	if len(t.acls.lists) != len(t.acls.counts) || len(t.acls.lists) != len(t.acls.byKey) {
		panic("acl cache maps disagree")
	}
	return len(t.acls.lists)
}
