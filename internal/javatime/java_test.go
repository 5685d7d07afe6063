package javatime

import (
	"archive/zip"
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// javaDatesFile is the golden file of what Java prints, written with
// zonenames.go by internal/gen (go generate ./internal/javatime).
var javaDatesFile = filepath.Join("testdata", "java-dates.txt")

// notInGo lists, by prefix, the zones Java knows that Go's tz database
// ($GOROOT/lib/time/zoneinfo.zip) lacks, and why. A listed zone that loads
// is checked all the same.
var notInGo = map[string]string{
	"SystemV/": "tzdata removed the SystemV zones in 2020b; Java 17 still lists them",
}

// maxVersionSkips is the share of the golden file's instants (in zones Go
// has) at which Java's tz database and Go's may disagree (sameOffsets)
// before TestDateMatchesJava fails: more means the two have drifted too far
// apart and the golden file wants regenerating with a newer JDK (or the Go
// toolchain is much older than the JDK).
const maxVersionSkips = 0.05

// notInGoReason returns why zone is in notInGo, or "".
func notInGoReason(zone string) string {
	for prefix, reason := range notInGo {
		if strings.HasPrefix(zone, prefix) {
			return reason
		}
	}
	return ""
}

// TestDateMatchesJava compares Date with what java.util.Date.toString
// printed for every zone Java knows (ZoneId.getAvailableZoneIds()) at
// instants in 1970, 2000, 2026 and 2030 and around the zone's 2026
// transitions, read from the golden file testdata/java-dates.txt: Java's
// names for the zone, standard and daylight, at the times Java calls
// standard and daylight. So that the result does not depend on the
// machine's tzdata or JDK, zones are loaded from the Go toolchain's own tz
// database (goZone), and Java's offsets come from the golden file. Where the
// two tz databases disagree on a zone's offset around an instant
// (sameOffsets: a tz rule change between their versions, such as a zone
// that changed its time in 2026), the instant is skipped and counted, not
// compared; too many such instants fail the test (maxVersionSkips).
func TestDateMatchesJava(t *testing.T) {
	golden := readJavaGolden(t)
	const maxErrors = 40
	var total, checked, failed int
	zones := map[string]bool{}
	skipped := map[string]string{}   // zone: why
	versionSkips := map[string]int{} // zone: instants where the tz databases differ
	for _, d := range golden.dates {
		zones[d.zone] = true
		loc, err := goZone(d.zone)
		if err != nil {
			reason := notInGoReason(d.zone)
			if reason == "" {
				t.Errorf("%v (a zone Go's tz database lacks goes in notInGo, with the reason)", err)
				reason = err.Error()
			}
			skipped[d.zone] = reason
			continue
		}
		total++
		if !sameOffsets(loc, d) {
			versionSkips[d.zone]++
			continue
		}
		at := time.UnixMilli(d.ms).In(loc)
		checked++
		if got := Date(at); got != d.want {
			if failed++; failed <= maxErrors {
				t.Errorf("%s at %d (%s): Date = %q, Java %q", d.zone, d.ms, time.UnixMilli(d.ms).UTC().Format(time.RFC3339), got, d.want)
			}
		}
	}
	if failed > maxErrors {
		t.Errorf("... and %d more differences", failed-maxErrors)
	}
	if checked == 0 {
		t.Fatal("the golden file has no dates Go could check")
	}
	nSkips := total - checked
	t.Logf("golden file from Java %s, tz database %s; Go's tz database: %s", golden.java, golden.tzdb, goZoneinfoPath())
	t.Logf("checked %d dates in %d zones; %d zones Go cannot load: %v", checked, len(zones)-len(skipped), len(skipped), slices.Sorted(maps.Keys(skipped)))
	t.Logf("skipped %d of %d dates (%.1f%%) where the tz databases disagree on the offsets, in %d zones: %v",
		nSkips, total, 100*float64(nSkips)/float64(total), len(versionSkips), slices.Sorted(maps.Keys(versionSkips)))
	if float64(nSkips) > maxVersionSkips*float64(total) {
		t.Errorf("Java's and Go's tz databases disagree on the offsets at %d of %d dates, more than %.0f%%: regenerate the golden file with a newer JDK (go generate ./internal/javatime)",
			nSkips, total, 100*maxVersionSkips)
	}
}

// TestZoneNamesMatchGolden checks that zonenames.go and the golden file
// come from the same Java (internal/gen writes both): the same version,
// the same zones, the same names.
func TestZoneNamesMatchGolden(t *testing.T) {
	golden := readJavaGolden(t)
	if want := fmt.Sprintf("Java %s, tz database %s", golden.java, golden.tzdb); javaZoneNamesVersion != want {
		t.Errorf("zonenames.go is from %s, %s from %s; regenerate both (go generate ./internal/javatime)", javaZoneNamesVersion, javaDatesFile, want)
	}
	for zone, want := range golden.names {
		if got := javaZoneNames[zone]; got != want {
			t.Errorf("javaZoneNames[%q] = %q, the golden file's names are %q; regenerate both (go generate ./internal/javatime)", zone, got, want)
		}
	}
	for zone := range javaZoneNames {
		if _, ok := golden.names[zone]; !ok {
			t.Errorf("javaZoneNames has %q, a zone the golden file lacks; regenerate both (go generate ./internal/javatime)", zone)
		}
	}
}

// javaGolden is testdata/java-dates.txt.
type javaGolden struct {
	java, tzdb string               // the versions that printed it
	names      map[string][2]string // zone: standard and daylight names
	dates      []javaDate
}

// javaDate is what Java printed for a zone at an instant.
type javaDate struct {
	zone   string
	ms     int64 // the instant, in Unix milliseconds
	offset int   // Java's UTC offset at the instant, in seconds
	// Java's offset transitions just before (or at) and after the instant,
	// in Unix seconds, or noTransition.
	start, end int64
	want       string // java.util.Date.toString
}

// noTransition is a javaDate's start or end where Java's zone has no
// transition ("-" in the golden file).
const noTransition = math.MinInt64

// sameOffsets reports whether Go's tz database, in loc, agrees with Java's
// on d's zone around d's instant: the same UTC offset at the instant, and
// the period of that offset starting and ending at the same transitions
// (offsetPeriod). Where the two differ, one tz database has a rule change
// the other lacks. The period counts as well as the offset: Date names a
// period by comparing it with its neighbours (javaDaylight), and a zone
// that moves to permanent summer time, such as British Columbia in tzdata
// 2026b, keeps its offset but stops having transitions. Transitions before
// 1970 are not compared: tzdata merges zones that agree since 1970
// (Europe/Oslo is a link to Europe/Berlin), and Java's tz data keeps their
// earlier history (tzdata's backzone file), Go's does not.
func sameOffsets(loc *time.Location, d javaDate) bool {
	at := time.UnixMilli(d.ms).In(loc)
	if _, offset := at.Zone(); offset != d.offset {
		return false
	}
	start, end := offsetPeriod(at)
	since1970 := func(sec int64) int64 { return max(sec, -1) } // noTransition too
	return since1970(start) == since1970(d.start) && end == d.end
}

// offsetPeriod returns the transitions, in Unix seconds, that bound the
// period of t's UTC offset in t's location, or noTransition where there is
// none: unlike Time.ZoneBounds, it looks past changes of abbreviation or
// daylight flag alone, and past Go's splitting of periods at the turn of
// the year (javaNeighbours), as Java's offset transitions do.
func offsetPeriod(t time.Time) (start, end int64) {
	offset := func(t time.Time) int {
		_, off := t.Zone()
		return off
	}
	const maxSteps = 100 // a period of more than that many years counts as endless
	start, end = noTransition, noTransition
	for n, i := t, 0; i < maxSteps; i++ {
		s, _ := n.ZoneBounds()
		if s.IsZero() {
			break
		}
		if n = s.Add(-time.Second); offset(n) != offset(t) {
			start = s.Unix()
			break
		}
	}
	for n, i := t, 0; i < maxSteps; i++ {
		_, e := n.ZoneBounds()
		if e.IsZero() {
			break
		}
		if n = e; offset(n) != offset(t) {
			end = e.Unix()
			break
		}
	}
	return start, end
}

// readJavaGolden reads and checks testdata/java-dates.txt.
func readJavaGolden(t *testing.T) *javaGolden {
	t.Helper()
	f, err := os.Open(javaDatesFile)
	if err != nil {
		t.Fatalf("%v (go generate ./internal/javatime writes it)", err)
	}
	defer f.Close()
	g := &javaGolden{names: map[string][2]string{}}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "# Java: "); ok {
			g.java = v
		} else if v, ok := strings.CutPrefix(line, "# tz database: "); ok {
			g.tzdb = v
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		switch {
		case fields[0] == "name" && len(fields) == 4:
			g.names[fields[1]] = [2]string{fields[2], fields[3]}
			continue
		case fields[0] == "date" && len(fields) == 7:
			ms, err1 := strconv.ParseInt(fields[2], 10, 64)
			offset, err2 := strconv.Atoi(fields[3])
			start, err3 := parseTransition(fields[4])
			end, err4 := parseTransition(fields[5])
			if _, known := g.names[fields[1]]; known && errors.Join(err1, err2, err3, err4) == nil {
				g.dates = append(g.dates, javaDate{fields[1], ms, offset, start, end, fields[6]})
				continue
			}
		}
		t.Fatalf("%s:%d: malformed %q", javaDatesFile, n, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", javaDatesFile, err)
	}
	if g.java == "" || g.tzdb == "" || len(g.names) == 0 || len(g.dates) == 0 {
		t.Fatalf("%s: no Java version, tz database version, names or dates", javaDatesFile)
	}
	return g
}

// parseTransition parses a golden file's start or end: Unix seconds, or "-"
// for none (noTransition).
func parseTransition(s string) (int64, error) {
	if s == "-" {
		return noTransition, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

// goZoneinfoPath returns the Go toolchain's own tz database, which is the
// same on every machine for the toolchain the module pins.
func goZoneinfoPath() string {
	return filepath.Join(runtime.GOROOT(), "lib", "time", "zoneinfo.zip")
}

var goZoneinfo = sync.OnceValues(func() (map[string]*zip.File, error) {
	z, err := zip.OpenReader(goZoneinfoPath())
	if err != nil {
		return nil, err
	}
	files := map[string]*zip.File{}
	for _, f := range z.File {
		files[f.Name] = f
	}
	return files, nil // z stays open for the test binary's life
})

// goZone loads a zone from the Go toolchain's tz database (goZoneinfoPath),
// not from the system's, so that tests that depend on a zone's rules do not
// depend on the machine's tzdata package.
func goZone(name string) (*time.Location, error) {
	files, err := goZoneinfo()
	if err != nil {
		return nil, fmt.Errorf("Go's tz database: %v", err)
	}
	f, ok := files[name]
	if !ok {
		return nil, fmt.Errorf("zone %q is not in %s", name, goZoneinfoPath())
	}
	r, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("zone %q in %s: %v", name, goZoneinfoPath(), err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("zone %q in %s: %v", name, goZoneinfoPath(), err)
	}
	return time.LoadLocationFromTZData(name, data)
}
