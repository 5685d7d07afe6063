package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSplit reads two snapshot windows from a member's log and splits
// samples by whether they started inside one.
func TestSplit(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "m1.log")
	// Windows: [10:00:01.000, 10:00:02.000] and [10:00:05.500, 10:00:06.000] UTC.
	if err := os.WriteFile(log, []byte(`time=2026-01-01T10:00:00.000Z level=INFO msg=serving mode=leader
time=2026-01-01T10:00:02.000Z level=INFO msg="snapshot saved" component=raftnode index=5 took=1s bytes=10
time=2026-01-01T10:00:06.000Z level=INFO msg="snapshot saved" component=raftnode index=9 took=500ms bytes=10
`), 0o644); err != nil {
		t.Fatal(err)
	}
	wins, err := windows(log)
	if err != nil || len(wins) != 2 {
		t.Fatalf("windows = %v, %v; want 2", wins, err)
	}
	samples := filepath.Join(dir, "s.csv")
	if err := os.WriteFile(samples, []byte(
		"1767261600500000,100\n"+ // 0.5 s: outside
			"1767261601500000,9000\n"+ // 1.5 s: inside the first
			"1767261603000000,200\n"+ // 3 s: outside
			"1767261605750000,7000\n"), 0o644); err != nil { // 5.75 s: inside the second
		t.Fatal(err)
	}
	during, outside, err := split(samples, wins)
	if err != nil {
		t.Fatal(err)
	}
	if len(during) != 2 || len(outside) != 2 || during[0]+during[1] != 16000 || outside[0]+outside[1] != 300 {
		t.Fatalf("during %v, outside %v; want [9000 7000] and [100 200]", during, outside)
	}
	if s := summarize(during); s.N != 2 || s.Max != 9 {
		t.Errorf("summary %+v, want 2 calls, max 9 ms", s)
	}
	if _, _, err := split(log, wins); err == nil {
		t.Error("split of a file that is not samples: no error")
	}
}
