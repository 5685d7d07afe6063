package difftest

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResolveAndShowPath(t *testing.T) {
	const root = "/t7"
	tests := []struct {
		in, want, shown string
	}{
		{"/", "/t7", "/"},
		{"/a", "/t7/a", "/a"},
		{"/a/b/", "/t7/a/b/", "/a/b/"},
		{"=/zookeeper", "/zookeeper", "=/zookeeper"},
		{"=", "", "="},
		{"=a", "a", "=a"},
		{"=/t70", "/t70", "=/t70"}, // a sibling with the root as prefix is not under it
		{"%/", "/zookeeper/quota/t7", "%/"},
		{"%/a/zookeeper_limits", "/zookeeper/quota/t7/a/zookeeper_limits", "%/a/zookeeper_limits"},
		{"=/zookeeper/quota/t70/a", "/zookeeper/quota/t70/a", "=/zookeeper/quota/t70/a"},
		{"=/zookeeper/quota", "/zookeeper/quota", "=/zookeeper/quota"},
	}
	for _, tc := range tests {
		got, err := ResolvePath(root, Token{Text: tc.in})
		if err != nil || got != tc.want {
			t.Errorf("ResolvePath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			continue
		}
		if shown := ShowPath(root, got); shown != tc.shown {
			t.Errorf("ShowPath(%q) = %q, want %q", got, shown, tc.shown)
		}
	}
	for _, bad := range []Token{{Text: "a"}, {Text: ""}, {IsList: true}, {Text: "%"}, {Text: "%a"}, {Text: "%=/a"}} {
		if _, err := ResolvePath(root, bad); err == nil {
			t.Errorf("ResolvePath(%v) succeeded, want an error", bad)
		}
	}
}

func TestParseData(t *testing.T) {
	tests := []struct {
		tok  Token
		want []byte
	}{
		{Token{Text: "null"}, nil},
		{Token{Text: "null", Quoted: true}, []byte("null")},
		{Token{Text: "", Quoted: true}, []byte{}},
		{Token{Text: "@3"}, []byte("xxx")},
		{Token{Text: "@0"}, []byte{}},
		{Token{Text: "hex:00ff"}, []byte{0, 0xff}},
		{Token{Text: "hex:"}, []byte{}},
		{Token{Text: "plain"}, []byte("plain")},
	}
	for _, tc := range tests {
		got, err := ParseData(tc.tok)
		if err != nil || !bytes.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("ParseData(%v) = %q (nil %t), %v; want %q (nil %t)", tc.tok, got, got == nil, err, tc.want, tc.want == nil)
		}
	}
	for _, bad := range []string{"@-1", "@x", "@99999999", "hex:0", "hex:zz"} {
		if _, err := ParseData(Token{Text: bad}); err == nil {
			t.Errorf("ParseData(%q) succeeded, want an error", bad)
		}
	}
}

func TestPerms(t *testing.T) {
	tests := []struct {
		in   string
		perm int32
		out  string
	}{
		{"cdrwa", proto.PermAll, "cdrwa"},
		{"arwdc", proto.PermAll, "cdrwa"},
		{"r", proto.PermRead, "r"},
		{"", 0, "-"},
		{"#127", 127, "cdrwa+#96"},
		{"#2", proto.PermWrite, "w"},
	}
	for _, tc := range tests {
		p, err := ParsePerms(tc.in)
		if err != nil || p != tc.perm {
			t.Errorf("ParsePerms(%q) = %d, %v; want %d", tc.in, p, err, tc.perm)
		}
		if out := FormatPerms(p); out != tc.out {
			t.Errorf("FormatPerms(%d) = %q, want %q", p, out, tc.out)
		}
	}
	for _, bad := range []string{"x", "#", "#a", "rwx"} {
		if _, err := ParsePerms(bad); err == nil {
			t.Errorf("ParsePerms(%q) succeeded, want an error", bad)
		}
	}
}

func TestParseACLs(t *testing.T) {
	world := proto.ID{Scheme: "world", ID: "anyone"}
	tests := []struct {
		in   string
		want []proto.ACL
	}{
		{"null", nil},
		{"empty", []proto.ACL{}},
		{"open", []proto.ACL{{Perms: proto.PermAll, ID: world}}},
		{"read", []proto.ACL{{Perms: proto.PermRead, ID: world}}},
		{"creator", []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "auth"}}}},
		{"ip:127.0.0.1/8:rw,world:anyone:", []proto.ACL{
			{Perms: proto.PermRead | proto.PermWrite, ID: proto.ID{Scheme: "ip", ID: "127.0.0.1/8"}},
			{Perms: 0, ID: world}}},
		{"ip:::1:a", []proto.ACL{{Perms: proto.PermAdmin, ID: proto.ID{Scheme: "ip", ID: "::1"}}}},
		// The digest ZooKeeper stores for alice:pw (seen in its getACL answers).
		{"digestpw:alice:pw:r", []proto.ACL{{Perms: proto.PermRead,
			ID: proto.ID{Scheme: "digest", ID: "alice:V55/p2T0OpjQ+low3NVAH4aLvm0="}}}},
	}
	for _, tc := range tests {
		got, err := ParseACLs(Token{Text: tc.in})
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseACLs(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"world", "world:anyone", "world:anyone:q", "digestpw:alice:r"} {
		if _, err := ParseACLs(Token{Text: bad}); err == nil {
			t.Errorf("ParseACLs(%q) succeeded, want an error", bad)
		}
	}
	if got := FormatACLs([]proto.ACL{{Perms: 1, ID: world}, {Perms: 16, ID: proto.ID{Scheme: "digest", ID: "u:x"}}}); got != "[world:anyone:r digest:u:x:a]" {
		t.Errorf("FormatACLs = %q", got)
	}
	if got := FormatACLs(nil); got != "null" {
		t.Errorf("FormatACLs(nil) = %q, want null", got)
	}
}

func TestParseMode(t *testing.T) {
	tests := map[string]int32{
		"persistent": 0, "ephemeral": 1, "persistent_sequential": 2, "ephemeral_sequential": 3,
		"container": 4, "ttl": 5, "ttl_sequential": 6, "7": 7, "-1": -1,
	}
	for in, want := range tests {
		if got, err := ParseMode(Token{Text: in}); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := ParseMode(Token{Text: "forever"}); err == nil || !strings.Contains(err.Error(), "decimal") {
		t.Errorf("ParseMode(forever) error = %v", err)
	}
}

func TestHexWithPaths(t *testing.T) {
	r := &runner{opts: RunOptions{Root: "/t1"}}
	got, err := r.hexWithPaths("<0000_0001_{/a}_ff>00")
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0, 0, 0, 14, 0, 0, 0, 1, 0, 0, 0, 5, '/', 't', '1', '/', 'a', 0xff, 0}
	if !bytes.Equal(got, want) {
		t.Errorf("hexWithPaths = %x, want %x", got, want)
	}
	for _, bad := range []string{"<00", "00>", "{/a", "{a}", "0"} {
		if _, err := r.hexWithPaths(bad); err == nil {
			t.Errorf("hexWithPaths(%q) succeeded, want an error", bad)
		}
	}
}
