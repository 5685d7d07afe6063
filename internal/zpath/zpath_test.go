package zpath

import (
	"strings"
	"testing"
)

// validatePathCases follow PathUtils.validatePath (3.9). Paths reach the
// server as UTF-8; Java decodes them into UTF-16 first, so non-BMP runes are
// surrogate pairs (refused) and invalid UTF-8 becomes U+FFFD (refused).
var validatePathCases = []struct {
	path string
	ok   bool
	why  string // substring of the error
}{
	{"", false, "length must be > 0"},
	{"a", false, "must start with /"},
	{"a/b", false, "must start with /"},
	{"zookeeper", false, "must start with /"},
	{"/", true, ""},
	{"/a", true, ""},
	{"/a/b/c", true, ""},
	{"/zookeeper/config", true, ""},
	{"/a/", false, "must not end with /"},
	{"/a/b/", false, "must not end with /"},
	{"//", false, "must not end with /"},
	{"//a", false, "empty node name"},
	{"/a//b", false, "empty node name"},
	{"/.", false, "relative paths"},
	{"/..", false, "relative paths"},
	{"/a/.", false, "relative paths"},
	{"/a/..", false, "relative paths"},
	{"/./a", false, "relative paths"},
	{"/../a", false, "relative paths"},
	{"/a/./b", false, "relative paths"},
	{"/a/../b", false, "relative paths"},
	{"/...", true, ""},
	{"/..../a", true, ""},
	{"/.a", true, ""},
	{"/a.", true, ""},
	{"/..a", true, ""},
	{"/a..", true, ""},
	{"/a.b", true, ""},
	{"/a..b", true, ""},
	{"/a/.b/..c/d..", true, ""},
	{"/a\x00b", false, "null character"},
	{"/\x00", false, "null character"},
	{"/a\x01", false, "invalid character"},
	{"/a\tb", false, "invalid character"},
	{"/a\nb", false, "invalid character"},
	{"/a\x1f", false, "invalid character"},
	{"/a b", true, ""},
	{"/a~", true, ""},
	{"/a\x7f", false, "invalid character"},
	{"/a\u0080", false, "invalid character"},
	{"/a\u009f", false, "invalid character"},
	{"/a\u00a0", true, ""},
	{"/é", true, ""},
	{"/日本/語", true, ""},
	{"/a\ud7ff", true, ""},
	{"/a\ue000", false, "invalid character"},
	{"/a\uf8ff", false, "invalid character"},
	{"/a\uf900", true, ""},
	{"/a\uffef", true, ""},
	{"/a\ufff0", false, "invalid character"},
	{"/a\ufffd", false, "invalid character"},
	{"/a\uffff", false, "invalid character"},
	{"/a\U0001F600", false, "invalid character"},
	{"/a\U00010000", false, "invalid character"},
	{"/a\xff", false, "invalid character"},
	{"/a\xc3", false, "invalid character"},
	{"/a\xc3(", false, "invalid character"},
	{"/a\xed\xa0\x80", false, "invalid character"}, // an encoded surrogate is invalid UTF-8
	{"/\x80", false, "invalid character"},
	// The first problem wins, in ZooKeeper's order.
	{"/.//", false, "must not end with /"},
	{"/./\x01", false, "relative paths"},
	{"/\x01/.", false, "invalid character"},
}

func TestValidatePath(t *testing.T) {
	for _, tc := range validatePathCases {
		err := Validate(tc.path)
		if tc.ok {
			if err != nil {
				t.Errorf("Validate(%q) = %v, want ok", tc.path, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("Validate(%q) = nil, want error containing %q", tc.path, tc.why)
			continue
		}
		if !strings.Contains(err.Error(), tc.why) {
			t.Errorf("Validate(%q) = %v, want error containing %q", tc.path, err, tc.why)
		}
	}
}

func TestValidatePathLong(t *testing.T) {
	long := "/" + strings.Repeat("a/", 5000) + "b"
	if err := Validate(long); err != nil {
		t.Fatalf("long valid path: %v", err)
	}
	if err := Validate(long + "/."); err == nil {
		t.Fatal("long path ending in /. accepted")
	}
}

func TestParentJoin(t *testing.T) {
	cases := []struct {
		path, parent, name string
	}{
		{"/", "", ""},
		{"", "", ""},
		{"a", "", ""},
		{"/a", "/", "a"},
		{"/a/b", "/a", "b"},
		{"/a/b/c", "/a/b", "c"},
		{"/a/", "/a", ""},
		{"//", "/", ""},
		{"/zookeeper/config", "/zookeeper", "config"},
	}
	for _, tc := range cases {
		parent, name := Parent(tc.path)
		if parent != tc.parent || name != tc.name {
			t.Errorf("Parent(%q) = %q, %q; want %q, %q", tc.path, parent, name, tc.parent, tc.name)
		}
		if tc.name != "" && tc.parent != "" {
			if got := Join(parent, name); got != tc.path {
				t.Errorf("Join(%q, %q) = %q, want %q", parent, name, got, tc.path)
			}
		}
	}
	if got := Join("/", "x"); got != "/x" {
		t.Errorf(`Join("/", "x") = %q`, got)
	}
	if got := Join("/a/b", "x"); got != "/a/b/x" {
		t.Errorf(`Join("/a/b", "x") = %q`, got)
	}
}

// sameAsRunes checks that Validate, whose loop takes ASCII paths byte by
// byte, says exactly what the rune-by-rune loop (validateRunes) says about
// p.
func sameAsRunes(t *testing.T, p string) {
	t.Helper()
	if p == "" || p[0] != '/' || len(p) == 1 || p[len(p)-1] == '/' {
		return // settled by Validate's first checks, before either loop
	}
	got, want := Validate(p), validateRunes(p)
	if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
		t.Fatalf("Validate(%q) = %v; the rune loop says %v", p, got, want)
	}
}

// TestValidateASCIIMatchesRunes runs every case of TestValidatePath, and
// every ASCII byte in each position of a short path, through both loops.
func TestValidateASCIIMatchesRunes(t *testing.T) {
	for _, tc := range validatePathCases {
		sameAsRunes(t, tc.path)
	}
	for c := range 0x80 {
		for _, p := range []string{"/%c", "/a%c", "/%cb", "/a/%c/b", "/.%c", "/a/.%c", "/..%c/b"} {
			sameAsRunes(t, strings.Replace(p, "%c", string(rune(c)), 1))
		}
	}
}

// FuzzValidateASCII compares the two loops on arbitrary paths.
func FuzzValidateASCII(f *testing.F) {
	for _, tc := range validatePathCases {
		f.Add(tc.path)
	}
	f.Add("/a/./b")
	f.Add("/a/\x7f")
	f.Fuzz(func(t *testing.T, p string) {
		sameAsRunes(t, p)
	})
}

// BenchmarkValidate checks a typical path: ASCII, a few components.
func BenchmarkValidate(b *testing.B) {
	for b.Loop() {
		if err := Validate("/bench-1234/session-07/key-0000012345"); err != nil {
			b.Fatal(err)
		}
	}
}
