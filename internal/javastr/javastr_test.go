package javastr

import (
	"testing"
	"unicode/utf8"
)

// TestFromUTF8 holds what Java 17's new String(b, UTF_8) gives (zkCli 3.8
// printed these, against ZooKeeper 3.8).
func TestFromUTF8(t *testing.T) {
	const r = "\uFFFD"
	cases := []struct{ in, want string }{
		{"", ""},
		{"plain €", "plain €"},
		{"\xe2\x82", r},
		{"\xe2\x82A", r + "A"},
		{"\xf0\x9f\x98", r},
		{"\xf0\x9f\x98A", r + "A"},
		{"\xed\xa0\x80", r}, // an encoded surrogate is one sequence to Java
		{"\xed\xa0A", r + "A"},
		{"\xc0\x80", r + r},
		{"\xff\xfe", r + r},
		{"\xf4\x90\x80\x80", r + r + r + r},
		{"a\x00b", "a\x00b"},
		{"\xe0\x80\x80", r + r + r},
		{"\xf0\x80\x80\x80", r + r + r + r},
		{"\xf8\x88\x80\x80\x80", r + r + r + r + r},
		{"\xe2\x28\xa1", r + "(" + r},
		{"\x80\x80", r + r},
		{"\xe2\x82\xac\xe2", "€" + r},
		{"a\xffb", "a" + r + "b"},
	}
	for _, c := range cases {
		if got := FromUTF8([]byte(c.in)); got != c.want {
			t.Errorf("FromUTF8(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzFromUTF8(f *testing.F) {
	f.Add([]byte("\xe2\x82A\xed\xa0\x80"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := FromUTF8(b)
		if !utf8.ValidString(s) {
			t.Fatalf("FromUTF8(%q) = %q is not valid UTF-8", b, s)
		}
		if utf8.Valid(b) && s != string(b) {
			t.Fatalf("FromUTF8 changed valid UTF-8 %q into %q", b, s)
		}
		if n := utf8.RuneCountInString(s); n > len(b) {
			t.Fatalf("FromUTF8(%q) = %q: %d characters from %d bytes", b, s, n, len(b))
		}
	})
}

// TestFromUTF8JDK17: new String(b, UTF_8) on JDK 17, re-encoded.
func TestFromUTF8JDK17(t *testing.T) {
	const r = "\ufffd"
	tests := []struct{ in, want string }{
		{"count", "count"},
		{"é😀", "é😀"},
		{"\xff", r},
		{"\x80\x80", r + r},
		{"\xc0\x80", r + r},                 // overlong: two bytes, each malformed
		{"\xc3", r},                         // cut short at the end
		{"\xc3=", r + "="},                  // a non-continuation is read again
		{"\xe2\x82", r},                     // cut short: one
		{"\xe2\x82=", r + "="},              // lead and fitting byte: one
		{"\xe2=\x82", r + "=" + r},          //
		{"\xe0\x80\x80", r + r + r},         // overlong after 0xE0: byte by byte
		{"\xed\xa0\x80", r},                 // a surrogate: one for all three
		{"\xed\xa0", r},                     // cut short
		{"\xf0\x9f\x98", r},                 // cut short
		{"\xf0\x9f=", r + "="},              // lead and fitting byte: one
		{"\xf0\x9f\x98=", r + "="},          // lead and two fitting bytes: one
		{"\xf0\x80\x80\x80", r + r + r + r}, // overlong after 0xF0
		{"\xf4\x90\x80\x80", r + r + r + r}, // above U+10FFFF
		{"\xf5\x80", r + r},
		{"\xf0\x9f\x98\x80\xff", "😀" + r},
	}
	for _, tt := range tests {
		if got := FromUTF8([]byte(tt.in)); got != tt.want {
			t.Errorf("FromUTF8(%x) = %+q, want %+q", tt.in, got, tt.want)
		}
	}
}
