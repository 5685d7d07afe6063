package datatool

import (
	"bytes"
	"strings"
	"testing"
)

// TestWALDumpLimitStops checks that --limit N ends the dump right after
// the Nth entry: the hard states, snapshot markers and segment headers
// that follow it in the WAL are not printed, in text or JSON.
func TestWALDumpLimitStops(t *testing.T) {
	dir := copyDir(t, fixtureDir)
	wal := DataDirs(dir, "").WAL
	for _, json := range []bool{false, true} {
		for _, limit := range []int{1, 2, 4} {
			var out bytes.Buffer
			res, err := DumpWAL(&out, wal, WALDumpOptions{JSON: json, From: 9, Limit: limit})
			if err != nil || res.Entries != limit {
				t.Fatalf("json %v limit %d: %v, %d entries", json, limit, err, res.Entries)
			}
			// The last record's line (a multi's ops follow its entry
			// line, further indented).
			var last string
			for _, line := range strings.Split(out.String(), "\n") {
				if strings.HasPrefix(line, "  @") || strings.HasPrefix(line, "{") || strings.HasPrefix(line, "segment ") {
					last = line
				}
			}
			isEntry := strings.Contains(last, " entry index=")
			if json {
				isEntry = strings.HasPrefix(last, `{"type":"entry"`)
			}
			if !isEntry {
				t.Errorf("json %v limit %d: the dump ends with %q, want the last entry:\n%s", json, limit, last, out.String())
			}
		}
	}
}
