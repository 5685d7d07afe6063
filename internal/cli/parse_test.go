package cli

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/javastr"
	"github.com/paddockhq/paddock/zk"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"ls /", []string{"ls", "/"}},
		{"  ls   /a\t/b  ", []string{"ls", "/a", "/b"}},
		{`create /a "hello world"`, []string{"create", "/a", "hello world"}},
		{`create /a 'single q'`, []string{"create", "/a", "single q"}},
		{`create /a a"b`, []string{"create", "/a", `a"b`}},
		{`create /a "unterminated`, []string{"create", "/a", "unterminated"}},
		{`create /a ""`, []string{"create", "/a", ""}},
		{`set /a "x y"z`, []string{"set", "/a", "x y", "z"}},
		{`set /a 'it"s'`, []string{"set", "/a", `it"s`}},
		{` "abc`, []string{` "abc`}}, // Java's regex gives back a blank
		{"", nil},
		{"   ", []string{" "}}, // Java's regex gives back the last blank as a word
		{"\t", []string{"\t"}},
		{" \t", []string{"\t"}},
		{`"`, nil},
	}
	for _, tt := range tests {
		if got := Tokenize(tt.line); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Tokenize(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestParseFlags(t *testing.T) {
	quota := flagSpec{opts: "n:b:N:B:", group: []groupOpt{{'n', "num soft quota"}, {'b', "bytes soft quota"}}, groupRequired: true}
	tests := []struct {
		spec    flagSpec
		words   string
		args    []string
		set     string
		vals    map[byte]string
		wantErr string
	}{
		{spec: flagSpec{opts: "swR"}, words: "ls -s -w /a", args: []string{"ls", "/a"}, set: "sw"},
		{spec: flagSpec{opts: "swR"}, words: "ls -sw /a", args: []string{"ls", "/a"}, set: "sw"},
		{spec: flagSpec{opts: "swR"}, words: "ls /a -R", args: []string{"ls", "/a"}, set: "R"},
		{spec: flagSpec{opts: "swR"}, words: "ls -x /a", wantErr: "Unrecognized option: -x"},
		{spec: flagSpec{opts: "swR"}, words: "ls -sx /a", wantErr: "Unrecognized option: -sx"},
		{spec: flagSpec{opts: "swR"}, words: "ls --s /a", wantErr: "Unrecognized option: --s"},
		{spec: flagSpec{opts: "swR"}, words: "ls -- -s", args: []string{"ls", "-s"}},
		{spec: flagSpec{opts: "swR"}, words: "ls - /a", args: []string{"ls", "-", "/a"}},
		{spec: flagSpec{opts: "sv:"}, words: "set -v 3 /a x", args: []string{"set", "/a", "x"}, set: "v", vals: map[byte]string{'v': "3"}},
		{spec: flagSpec{opts: "sv:"}, words: "set -v3 /a x", args: []string{"set", "/a", "x"}, set: "v", vals: map[byte]string{'v': "3"}},
		{spec: flagSpec{opts: "sv:"}, words: "set -v=3 /a x", args: []string{"set", "/a", "x"}, set: "v", vals: map[byte]string{'v': "3"}},
		{spec: flagSpec{opts: "sv:"}, words: "set -sv3 /a x", args: []string{"set", "/a", "x"}, set: "sv", vals: map[byte]string{'v': "3"}},
		{spec: flagSpec{opts: "sv:"}, words: "set -v -1 /a x", args: []string{"set", "/a", "x"}, set: "v", vals: map[byte]string{'v': "-1"}},
		{spec: flagSpec{opts: "sv:"}, words: "set -v -s /a x", wantErr: "MissingArgumentException: Missing argument for option: v"},
		{spec: flagSpec{opts: "sv:"}, words: "set /a x -v", wantErr: "Missing argument for option: v"},
		{spec: flagSpec{opts: "sv:"}, words: "set /a -1", wantErr: "Unrecognized option: -1"},
		{spec: flagSpec{opts: "sv:"}, words: "set -s=x /a", wantErr: "Unrecognized option: -s=x"},
		{spec: flagSpec{opts: "sv:"}, words: "set -v 1 -v 2 /a x", args: []string{"set", "/a", "x"}, set: "v", vals: map[byte]string{'v': "1"}},
		{spec: quota, words: "setquota -n 5 /a", args: []string{"setquota", "/a"}, set: "n", vals: map[byte]string{'n': "5"}},
		{spec: quota, words: "setquota /a", wantErr: "MissingOptionException: Missing required option: [-n num soft quota, -b bytes soft quota]"},
		{spec: quota, words: "setquota -n 5 -b 3 /a", wantErr: "AlreadySelectedException: The option 'b' was specified but an option from this group has already been selected: 'n'"},
		{spec: quota, words: "setquota -n 5 -n 6 /a", args: []string{"setquota", "/a"}, set: "n", vals: map[byte]string{'n': "5"}},
		{spec: flagSpec{}, words: "sync -x /", wantErr: "Unrecognized option: -x"},
	}
	for _, tt := range tests {
		f, err := parseFlags(tt.spec, strings.Fields(tt.words))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "org.apache.commons.cli.") {
				t.Errorf("parseFlags(%q) error = %v, want one containing %q", tt.words, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseFlags(%q): %v", tt.words, err)
			continue
		}
		if !reflect.DeepEqual(f.args, tt.args) {
			t.Errorf("parseFlags(%q) args = %q, want %q", tt.words, f.args, tt.args)
		}
		for i := 0; i < len(tt.spec.opts); i++ {
			c := tt.spec.opts[i]
			if c == ':' {
				continue
			}
			if want := strings.IndexByte(tt.set, c) >= 0; f.has(c) != want {
				t.Errorf("parseFlags(%q) has(%c) = %v, want %v", tt.words, c, f.has(c), want)
			}
		}
		for c, v := range tt.vals {
			if f.value(c) != v {
				t.Errorf("parseFlags(%q) value(%c) = %q, want %q", tt.words, c, f.value(c), v)
			}
		}
	}
}

func TestJavaNumbers(t *testing.T) {
	ints := []struct {
		s    string
		want int32
		ok   bool
	}{{"5", 5, true}, {"-1", -1, true}, {"+7", 7, true}, {"2147483648", 0, false}, {"abc", 0, false}, {"", 0, false}, {"1_0", 0, false}}
	for _, tt := range ints {
		if got, ok := parseJavaInt(tt.s); got != tt.want || ok != tt.ok {
			t.Errorf("parseJavaInt(%q) = %d, %v; want %d, %v", tt.s, got, ok, tt.want, tt.ok)
		}
	}
	decs := []struct {
		s    string
		want int32
		ok   bool
	}{{"12", 12, true}, {"0x1f", 31, true}, {"#10", 16, true}, {"010", 8, true}, {"-3", -3, true}, {"0", 0, true}, {"x", 0, false}, {"0x", 0, false}, {"--1", 0, false}}
	for _, tt := range decs {
		if got, ok := decodeJavaInt(tt.s); got != tt.want || ok != tt.ok {
			t.Errorf("decodeJavaInt(%q) = %d, %v; want %d, %v", tt.s, got, ok, tt.want, tt.ok)
		}
	}
}

func TestValidatePath(t *testing.T) {
	tests := []struct {
		path string
		seq  bool
		want string
	}{
		{"/", false, ""},
		{"/a/b", false, ""},
		{"/a/", true, ""},
		{"", false, "Path length must be > 0"},
		{"a", false, "Path must start with / character"},
		{"/a/", false, "Path must not end with / character"},
		{"/a//b", false, `Invalid path string "/a//b" caused by empty node name specified @3`},
		{"/a/./b", false, `Invalid path string "/a/./b" caused by relative paths not allowed @3`},
		{"/a/..", false, `Invalid path string "/a/.." caused by relative paths not allowed @4`},
		{"/a/.b", false, ""},
		{"/a\x01", false, "Invalid path string \"/a\x01\" caused by invalid character @2"},
	}
	for _, tt := range tests {
		err := validatePath(tt.path, tt.seq)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("validatePath(%q, %v) = %q, want %q", tt.path, tt.seq, got, tt.want)
		}
	}
}

func TestParseACL(t *testing.T) {
	tests := []struct {
		s        string
		want     []zk.ACL
		warnings []string
	}{
		{"world:anyone:cdrwa", zk.WorldACL(zk.PermAll), nil},
		{"auth::cdrwa", []zk.ACL{{Perms: zk.PermAll, ID: zk.ID{Scheme: "auth", ID: ""}}}, nil},
		{"digest:u:hash=:rw", []zk.ACL{{Perms: zk.PermRead | zk.PermWrite, ID: zk.ID{Scheme: "digest", ID: "u:hash="}}}, nil},
		{"ip:10.0.0.0/8:r,world:anyone:c", []zk.ACL{
			{Perms: zk.PermRead, ID: zk.ID{Scheme: "ip", ID: "10.0.0.0/8"}},
			{Perms: zk.PermCreate, ID: zk.ID{Scheme: "world", ID: "anyone"}},
		}, nil},
		{"world:anyone:rxz", zk.WorldACL(zk.PermRead), []string{"Unknown perm type: x", "Unknown perm type: z"}},
		{"bad", []zk.ACL{}, []string{"bad does not have the form scheme:id:perm"}},
		{"world:anyone", []zk.ACL{}, []string{"world:anyone does not have the form scheme:id:perm"}},
		// Java's String.split drops trailing empty strings, not others.
		{"world:anyone:r,", zk.WorldACL(zk.PermRead), nil},
		{"world:anyone:r,,", zk.WorldACL(zk.PermRead), nil},
		{",world:anyone:r", zk.WorldACL(zk.PermRead), []string{" does not have the form scheme:id:perm"}},
		{",", []zk.ACL{}, nil},
		{"", []zk.ACL{}, []string{" does not have the form scheme:id:perm"}},
	}
	for _, tt := range tests {
		got, warnings := ParseACL(tt.s)
		if !reflect.DeepEqual(got, tt.want) || !reflect.DeepEqual(warnings, tt.warnings) {
			t.Errorf("ParseACL(%q) = %v, %q; want %v, %q", tt.s, got, warnings, tt.want, tt.warnings)
		}
	}
}

func TestFormatting(t *testing.T) {
	if got := PermString(zk.PermAll); got != "cdrwa" {
		t.Errorf("PermString(all) = %q", got)
	}
	if got := PermString(zk.PermRead | zk.PermAdmin); got != "ra" {
		t.Errorf("PermString(r|a) = %q", got)
	}
	if got := javaID(zk.ID{Scheme: "world", ID: "anyone"}); got != "'world,'anyone\n" {
		t.Errorf("javaID = %q", got)
	}
	if got := javaID(zk.ID{Scheme: "x", ID: "a,b%}\n"}); got != "'x,'a%2Cb%25%7D%0A\n" {
		t.Errorf("javaID escaping = %q", got)
	}
	if got := javaHex(-1); got != "ffffffffffffffff" {
		t.Errorf("javaHex(-1) = %q", got)
	}
	if got := javaDate(0, time.UTC); got != "Thu Jan 01 00:00:00 UTC 1970" {
		t.Errorf("javaDate(0) = %q", got)
	}
	if got := javaDate(1700000000123, time.UTC); got != "Tue Nov 14 22:13:20 UTC 2023" {
		t.Errorf("javaDate = %q", got)
	}
	var b strings.Builder
	writeStat(&b, &zk.Stat{Czxid: 0x1a, EphemeralOwner: 0x100, NumChildren: 2, Aversion: -1}, time.UTC)
	want := "cZxid = 0x1a\nctime = Thu Jan 01 00:00:00 UTC 1970\nmZxid = 0x0\nmtime = Thu Jan 01 00:00:00 UTC 1970\npZxid = 0x0\n" +
		"cversion = 0\ndataVersion = 0\naclVersion = -1\nephemeralOwner = 0x100\ndataLength = 0\nnumChildren = 2\n"
	if b.String() != want {
		t.Errorf("writeStat:\n%s\nwant:\n%s", b.String(), want)
	}
	if got := javastr.FromUTF8([]byte{'a', 0xff, 'b'}); got != "a\uFFFDb" {
		t.Errorf("javaString = %q", got)
	}
	// The servers come in the order Java's Properties iterates over them
	// (what ZooKeeper 3.8's ConfigUtils.getClientConfigStr gives on Java 17).
	for cfg, want := range map[string]string{
		"server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\nserver.2=h:1:2;2182\nversion=100000000\n": "100000000 0.0.0.0:2182,127.0.0.1:2181",
		"server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\nserver.2=127.0.0.1:2889:3889:participant;127.0.0.1:2182\n" +
			"server.3=127.0.0.1:2890:3890:participant;127.0.0.1:2183\nversion=100000000": "100000000 127.0.0.1:2182,127.0.0.1:2181,127.0.0.1:2183",
		"server.10=a:1:2;c:10\nserver.2=a:1:2;c:2\nserver.1=a:1:2;c:1\nserver.11=a:1:2;c:11\nserver.9=a:1:2;c:9\nversion=1": "1 c:10,c:11,c:2,c:1,c:9",
	} {
		if got := clientConfig(cfg); got != want {
			t.Errorf("clientConfig(%q) = %q, want %q", cfg, got, want)
		}
	}
	// Fifteen servers: the table of 16 bins doubles after the twelfth key.
	var big strings.Builder
	for i := 1; i <= 15; i++ {
		fmt.Fprintf(&big, "server.%d=h:1:2;c:%d\n", i, i)
	}
	big.WriteString("version=f\n")
	if got, want := clientConfig(big.String()), "f c:10,c:11,c:2,c:14,c:1,c:15,c:12,c:13,c:6,c:5,c:4,c:3,c:9,c:8,c:7"; got != want {
		t.Errorf("clientConfig(15 servers) = %q, want %q", got, want)
	}
	if got := clientConfig(""); got != " " {
		t.Errorf("clientConfig(empty) = %q", got)
	}
}

func TestStatsTrack(t *testing.T) {
	tests := []struct{ in, out string }{
		{"count=5,bytes=-1=;byteHardLimit=-1;countHardLimit=-1", "count=5,bytes=-1=;byteHardLimit=-1;countHardLimit=-1"},
		{"count=2,bytes=10", "count=2,bytes=10"},
		{"bytes=3", "count=-1,bytes=3"},
		{"", "count=-1,bytes=-1"},
		{"count=1,bytes=2;countHardLimit=7", "count=1,bytes=2=;countHardLimit=7"},
	}
	for _, tt := range tests {
		st, err := parseStatsTrack(tt.in)
		if err != nil {
			t.Errorf("parseStatsTrack(%q): %v", tt.in, err)
			continue
		}
		if got := st.String(); got != tt.out {
			t.Errorf("parseStatsTrack(%q).String() = %q, want %q", tt.in, got, tt.out)
		}
	}
	for _, bad := range []string{"count", "count=x", "count=1,bytes", "count=,bytes=4"} {
		if _, err := parseStatsTrack(bad); err == nil {
			t.Errorf("parseStatsTrack(%q) succeeded", bad)
		}
	}
}

// FuzzParse checks that tokenising and option parsing never panic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`create -s -e /a "b c" world:anyone:r`, `ls -Rsw /`, `set -v -1 /a x`, `setquota -n 1 -b 2 /a`, `"`, ` '`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words := Tokenize(line)
		if len(words) == 0 {
			return
		}
		for _, spec := range []flagSpec{{opts: "?swR"}, {opts: "sv:"}, {opts: "n:b:N:B:", group: quotaGroup, groupRequired: true}} {
			_, _ = parseFlags(spec, words)
		}
		_, _ = ParseACL(line)
		_, _ = parseStatsTrack(line)
		_ = validatePath(line, false)
		_, _ = decodeJavaInt(line)
	})
}
