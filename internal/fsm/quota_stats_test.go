package fsm

import (
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// The expected outputs below are what ZooKeeper 3.8.0's StatsTrack gives
// (run on JDK 17), and in the fsm-level test what a ZooKeeper 3.8.0 server
// wrote; 3.9.5's StatsTrack and quota code are the same.

// TestParseFormatStats: a stats text read and written back, as
// new StatsTrack(data).toString() gives it; ok false where that constructor
// throws.
func TestParseFormatStats(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" when the text does not parse
	}{
		// StatsTrackTest's texts: the 3.4 format and the current one.
		{"count=2,bytes=5", "count=2,bytes=5"},
		{"count=4,bytes=9=;byteHardLimit=15;countHardLimit=4", "count=4,bytes=9=;byteHardLimit=15;countHardLimit=4"},
		{"count=3,bytes=9=;countHardLimit=10", "count=3,bytes=9=;countHardLimit=10"},
		// Missing keys read as -1; extra keys are kept, sorted.
		{"", "count=-1,bytes=-1"},
		{"bytes=3", "count=-1,bytes=3"},
		{"zeta=1;alpha=2,count=1", "count=1,bytes=-1=;alpha=2;zeta=1"},
		{"count=1,bytes=2;countHardLimit=7", "count=1,bytes=2=;countHardLimit=7"},
		// Separators: runs of ',' and ';'; trailing ones are dropped.
		{"count=1;;,bytes=2,,", "count=1,bytes=2"},
		{",", "count=-1,bytes=-1"},
		{";;,", "count=-1,bytes=-1"},
		// '=': parts after the value are ignored, an empty value is -1,
		// an empty key is a key.
		{"bytes=5=7", "count=-1,bytes=5"},
		{"count==5,bytes=1", "count=-1,bytes=1"},
		{"=5", "count=-1,bytes=-1=;=5"},
		// Keys are case-sensitive; the last of two wins.
		{"COUNT=1", "count=-1,bytes=-1=;COUNT=1"},
		{"count=1,count=2", "count=2,bytes=-1"},
		// Long.parseLong: a sign, any decimal digits, the int64 range.
		{"count=+3,bytes=-0", "count=3,bytes=0"},
		{"count=٣,bytes=１２", "count=3,bytes=12"},
		{"count=9223372036854775807,bytes=-9223372036854775808", "count=9223372036854775807,bytes=-9223372036854775808"},
		// Keys sort as Java sorts strings: U+1F600 (a surrogate pair)
		// before U+FF5E; invalid UTF-8 becomes U+FFFD.
		{"\uff5e=2,😀=1,z=3", "count=-1,bytes=-1=;z=3;😀=1;\uff5e=2"},
		{"\xed\xa0\x80=1,\xff\xfe=2", "count=-1,bytes=-1=;\ufffd=1;\ufffd\ufffd=2"},
		// What the constructor throws on.
		{"count", ""},
		{"count=", ""},
		{"=", ""},
		{",count=1", ""},
		{"count=1,bytes", ""},
		{"count=x", ""},
		{"count= 3", ""},
		{"count=3 ", ""},
		{"count=0x10", ""},
		{"count=+", ""},
		{"count=9223372036854775808", ""},
		{"count=𝟎", ""}, // a digit outside the BMP
		{"garbage", ""},
	}
	for _, tt := range tests {
		st, ok := parseStats([]byte(tt.in))
		switch {
		case tt.want == "" && ok:
			t.Errorf("parseStats(%q) = %v; ZooKeeper throws", tt.in, st)
		case tt.want != "" && !ok:
			t.Errorf("parseStats(%q) failed; want %q", tt.in, tt.want)
		case ok:
			if got := string(st.format()); got != tt.want {
				t.Errorf("parseStats(%q).format() = %q, want %q", tt.in, got, tt.want)
			}
		}
	}
	if st, ok := parseStats(nil); ok {
		t.Errorf("parseStats(nil) = %v; ZooKeeper throws (NullPointerException)", st)
	}
}

// TestStatsFormat: StatsTrackTest.testBackwardCompatibility's track.
func TestStatsFormat(t *testing.T) {
	st := statsTrack{}
	st.set(statsCount, 4)
	st.set("countHardLimit", 4)
	st.set(statsBytes, 9)
	st.set("byteHardLimit", 15)
	if got, want := string(st.format()), "count=4,bytes=9=;byteHardLimit=15;countHardLimit=4"; got != want {
		t.Errorf("format = %q, want %q", got, want)
	}
	if got, want := string(statsTrack{}.format()), "count=-1,bytes=-1"; got != want {
		t.Errorf("empty format = %q, want %q", got, want)
	}
}

