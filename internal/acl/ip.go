package acl

import (
	"strings"

	"github.com/paddockhq/paddock/internal/javastr"
)

// The ip scheme follows IPAuthenticationProvider (3.9) rather than Go's
// net/netip, whose grammar differs: ZooKeeper accepts IPv4 octets with
// leading zeros or a sign ("010.0.0.1" is 10.0.0.1) and prefix lengths such
// as "08", and refuses IPv6 with an embedded IPv4 part or a zone. Numbers
// are read as Java's Integer.parseInt reads them (javastr.ParseInt), which also
// takes the other Unicode decimal digits ("\u0661.2.3.4" is 1.2.3.4).

// validIP reports whether id is a valid ip-scheme ACL id: "addr" or
// "addr/bits" with 0 <= bits <= the address width (isValid).
func validIP(id string) bool {
	_, _, ok := parseIPExpr(id)
	return ok
}

// ipMatches reports whether the client address addr falls within the ACL id
// expr (IPAuthenticationProvider.matches): both are masked to the prefix
// length and compared; IPv4 never matches IPv6.
func ipMatches(addr, expr string) bool {
	acl, bits, ok := parseIPExpr(expr)
	if !ok {
		return false
	}
	remote := ipBytes(addr)
	if remote == nil || len(remote) != len(acl) {
		return false
	}
	maskBits(acl, bits)
	maskBits(remote, bits)
	return string(acl) == string(remote)
}

// parseIPExpr splits "addr[/bits]" into the address bytes and prefix length.
func parseIPExpr(expr string) ([]byte, int, bool) {
	addr, bitsText, hasBits := strings.Cut(expr, "/")
	b := ipBytes(addr)
	if b == nil {
		return nil, 0, false
	}
	bits := len(b) * 8
	if hasBits {
		n, ok := parseJavaInt(bitsText, 10)
		if !ok || n < 0 || int(n) > len(b)*8 {
			return nil, 0, false
		}
		bits = int(n)
	}
	return b, bits, true
}

// ipBytes parses an address as addr2Bytes does: a colon makes it IPv6, else
// a dot makes it IPv4; nil if it does not parse.
func ipBytes(addr string) []byte {
	switch {
	case strings.Contains(addr, ":"):
		return ipv6Bytes(addr)
	case strings.Contains(addr, "."):
		return ipv4Bytes(addr)
	default:
		return nil
	}
}

func ipv4Bytes(addr string) []byte {
	parts := strings.Split(addr, ".")
	if len(parts) != 4 {
		return nil
	}
	b := make([]byte, 4)
	for i, p := range parts {
		v, ok := parseJavaInt(p, 10)
		if !ok || v < 0 || v > 255 {
			return nil
		}
		b[i] = byte(v)
	}
	return b
}

func ipv6Bytes(addr string) []byte {
	var head, tail []string
	switch halves := strings.Split(addr, "::"); len(halves) {
	case 1:
		head = strings.Split(addr, ":")
		if len(head) != 8 {
			return nil
		}
	case 2:
		if halves[0] != "" {
			head = strings.Split(halves[0], ":")
		}
		if halves[1] != "" {
			tail = strings.Split(halves[1], ":")
		}
		if len(head)+len(tail) >= 8 {
			return nil
		}
	default:
		return nil
	}
	b := make([]byte, 16)
	if !putIPv6Groups(b, head) || !putIPv6Groups(b[16-2*len(tail):], tail) {
		return nil
	}
	return b
}

// putIPv6Groups writes 16-bit groups of up to four hex digits (Java
// chars) into b.
func putIPv6Groups(b []byte, groups []string) bool {
	for i, g := range groups {
		if g == "" || utf16Len(g) > 4 {
			return false
		}
		v, ok := parseJavaInt(g, 16)
		if !ok {
			return false
		}
		b[2*i], b[2*i+1] = byte(v>>8), byte(v)
	}
	return true
}

// maskBits clears every bit of b after the first bits.
func maskBits(b []byte, bits int) {
	for i := range b {
		switch {
		case bits >= 8:
			bits -= 8
		case bits > 0:
			b[i] &^= 0xFF >> bits
			bits = 0
		default:
			b[i] = 0
		}
	}
}

// utf16Len returns the length of s in Java chars.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xffff {
			n++
		}
	}
	return n
}

// parseJavaInt is javastr.ParseInt, widened for the range checks here.
func parseJavaInt(s string, radix int) (int64, bool) {
	n, ok := javastr.ParseInt(s, radix)
	return int64(n), ok
}
