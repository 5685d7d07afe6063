package javatime

import (
	"encoding/binary"
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
// Zones come from the Go toolchain's tz database (goZone), not the
// system's, so that the dates do not depend on the machine's tzdata.
// TestDateMatchesJava checks every zone Java knows, against what Java
// printed (testdata/java-dates.txt).
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
		// Java names a zone it has no name for by its current offset.
		{"Asia/Tomsk", 963662400000, "Sat Jul 15 20:00:00 GMT+07:00 2000"},
		// Java's names at every date: tzdata says BST and MSK in 1970.
		{"Europe/London", 1252800000, "Thu Jan 15 13:00:00 GMT 1970"},
		{"Europe/Tallinn", 1252800000, "Thu Jan 15 15:00:00 EET 1970"},
		// Negative daylight time in tzdata, positive in Java.
		{"Europe/Dublin", 1768478400000, "Thu Jan 15 12:00:00 GMT 2026"},
		{"Europe/Dublin", 1784116800000, "Wed Jul 15 13:00:00 IST 2026"},
		{"Europe/Dublin", 1252800000, "Thu Jan 15 13:00:00 IST 1970"},
		{"Africa/Windhoek", 947937600000, "Sat Jan 15 14:00:00 WAT 2000"},
		{"Africa/Windhoek", 963662400000, "Sat Jul 15 13:00:00 CAT 2000"},
		{"Africa/Casablanca", 1768478400000, "Thu Jan 15 13:00:00 WEST 2026"},
		{"Africa/Casablanca", 1771120800000, "Sun Feb 15 02:00:00 WET 2026"},
	}
	for _, tt := range tests {
		loc, err := goZone(tt.zone)
		if err != nil {
			t.Fatal(err)
		}
		if got := Date(time.UnixMilli(tt.ms).In(loc)); got != tt.want {
			t.Errorf("Date(%d) in %s = %q, want %q", tt.ms, tt.zone, got, tt.want)
		}
	}
}

// TestJavaDaylightMoroccoPermanentGMT checks Africa/Casablanca as tzdata
// 2026c and later have it: +01:00 as standard time with negative daylight
// time (+00:00) in Ramadan, until Morocco moves to +00:00 for good on
// 2026-09-20. Java's tz data (the rearguard format) has +00:00 as standard
// time throughout and +01:00 as daylight time, so the last +01:00 period,
// between Ramadan and a standard period behind it, is WEST for Java. The
// dates are what Java 17.0.21.1 (tz data 2026f) prints.
func TestJavaDaylightMoroccoPermanentGMT(t *testing.T) {
	data := tzif([]tzifType{{"+01", 3600, false}, {"+00", 0, true}, {"+00", 0, false}}, []tzifTransition{
		{1740276000, 1}, // 2025-02-23, Ramadan
		{1743904800, 0},
		{1771120800, 1}, // 2026-02-15, Ramadan
		{1774144800, 0},
		{1789866000, 2}, // 2026-09-20, +00:00 for good
	})
	loc, err := time.LoadLocationFromTZData("Africa/Casablanca", data)
	if err != nil {
		t.Fatal(err)
	}
	for ms, want := range map[int64]string{
		1768478400000: "Thu Jan 15 13:00:00 WEST 2026",
		1771120800000: "Sun Feb 15 02:00:00 WET 2026",
		1774144800000: "Sun Mar 22 03:00:00 WEST 2026",
		1784116800000: "Wed Jul 15 13:00:00 WEST 2026",
		1789865999000: "Sun Sep 20 01:59:59 WEST 2026",
		1789866000000: "Sun Sep 20 01:00:00 WET 2026",
		1910347200000: "Mon Jul 15 12:00:00 WET 2030",
	} {
		if got := Date(time.UnixMilli(ms).In(loc)); got != want {
			t.Errorf("Date(%d) = %q, want %q", ms, got, want)
		}
	}
}

// tzifType is a local time type of a TZif file.
type tzifType struct {
	abbrev string
	offset int32 // seconds east of UTC
	dst    bool
}

// tzifTransition is a TZif file's transition, at Unix second at, to the
// local time type of index typ.
type tzifTransition struct {
	at  int32
	typ uint8
}

// tzif returns a version 1 TZif file (RFC 8536) with the given types and
// transitions; before the first transition, Go uses the first type.
func tzif(types []tzifType, transitions []tzifTransition) []byte {
	var abbrevs []byte
	b := []byte("TZif")
	b = append(b, make([]byte, 16)...) // version 1, reserved
	for _, n := range []int{0, 0, 0, len(transitions), len(types), 0} {
		b = binary.BigEndian.AppendUint32(b, uint32(n)) // the last, charcnt, is set below
	}
	for _, tr := range transitions {
		b = binary.BigEndian.AppendUint32(b, uint32(tr.at))
	}
	for _, tr := range transitions {
		b = append(b, tr.typ)
	}
	for _, ty := range types {
		b = binary.BigEndian.AppendUint32(b, uint32(ty.offset))
		var isDST byte
		if ty.dst {
			isDST = 1
		}
		b = append(b, isDST, byte(len(abbrevs)))
		abbrevs = append(append(abbrevs, ty.abbrev...), 0)
	}
	binary.BigEndian.PutUint32(b[40:44], uint32(len(abbrevs))) // charcnt
	return append(b, abbrevs...)
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
