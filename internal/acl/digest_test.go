package acl

import "testing"

func TestDigestID(t *testing.T) {
	// The documented super digest: java DigestAuthenticationProvider super:test.
	if got, want := DigestID("super", "test"), "super:D/InIHSb7yEEbrWz8b9l71RjZJU="; got != want {
		t.Fatalf("DigestID(super, test) = %q, want %q", got, want)
	}
}

// digestCases were computed with DigestAuthenticationProvider.generateDigest
// (3.9.5) on new String(bytes, UTF_8), as handleAuthentication does.
var digestCases = []struct {
	auth string
	want string
}{
	{"super:test", "super:D/InIHSb7yEEbrWz8b9l71RjZJU="},
	{"u:p", "u:Jq7wMyA/w2Vd5WIDAKdu4OIIFEQ="},
	{"nocolon", "nocolon:Ra+cHr2ZoHvBjtNArFGNGlVie4g="},
	{"", ":2jmj7l5rSw0yVb/vlWAYkK/YBwk="},
	{":", ":BaefBs8/Z/cm2uaNGKIpD2yaUMk="},
	{"a:b:c", "a:cLzgnoJ6mP5qz3w+mwvPE2vDgu0="},
	{":pw", ":krPDEYdCl854cFNT6IXnoMv+VVA="},
	{"jörg:pässwörd", "jörg:mnYDsH6V3vPsnN06468VcbUo34M="},
	{"bad\xff:pw", "bad\ufffd:gEeMvyaQhp8S/gH8u3ZTBlji1gE="},
	{"x\xe2\x82:pw", "x\ufffd:BkRzr3s1hw3J/3gfeX1JkVYsGLY="},
	{"x\xe2\x82\xe2\x82\xac:pw", "x\ufffd€:FmqmFIZnPc/5o+H7SbLJa+80300="},
	{"\xf0\x9f\x98:\xc0\xaf", "\ufffd:VNPZ5MF9GzVmeLHy1ULRZDVWWCs="},
	{"\xed\xa0\x80:p", "\ufffd:CF2aQmKhCpl6NRwvXg6ky6/tkEA="},
	{"\xed\xa0:p", "\ufffd:CF2aQmKhCpl6NRwvXg6ky6/tkEA="},
	{"\xed\xc0:p", "\ufffd\ufffd:CHAajMjCV+FUX0fRvRN/qglqzJ0="},
	{"\xe0\x80\x80:p", "\ufffd\ufffd\ufffd:klr8XcXvERXLexcF7FmW0pBUPqU="},
	{"\xf4\x90\x80\x80:p", "\ufffd\ufffd\ufffd\ufffd:E2CvrDlcxyI8C77ZX7av3GMeWB0="},
	{"\xc0\xaf:p", "\ufffd\ufffd:CHAajMjCV+FUX0fRvRN/qglqzJ0="},
	{"\xf4\x8f\x8f:p", "\ufffd:CF2aQmKhCpl6NRwvXg6ky6/tkEA="},
	{"\x80\x80:p", "\ufffd\ufffd:CHAajMjCV+FUX0fRvRN/qglqzJ0="},
}

func TestDigestFromAuth(t *testing.T) {
	for _, tc := range digestCases {
		if got := DigestFromAuth([]byte(tc.auth)); got != tc.want {
			t.Errorf("DigestFromAuth(%q) = %q, want %q", tc.auth, got, tc.want)
		}
	}
	// An AuthPacket for user:password gives the id DigestID builds.
	if got, want := DigestFromAuth([]byte("alice:s3cret")), DigestID("alice", "s3cret"); got != want {
		t.Errorf("DigestFromAuth(alice:s3cret) = %q, DigestID = %q", got, want)
	}
}

func TestValidDigestID(t *testing.T) {
	cases := map[string]bool{
		"u:p": true, "u:p:": true, "u:p::": true, ":p": true, "u:": false, "up": false,
		"": false, ":": false, "::": false, "u::p": false, "u:p:q": false, "a:b:c:": false,
	}
	for in, want := range cases {
		if got := validDigestID(in); got != want {
			t.Errorf("validDigestID(%q) = %v, want %v", in, got, want)
		}
	}
}
