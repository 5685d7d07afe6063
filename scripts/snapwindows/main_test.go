package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestSplit reads snapshot windows and slow fsyncs from two members' logs,
// splits samples by how many members were snapshotting when they started
// and attributes the slowest calls to slow fsyncs and snapshots.
func TestSplit(t *testing.T) {
	dir := t.TempDir()
	logs := map[string]string{
		// Snapshots: [10:00:01.000, 10:00:02.000] and [10:00:05.500, 10:00:06.000] UTC.
		"m1.log": `time=2026-01-01T10:00:00.000Z level=INFO msg=serving mode=leader
time=2026-01-01T10:00:02.000Z level=INFO msg="snapshot saved" component=raftnode index=5 took=1s bytes=10
time=2026-01-01T10:00:06.000Z level=INFO msg="snapshot saved" component=raftnode index=9 took=500ms bytes=10
`,
		// Snapshot: [10:00:01.400, 10:00:03.500]; slow fsync: [10:00:08.000, 10:00:08.250].
		"m2.log": `time=2026-01-01T10:00:03.500Z level=INFO msg="snapshot saved" component=raftnode index=6 took=2.1s bytes=10
time=2026-01-01T10:00:08.250Z level=WARN msg="fsync-ing the write ahead log took longer than fsync.warningthresholdms, which will adversely affect operation latency" took_ms=250 threshold_ms=20
`,
	}
	var members [][]window
	var snaps, syncs []window
	for _, name := range []string{"m1.log", "m2.log"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(logs[name]), 0o644); err != nil {
			t.Fatal(err)
		}
		s, f, err := windows(p)
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, s)
		snaps, syncs = append(snaps, s...), append(syncs, f...)
	}
	if len(members[0]) != 2 || len(members[1]) != 1 {
		t.Fatalf("snapshot windows = %v; want 2 and 1", members)
	}
	if want := []window{{1767261608000000, 1767261608250000}}; !reflect.DeepEqual(syncs, want) {
		t.Fatalf("slow fsyncs = %v; want %v", syncs, want)
	}
	path := filepath.Join(dir, "s.csv")
	if err := os.WriteFile(path, []byte(
		"1767261600500000,100\n"+ // 0.5 s: no member
			"1767261601200000,5000\n"+ // 1.2 s: m1 only
			"1767261601500000,9000\n"+ // 1.5 s: m1 and m2
			"1767261603000000,300\n"+ // 3 s: m2 only
			"1767261604000000,200\n"+ // 4 s: no member
			"1767261605750000,7000\n"+ // 5.75 s: m1 only
			"1767261607900000,200000\n"+ // 7.9 s for 200 ms: in flight during the slow fsync
			"1767261609000000,6000\n"), 0o644); err != nil { // 9 s: none, in flight during nothing
		t.Fatal(err)
	}
	samples, err := readSamples(path)
	if err != nil {
		t.Fatal(err)
	}
	byCount := split(samples, members)
	want := [][]int64{{100, 200, 200000, 6000}, {5000, 300, 7000}, {9000}}
	if !reflect.DeepEqual(byCount, want) {
		t.Fatalf("split = %v; want %v", byCount, want)
	}
	if s := summarize(byCount[1]); s.N != 3 || s.Max != 7 {
		t.Errorf("summary %+v, want 3 calls, max 7 ms", s)
	}
	// The slowest half: 200000 (slow fsync), 9000 (snapshot), 7000
	// (snapshot), 6000 (neither).
	got := tail(samples, 0.5, syncs, snaps)
	if wantTail := (tailStats{ThresholdMS: 6, N: 4, DuringSlowSync: 1, DuringSnapshot: 2, Neither: 1}); got != wantTail {
		t.Errorf("tail = %+v; want %+v", got, wantTail)
	}
	if _, err := readSamples(filepath.Join(dir, "m1.log")); err == nil {
		t.Error("reading a file that is not samples: no error")
	}
}
