package acl

import (
	"crypto/sha1"
	"encoding/base64"
	"strings"
	"unicode/utf8"
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
	s := javaUTF8(auth)
	user := s
	if i := strings.IndexByte(s, ':'); i >= 0 {
		user = s[:i]
	}
	sum := sha1.Sum([]byte(s))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// javaUTF8 returns b as Java's new String(b, UTF_8) reads it: each maximal
// ill-formed subsequence becomes one U+FFFD, the Unicode "best practice",
// except that Java takes an encoded surrogate (ED A0..BF 80..BF) and its
// prefixes as one ill-formed sequence.
func javaUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r != utf8.RuneError || n > 1 {
			sb.Write(b[:n])
			b = b[n:]
			continue
		}
		sb.WriteRune(utf8.RuneError)
		b = b[maximalSubpart(b):]
	}
	return sb.String()
}

// maximalSubpart returns the length (at least 1) of the longest prefix of b
// that starts a well-formed UTF-8 sequence, given that b does not start with
// one.
func maximalSubpart(b []byte) int {
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c == 0xF4:
		need, hi = 3, 0x8F
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	default:
		return 1
	}
	n := 1
	for ; n <= need && n < len(b); n++ {
		if b[n] < lo || b[n] > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return n
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
