package acl

import "testing"

// ipValidCases follow IPAuthenticationProvider.isValid (3.9.5), checked
// against it.
var ipValidCases = []struct {
	id   string
	want bool
}{
	{"127.0.0.1", true},
	{"10.0.0.0/8", true},
	{"10.0.0.0/0", true},
	{"10.0.0.0/32", true},
	{"10.0.0.0/33", false},
	{"10.0.0.0/-1", false},
	{"10.0.0.0/", false},
	{"10.0.0.0/x", false},
	{"10.0.0.0/8/8", false},
	{"10.0.0.0/08", true},
	{"10.0.0.0/+8", true},
	{"010.001.000.001", true},
	{"+1.2.3.4", true},
	{"256.0.0.1", false},
	{"-1.0.0.1", false},
	{"1.2.3", false},
	{"1.2.3.4.5", false},
	{"1..3.4", false},
	{"1.2.3.", false},
	{"a.b.c.d", false},
	{"localhost", false},
	{"", false},
	{"/8", false},
	{"::", true},
	{"::1", true},
	{"::1/128", true},
	{"::1/129", false},
	{"fe80::/10", true},
	{"1:2:3:4:5:6:7:8", true},
	{"1:2:3:4:5:6:7:8/64", true},
	{"1:2:3:4:5:6:7", false},
	{"1:2:3:4:5:6:7:8:9", false},
	{"1:2:3:4:5:6:7::", true},
	{"::2:3:4:5:6:7:8", true},
	{"1:2:3:4::5:6:7:8", false},
	{"1::2::3", false},
	{"1:::2", false},
	{":1:2:3:4:5:6:7", false},
	{"12345::", false},
	{"abcd::ef01", true},
	{"ABCD::EF01", true},
	{"g::1", false},
	{"::ffff:1.2.3.4", false},
	{"fe80::1%eth0", false},
	{"[::1]", false},
	{"1.2.3.4:80", false},
}

func TestValidIP(t *testing.T) {
	for _, tc := range ipValidCases {
		if got := validIP(tc.id); got != tc.want {
			t.Errorf("validIP(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}

// ipMatchCases follow IPAuthenticationProvider.matches (3.9.5).
var ipMatchCases = []struct {
	addr, expr string
	want       bool
}{
	{"10.1.2.3", "10.1.2.3", true},
	{"10.1.2.3", "10.1.2.4", false},
	{"10.1.2.3", "10.1.2.0/24", true},
	{"10.1.3.3", "10.1.2.0/24", false},
	{"10.1.2.3", "10.1.2.255/24", true},
	{"10.1.2.3", "10.1.2.2/31", true},
	{"10.1.2.4", "10.1.2.2/31", false},
	{"10.1.2.3", "10.1.2.3/33", false},
	{"10.1.2.3", "0.0.0.0/0", true},
	{"10.1.2.3", "010.001.002.003", true},
	{"010.1.2.3", "10.1.2.3", true},
	{"10.1.2.3", "bad", false},
	{"bad", "10.1.2.3", false},
	{"::1", "::1", true},
	{"0:0:0:0:0:0:0:1", "::1", true},
	{"::1", "127.0.0.1", false},
	{"127.0.0.1", "::1", false},
	{"127.0.0.1", "::/0", false},
	{"::ffff:127.0.0.1", "127.0.0.1", false},
	{"2001:db8::1", "2001:db8::/32", true},
	{"2001:db9::1", "2001:db8::/32", false},
	{"2001:db8::1", "2001:db8::/31", true},
	{"2001:db9::1", "2001:db8::/31", true},
	{"2001:dba::1", "2001:db8::/31", false},
	{"fe80::1", "FE80::/10", true},
	{"febf::1", "fe80::/10", true},
	{"fec0::1", "fe80::/10", false},
}

func TestIPMatches(t *testing.T) {
	for _, tc := range ipMatchCases {
		if got := ipMatches(tc.addr, tc.expr); got != tc.want {
			t.Errorf("ipMatches(%q, %q) = %v, want %v", tc.addr, tc.expr, got, tc.want)
		}
	}
}

func TestMaskBits(t *testing.T) {
	cases := []struct {
		bits int
		want [4]byte
	}{
		{32, [4]byte{0xff, 0xff, 0xff, 0xff}},
		{24, [4]byte{0xff, 0xff, 0xff, 0}},
		{20, [4]byte{0xff, 0xff, 0xf0, 0}},
		{1, [4]byte{0x80, 0, 0, 0}},
		{0, [4]byte{}},
		{40, [4]byte{0xff, 0xff, 0xff, 0xff}},
	}
	for _, tc := range cases {
		b := []byte{0xff, 0xff, 0xff, 0xff}
		maskBits(b, tc.bits)
		if [4]byte(b) != tc.want {
			t.Errorf("maskBits(ff.., %d) = %x, want %x", tc.bits, b, tc.want)
		}
	}
}

// TestIPJavaDigits: IPAuthenticationProvider parses the parts of an
// address and the prefix length with Integer.parseInt, which takes every
// digit Character.digit knows: Unicode decimal digits (Nd) in the BMP, and
// for IPv6's hex groups the fullwidth Latin letters too. ZooKeeper 3.8
// accepts "ip:\u0661\u0662\u0667.0.0.1" and lets 127.0.0.1 read a node
// with that ACL (checked against the Debian 3.8.0 server).
func TestIPJavaDigits(t *testing.T) {
	valid := []struct {
		id   string
		want bool
	}{
		{"\u0661.2.3.4", true},                      // ARABIC-INDIC DIGIT ONE
		{"1.2.3.4/\u0668", true},                    // prefix length 8
		{"\uff11.2.3.4", true},                      // FULLWIDTH DIGIT ONE
		{"\u0b66\u1040.2.3.4", true},                // Oriya and Myanmar zeros
		{"\U0001D7CF.2.3.4", false},                 // outside the BMP: two surrogates for Java
		{"\u00b2.2.3.4", false},                     // superscript two is no Nd digit
		{"\uff21::1", true},                         // FULLWIDTH LATIN CAPITAL LETTER A
		{"::\uff46", true},                          // fullwidth small f
		{"::\uff47", false},                         // fullwidth small g
		{"::\u0661\u0661\u0661\u0661", true},        // four UTF-16 units
		{"::\u0661\u0661\u0661\u0661\u0661", false}, // five
		{"\uff21.2.3.4", false},                     // a letter is no decimal digit
	}
	for _, tc := range valid {
		if got := validIP(tc.id); got != tc.want {
			t.Errorf("validIP(%+q) = %v, want %v", tc.id, got, tc.want)
		}
	}
	match := []struct {
		addr, expr string
		want       bool
	}{
		{"127.0.0.1", "\u0661\u0662\u0667.0.0.1", true},
		{"127.0.0.2", "\u0661\u0662\u0667.0.0.1", false},
		{"127.0.0.1", "127.0.0.1/\u0663\u0662", true},
		{"127.9.9.9", "127.0.0.1/\u0668", true},
		{"10.0.0.1", "\uff11\uff10.0.0.0/8", true},
		{"::a", "::\uff21", true},
		{"::b", "::\uff21", false},
	}
	for _, tc := range match {
		if got := ipMatches(tc.addr, tc.expr); got != tc.want {
			t.Errorf("ipMatches(%q, %+q) = %v, want %v", tc.addr, tc.expr, got, tc.want)
		}
	}
}
