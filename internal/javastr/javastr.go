// Package javastr converts bytes to strings as ZooKeeper's Java code does,
// where the bytes' decoding shows in what Paddock prints or compares: a
// digest computed from an auth packet's bytes, data zkCli prints.
package javastr

import (
	"strings"
	"unicode/utf8"
)

// FromUTF8 returns b as Java's new String(b, UTF_8) reads it: valid UTF-8
// unchanged; each maximal ill-formed subsequence (the lead byte and the
// continuation bytes a well-formed sequence could have after it, Unicode's
// table 3-7 "best practice") becomes one U+FFFD, except that Java takes an
// encoded surrogate (ED A0..BF 80..BF) and its prefixes as one ill-formed
// sequence (checked against Java 17's decoder).
func FromUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			n = maximalSubpart(b)
		}
		sb.WriteRune(r)
		b = b[n:]
	}
	return sb.String()
}

// maximalSubpart returns the length (at least 1) of the ill-formed
// sequence at the start of b, which does not begin with a well-formed
// character.
func maximalSubpart(b []byte) int {
	need, lo, hi := 0, byte(0x80), byte(0xbf) // continuation bytes; range of the first
	switch c := b[0]; {
	case c >= 0xc2 && c <= 0xdf:
		need = 1
	case c == 0xe0:
		need, lo = 2, 0xa0
	case c >= 0xe1 && c <= 0xef:
		// 0xed too: Java takes an encoded surrogate (0xed 0xa0-0xbf
		// 0x80-0xbf) as one malformed sequence, where Unicode's table
		// would make each byte one.
		need = 2
	case c == 0xf0:
		need, lo = 3, 0x90
	case c >= 0xf1 && c <= 0xf3:
		need = 3
	case c == 0xf4:
		need, hi = 3, 0x8f
	}
	n := 1
	for n <= need && n < len(b) && b[n] >= lo && b[n] <= hi {
		n++
		lo, hi = 0x80, 0xbf
	}
	return n
}