// TestQuotaStatsWrittenByClient: a client writes the stats node (as zkCli
// and other tools may), then changes under the quota update it. Every
// expected value is what a ZooKeeper 3.8.0 server answered to the same
// requests.
func TestQuotaStatsWrittenByClient(t *testing.T) {
	h := newHarness(t, Options{})
	h.openSession(sess1)
	const q = "/zookeeper/quota"
	stats := func(target string) string {
		t.Helper()
		return string(h.node(q + target + "/zookeeper_stats").Data)
	}
	h.must(sess1, nil, create("/q", "", 0))
	h.must(sess1, nil, create("/q/a", "abc", 0))
	h.must(sess1, nil, create(q+"/q", "", 0))
	h.must(sess1, nil, create(q+"/q/zookeeper_limits", "count=10,bytes=100", 0))
	h.must(sess1, nil, create(q+"/q/zookeeper_stats", "anything", 0))
	if got := stats("/q"); got != "count=2,bytes=3" {
		t.Fatalf("stats when created: %q", got)
	}

	// The 3.9 text with an extra key and the stray '='.
	h.must(sess1, nil, setData(q+"/q/zookeeper_stats", "count=3,bytes=9=;countHardLimit=10", -1))
	h.must(sess1, nil, create("/q/b", "hi", 0))
	if got, want := stats("/q"), "count=4,bytes=11=;countHardLimit=10"; got != want {
		t.Fatalf("after a create: %q, want %q", got, want)
	}

	// A count in Arabic-Indic digits, no bytes (-1), keys sorted by UTF-16.
	h.must(sess1, nil, setData(q+"/q/zookeeper_stats", "\xed\xa0\x80=1,😀=2,\uff5e=3,count=٣", -1))
	h.must(sess1, nil, setData("/q/b", "hello", -1))
	if got, want := stats("/q"), "count=3,bytes=2=;😀=2;\uff5e=3;\ufffd=1"; got != want {
		t.Fatalf("after a setData: %q, want %q", got, want)
	}

	// Empty stats: both from -1.
	h.must(sess1, nil, setData(q+"/q/zookeeper_stats", "", -1))
	h.must(sess1, nil, del("/q/b", -1))
	if got, want := stats("/q"), "count=-2,bytes=-6"; got != want {
		t.Fatalf("after a delete: %q, want %q", got, want)
	}

	// Stats for a path that does not exist, or is no path.
	h.must(sess1, nil, create(q+"/none", "", 0))
	h.must(sess1, nil, create(q+"/none/zookeeper_stats", "junk", 0))
	if got := stats("/none"); got != "count=0,bytes=0" {
		t.Fatalf("stats of a missing path: %q", got)
	}
	h.must(sess1, nil, create("/zookeeper/quotaX", "", 0))
	h.must(sess1, nil, create("/zookeeper/quotaX/zookeeper_stats", "junk", 0))
	if got := string(h.node("/zookeeper/quotaX/zookeeper_stats").Data); got != "count=0,bytes=0" {
		t.Fatalf("stats under /zookeeper/quotaX: %q", got)
	}
}

// TestQuotaStatsOfRoot: /zookeeper/quota/zookeeper_stats counts the whole
// tree, itself included with the data it was created with.
func TestQuotaStatsOfRoot(t *testing.T) {
	h := newHarness(t, Options{})
	h.openSession(sess1)
	h.must(sess1, nil, create("/zookeeper/quota/zookeeper_stats", "abcd", 0))
	// /, /zookeeper, /zookeeper/quota, /zookeeper/config and itself.
	if got := string(h.node("/zookeeper/quota/zookeeper_stats").Data); got != "count=5,bytes=4" {
		t.Fatalf("stats of the root: %q, want count=5,bytes=4", got)
	}
}

// TestQuotaStatsUnreadable: where ZooKeeper's StatsTrack throws (and the
// server with it, at every restart too, as the transaction is replayed),
// Paddock applies the write and leaves the stats node as it is.
func TestQuotaStatsUnreadable(t *testing.T) {
	for _, data := range [][]byte{[]byte("garbage"), []byte("count=1,bytes"), nil} {
		h := newHarness(t, Options{})
		h.openSession(sess1)
		const stats = "/zookeeper/quota/q/zookeeper_stats"
		h.must(sess1, nil, create("/q", "", 0))
		h.must(sess1, nil, create("/zookeeper/quota/q", "", 0))
		h.must(sess1, nil, create("/zookeeper/quota/q/zookeeper_limits", "count=10", 0))
		h.must(sess1, nil, create(stats, "", 0))
		h.must(sess1, nil, Op{Op: proto.OpSetData, Path: stats, Data: data, Version: -1})
		h.must(sess1, nil, create("/q/c", "x", 0))
		n := h.node(stats)
		if string(n.Data) != string(data) || (n.Data == nil) != (data == nil) {
			t.Errorf("stats %q after a create: %q, want it unchanged", data, n.Data)
		}
	}
}

// FuzzParseStats feeds parseStats arbitrary stats-node text: it must not
// panic, and what it reads must format to text that reads back to the
// same (the stats the server writes stay readable as ZooKeeper's).
func FuzzParseStats(f *testing.F) {
	for _, s := range []string{"", "count=1,bytes=2", "count=3,bytes=9=;countHardLimit=10", ",count=1", "count==5;;x=-0",
		"count=١٢,bytes=+7", "bytes=5=;a=1;b=2", "count", "=", "\xff\xfe=1", "count=9223372036854775808"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, ok := parseStats(data)
		if !ok {
			return
		}
		once := st.format()
		again, ok := parseStats(once)
		if !ok {
			t.Fatalf("%q reads, but its formatting %q does not", data, once)
		}
		if twice := again.format(); string(twice) != string(once) {
			t.Fatalf("%q formats to %q, which reads and formats to %q", data, once, twice)
		}
	})
}
