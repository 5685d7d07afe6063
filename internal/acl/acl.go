// Package acl implements ZooKeeper's access control: permission checks against
// a caller's authenticated identities, the validation and rewriting of ACL
// lists a client sends (ZooKeeper's fixupACL), and the digest and ip schemes.
// It is pure: no I/O, no state.
package acl

import (
	"crypto/sha1"
	"encoding/base64"
	"net/netip"
	"strings"

	"github.com/paddockhq/paddock/internal/proto"
)

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
// on a node whose ACL is list, as ZooKeeper's checkACL decides: the super user
// may do anything, an empty ACL allows everything, world:anyone matches
// everybody, digest ids match exactly, ip ids match by address prefix.
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
// It returns false when ZooKeeper answers INVALIDACL: an empty list, an
// unknown scheme, a malformed id, or "auth" without an authenticated identity.
// Duplicate entries are removed.
func Fixup(list []proto.ACL, ids []proto.ID) ([]proto.ACL, bool) {
	if len(list) == 0 {
		return nil, false
	}
	out := make([]proto.ACL, 0, len(list))
	add := func(a proto.ACL) {
		for _, b := range out {
			if b == a {
				return
			}
		}
		out = append(out, a)
	}
	for _, a := range list {
		switch a.ID.Scheme {
		case World:
			if a.ID.ID != Anyone {
				return nil, false
			}
			add(a)
		case Auth:
			found := false
			for _, id := range ids {
				if id.Scheme == Digest {
					found = true
					add(proto.ACL{Perms: a.Perms, ID: id})
				}
			}
			if !found {
				return nil, false
			}
		case Digest:
			if !validDigestID(a.ID.ID) {
				return nil, false
			}
			add(a)
		case IP:
			if !validIP(a.ID.ID) {
				return nil, false
			}
			add(a)
		default:
			return nil, false
		}
	}
	return out, true
}

// DigestID returns the digest-scheme id for a user and password:
// user:base64(sha1(user:password)).
func DigestID(user, password string) string {
	sum := sha1.Sum([]byte(user + ":" + password))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// DigestFromAuth turns the auth bytes of an AuthPacket ("user:password") into
// a digest id as DigestAuthenticationProvider.generateDigest does: the part
// before the first colon, a colon, and base64(sha1(all of it)).
func DigestFromAuth(auth []byte) string {
	s := string(auth)
	user := s
	if i := strings.IndexByte(s, ':'); i >= 0 {
		user = s[:i]
	}
	sum := sha1.Sum(auth)
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// validDigestID mirrors DigestAuthenticationProvider.isValid: Java's
// id.split(":") (trailing empty parts dropped) must give exactly two parts.
func validDigestID(id string) bool {
	parts := strings.Split(id, ":")
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return len(parts) == 2
}

// validIP accepts "addr" or "addr/bits" for IPv4 and IPv6.
func validIP(id string) bool {
	_, ok := parsePrefix(id)
	return ok
}

func parsePrefix(id string) (netip.Prefix, bool) {
	if strings.IndexByte(id, '/') >= 0 {
		p, err := netip.ParsePrefix(id)
		if err != nil {
			return netip.Prefix{}, false
		}
		return p.Masked(), true
	}
	a, err := netip.ParseAddr(id)
	if err != nil {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(a, a.BitLen()), true
}

// ipMatches reports whether client address addr falls within ACL id aclID.
func ipMatches(addr, aclID string) bool {
	p, ok := parsePrefix(aclID)
	if !ok {
		return false
	}
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	a = a.Unmap()
	if p.Addr().Is4() != a.Is4() {
		return false
	}
	return p.Contains(a)
}
