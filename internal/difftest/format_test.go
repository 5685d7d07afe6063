package difftest

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

func TestTranscriptNormalization(t *testing.T) {
	start := time.Now()
	ms := start.UnixMilli()
	tr := NewTranscript("/t1", start)
	// zxids 500 < 700 < 900 become z1 z2 z3 whatever their values; the
	// same txn's time renders with its zxid's rank.
	tr.Add("a " + tr.Zxid(900) + " " + tr.Zxid(500) + " " + tr.Time(ms+2, 900))
	tr.Add("b " + tr.Zxid(700) + " " + tr.Time(ms, 500) + " " + tr.Time(ms, 700))
	tr.Add("c " + tr.Zxid(0) + " " + tr.Zxid(-1) + " " + tr.Time(0, 0))
	tr.Add("d " + tr.Session(77) + " " + tr.Session(55) + " " + tr.Session(77) + " " + tr.Session(0) + " " + tr.knownSession(99))
	got := strings.Join(tr.Lines(time.Now()), "\n")
	want := "a z3 z1 t3\nb z2 t1 t2\nc z0 -1 t0\nd s1 s2 s1 0 0x63"
	if got != want {
		t.Errorf("Lines() =\n%s\nwant\n%s", got, want)
	}
}

func TestTranscriptBadTimes(t *testing.T) {
	start := time.Now()
	ms := start.UnixMilli()
	tests := []struct {
		name string
		add  func(tr *Transcript) string
		want string
	}{
		{"one txn two times", func(tr *Transcript) string {
			return tr.Time(ms, 10) + " " + tr.Time(ms+1, 10)
		}, "t!mixed t!mixed"},
		{"later txn earlier time", func(tr *Transcript) string {
			return tr.Time(ms+5, 10) + " " + tr.Time(ms, 20)
		}, "t1 t!order"},
		{"before the scenario", func(tr *Transcript) string {
			return tr.Time(ms-time.Hour.Milliseconds(), 10)
		}, "t!range"},
		{"zero time with a zxid", func(tr *Transcript) string {
			return tr.Time(0, 10)
		}, "t!range"},
		{"time without a zxid", func(tr *Transcript) string {
			return tr.Time(ms, 0)
		}, "t!zxid0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewTranscript("/t1", start)
			tr.Add(tc.add(tr))
			if got := tr.Lines(time.Now())[0]; got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTranscriptStatAndPaths(t *testing.T) {
	start := time.Now()
	ms := start.UnixMilli()
	tr := NewTranscript("/t1", start)
	s := proto.Stat{Czxid: 5, Mzxid: 8, Ctime: ms, Mtime: ms + 1, Version: 2, Cversion: 3, Aversion: 1,
		EphemeralOwner: 42, DataLength: 4, NumChildren: 1, Pzxid: 6}
	tr.Session(42)
	tr.Add(tr.Stat(&s) + " " + tr.Path("/t1/a") + " " + tr.Path("/zookeeper") + " " + tr.Path("/t1/a b") + " " + tr.Path("/t1/\xff"))
	want := `{cz=z1 mz=z3 pz=z2 ct=t1 mt=t3 v=2 cv=3 av=1 eph=s1 dl=4 nc=1} /a =/zookeeper "/a b" "/\xff"`
	if got := tr.Lines(time.Now())[0]; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestFormatData(t *testing.T) {
	tests := []struct {
		in   []byte
		want string
	}{
		{nil, "null"},
		{[]byte{}, `""`},
		{[]byte("hello"), `"hello"`},
		{[]byte("é"), `"é"`},
		{[]byte{0, 1}, "<2 bytes sha256:"},
		{[]byte(strings.Repeat("x", 65)), "<65 bytes sha256:"},
	}
	for _, tc := range tests {
		if got := FormatData(tc.in); !strings.HasPrefix(got, tc.want) {
			t.Errorf("FormatData(%q) = %s, want prefix %s", tc.in, got, tc.want)
		}
	}
}

func TestUnifiedDiff(t *testing.T) {
	if d := UnifiedDiff("a", "b", "x\ny", "x\ny"); d != "" {
		t.Errorf("diff of equal texts = %q, want empty", d)
	}
	var al, bl []string
	for i := 1; i <= 20; i++ {
		al = append(al, strconv.Itoa(i))
		bl = append(bl, strconv.Itoa(i))
	}
	bl[4] = "five"
	bl = append(bl, "21")
	a, b := strings.Join(al, "\n"), strings.Join(bl, "\n")
	want := `--- zk
+++ pd
@@ -2,7 +2,7 @@
 2
 3
 4
-5
+five
 6
 7
 8
@@ -18,3 +18,4 @@
 18
 19
 20
+21
`
	if d := UnifiedDiff("zk", "pd", a, b); d != want {
		t.Errorf("UnifiedDiff =\n%s\nwant\n%s", d, want)
	}
	// Changes closer than twice the context share one hunk.
	if d := UnifiedDiff("zk", "pd", "1\n2\n3\n4\n5\n6", "1\nx\n3\n4\n5\ny"); !strings.Contains(d, "@@ -1,6 +1,6 @@") {
		t.Errorf("nearby changes: UnifiedDiff =\n%s\nwant one hunk", d)
	}
}

func TestParseGolden(t *testing.T) {
	text := "== a\nline 1\n  #0 indented\n\n== b\n\n== c\nx\n\n\n"
	got, err := ParseGolden(text)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "line 1\n  #0 indented", "b": "", "c": "x"}
	if len(got) != len(want) {
		t.Fatalf("ParseGolden = %q, want %q", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("scenario %s = %q, want %q", k, got[k], v)
		}
	}
	for _, bad := range []string{"stray\n== a\n", "== a\n== a\n"} {
		if _, err := ParseGolden(bad); err == nil {
			t.Errorf("ParseGolden(%q) succeeded, want an error", bad)
		}
	}
}
