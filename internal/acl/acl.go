package acl

import "github.com/paddockhq/paddock/internal/proto"

// Scheme names.
const (
	World  = "world"
	Auth   = "auth"
	Digest = "digest"
	IP     = "ip"
	Super  = "super"
)

// Anyone is the world scheme's only id.
const Anyone = "anyone"

// Allowed reports whether identities ids may perform an operation needing perm
// on a node whose ACL is list, as ZooKeeper's checkACL decides: an empty ACL
// allows everything, the super user may do anything, and otherwise some entry
// granting perm must match: world:anyone matches everybody, digest ids match
// exactly, ip ids match by address prefix. Entries of other schemes never
// match.
func Allowed(list []proto.ACL, perm int32, ids []proto.ID) bool {
	if len(list) == 0 {
		return true
	}
	for _, id := range ids {
		if id.Scheme == Super {
			return true
		}
	}
	for _, a := range list {
		if a.Perms&perm == 0 {
			continue
		}
		switch a.ID.Scheme {
		case World:
			if a.ID.ID == Anyone {
				return true
			}
		case Digest:
			for _, id := range ids {
				if id.Scheme == Digest && id.ID == a.ID.ID {
					return true
				}
			}
		case IP:
			for _, id := range ids {
				if id.Scheme == IP && ipMatches(id.ID, a.ID.ID) {
					return true
				}
			}
		}
	}
	return false
}

// Fixup validates an ACL list sent by a client and replaces "auth" entries by
// the caller's authenticated digest identities, as ZooKeeper's fixupACL does.
// Duplicate entries of list are dropped first (ZOOKEEPER-1877); entries the
// expansion of "auth" produces are kept even if they repeat another entry, as
// in ZooKeeper. It returns false when ZooKeeper answers INVALIDACL: an empty
// list, a world id other than "anyone", a malformed digest or ip id, any
// other scheme, or "auth" when the caller has no digest identity (ip
// identities are not "authenticated" in ZooKeeper's sense, and super is no
// scheme of its own).
func Fixup(list []proto.ACL, ids []proto.ID) ([]proto.ACL, bool) {
	uniq := make([]proto.ACL, 0, len(list))
	for _, a := range list {
		if !containsACL(uniq, a) {
			uniq = append(uniq, a)
		}
	}
	if len(uniq) == 0 {
		return nil, false
	}
	out := make([]proto.ACL, 0, len(uniq))
	for _, a := range uniq {
		switch a.ID.Scheme {
		case World:
			if a.ID.ID != Anyone {
				return nil, false
			}
			out = append(out, a)
		case Auth:
			found := false
			for _, id := range ids {
				if id.Scheme == Digest {
					found = true
					out = append(out, proto.ACL{Perms: a.Perms, ID: id})
				}
			}
			if !found {
				return nil, false
			}
		case Digest:
			if !validDigestID(a.ID.ID) {
				return nil, false
			}
			out = append(out, a)
		case IP:
			if !validIP(a.ID.ID) {
				return nil, false
			}
			out = append(out, a)
		default:
			return nil, false
		}
	}
	return out, true
}

func containsACL(list []proto.ACL, a proto.ACL) bool {
	for _, b := range list {
		if b == a {
			return true
		}
	}
	return false
}
