package javatime

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestJavaDateZoneNames checks the ctime/mtime format against what Java 17's
// java.util.Date.toString printed (zkCli 3.8's StatPrinter uses it) with the
// zone as its default time zone, for zones whose tzdata abbreviation is a
// name (printed as Go prints it), a number Java replaces with its own name
// (-03 is BRT), or a number in a zone Java has no name for (GMT-03:00).
func TestJavaDateZoneNames(t *testing.T) {
	tests := []struct {
		zone string
		ms   int64
		want string
	}{
		{"UTC", 1784116800000, "Wed Jul 15 12:00:00 UTC 2026"},
		{"Europe/Berlin", 1768478400000, "Thu Jan 15 13:00:00 CET 2026"},
		{"Europe/Berlin", 1784116800000, "Wed Jul 15 14:00:00 CEST 2026"},
		{"America/New_York", 1784116800000, "Wed Jul 15 08:00:00 EDT 2026"},
		{"Asia/Kolkata", 0, "Thu Jan 01 05:30:00 IST 1970"},
		{"America/Sao_Paulo", 1768478400000, "Thu Jan 15 09:00:00 BRT 2026"},
		{"America/Sao_Paulo", 1516017600000, "Mon Jan 15 10:00:00 BRST 2018"},
		{"America/Argentina/Buenos_Aires", 1784116800000, "Wed Jul 15 09:00:00 ART 2026"},
		{"America/Santiago", 1768478400000, "Thu Jan 15 09:00:00 CLST 2026"},
		{"America/Santiago", 1784116800000, "Wed Jul 15 08:00:00 CLT 2026"},
		{"Asia/Dubai", 1784116800000, "Wed Jul 15 16:00:00 GST 2026"},
		{"Asia/Kathmandu", 1784116800000, "Wed Jul 15 17:45:00 NPT 2026"},
		{"Asia/Singapore", 0, "Thu Jan 01 07:30:00 SGT 1970"},
		// Java's name holds at every date, where tzdata's was a name.
		{"Europe/Istanbul", 0, "Thu Jan 01 02:00:00 TRT 1970"},
		// Zones Java has no name for.
		{"Etc/GMT+3", 1784116800000, "Wed Jul 15 09:00:00 GMT-03:00 2026"},
		{"Etc/GMT-14", 1784116800000, "Thu Jul 16 02:00:00 GMT+14:00 2026"},
		{"Asia/Tomsk", 1784116800000, "Wed Jul 15 19:00:00 GMT+07:00 2026"},
		{"Antarctica/Troll", 1768478400000, "Thu Jan 15 12:00:00 GMT 2026"},
	}
	for _, tt := range tests {
		loc, err := time.LoadLocation(tt.zone)
		if err != nil {
			t.Fatalf("LoadLocation(%q): %v", tt.zone, err)
		}
		if got := Date(time.UnixMilli(tt.ms).In(loc)); got != tt.want {
			t.Errorf("Date(%d) in %s = %q, want %q", tt.ms, tt.zone, got, tt.want)
		}
	}
}

func TestNumericAbbrev(t *testing.T) {
	for s, want := range map[string]bool{"-03": true, "+0530": true, "+00": true, "-": false, "": false, "UTC": false, "GMT+3": false, "+3a": false} {
		if got := numericAbbrev(s); got != want {
			t.Errorf("numericAbbrev(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestLocalLocationName checks that the system's zone is found under its
// name: $TZ's, else the zone /etc/localtime links to, with the same offsets
// as time.Local.
func TestLocalLocationName(t *testing.T) {
	loc := LocalLocation()
	want := time.Local.String()
	if want == "Local" {
		target, err := os.Readlink("/etc/localtime")
		_, name, ok := strings.Cut(target, "zoneinfo/")
		if err != nil || !ok {
			t.Skipf("/etc/localtime is not a link into a zoneinfo directory (%q, %v)", target, err)
		}
		want = name
	}
	if loc.String() != want {
		t.Errorf("LocalLocation() = %q, want %q", loc, want)
	}
	for _, ms := range []int64{0, 1768478400000, 1784116800000} {
		_, got := time.UnixMilli(ms).In(loc).Zone()
		_, local := time.UnixMilli(ms).In(time.Local).Zone()
		if got != local {
			t.Errorf("at %d: offset %d, time.Local's %d", ms, got, local)
		}
	}
}
