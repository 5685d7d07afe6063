package acl

import (
	"crypto/sha1"
	"encoding/base64"
	"strings"

	"github.com/paddockhq/paddock/internal/javastr"
)

// DigestID returns the digest-scheme id for a user and password:
// user:base64(sha1(user:password)).
func DigestID(user, password string) string {
	sum := sha1.Sum([]byte(user + ":" + password))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// DigestFromAuth turns the auth bytes of an AuthPacket ("user:password") into
// a digest id as DigestAuthenticationProvider.generateDigest does: the part
// before the first colon (all of it when there is none), a colon, and
// base64(sha1(all of it)). ZooKeeper first decodes the bytes as UTF-8, so
// malformed sequences become U+FFFD before hashing; so do they here.
func DigestFromAuth(auth []byte) string {
	s := javastr.FromUTF8(auth)
	user := s
	if i := strings.IndexByte(s, ':'); i >= 0 {
		user = s[:i]
	}
	sum := sha1.Sum([]byte(s))
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
