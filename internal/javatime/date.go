// Package javatime formats times as ZooKeeper's Java code prints them:
// java.util.Date.toString, with Java's names of time zones (zkCli's stat,
// the dump four-letter word).
package javatime

import (
	"fmt"
	"os"
	"strings"
	"time"
)

//go:generate go run ./internal/gen

// Date formats t, in its location, as java.util.Date.toString does,
// "EEE MMM dd HH:mm:ss zzz yyyy", with the zone named as Java names it
// (javaZone), after the location's name: give it a location from
// time.LoadLocation or LocalLocation, not time.Local read from
// /etc/localtime (named "Local"). Offsets, and so which of a zone's names
// applies, follow the tz database the location was loaded from (the
// system's), while Java follows its own: where the two are of different
// versions and a zone's rules changed in between (British Columbia's
// permanent -07:00 from tzdata 2026b), Date prints what Java with the
// system's tz data would (MST in July 2030, where a Java with older tz data
// says PDT).
func Date(t time.Time) string {
	return t.Format("Mon Jan 02 15:04:05 ") + javaZone(t, t.Location().String()) + t.Format(" 2006")
}

// javaZone returns the time-zone name java.util.Date.toString prints for t,
// whose location is the zone named zone ("America/Sao_Paulo"). A zone Java
// knows (javaZoneNames, generated from Java) gets Java's name, standard or
// daylight as Java counts t (javaDaylight), which is the same at every date:
// TRT for Europe/Istanbul in 1970 too, where tzdata says EET, and
// "GMT+07:00" for Asia/Tomsk in July 2000, when it was at +08:00 (Java
// names a zone it has no name for by its current offset). A zone Java does
// not know prints its tzdata abbreviation where that is a name, and where
// it is a number ("-03") as Java prints a zone it has no name for:
// "GMT-03:00", or "GMT" at offset zero.
func javaZone(t time.Time, zone string) string {
	if names, ok := javaZoneNames[zone]; ok {
		if javaDaylight(t) {
			return names[1]
		}
		return names[0]
	}
	abbrev, offset := t.Zone()
	if !numericAbbrev(abbrev) {
		return abbrev
	}
	if offset == 0 {
		return "GMT"
	}
	sign := byte('+')
	if offset < 0 {
		sign, offset = '-', -offset
	}
	return fmt.Sprintf("GMT%c%02d:%02d", sign, offset/3600, offset/60%60)
}

// javaDaylight reports whether Java counts t as daylight time. That is
// tzdata's daylight flag, except for negative daylight time: tzdata marks
// Europe/Dublin's winter (Africa/Windhoek's from 1994 to 2017,
// Africa/Casablanca's Ramadan) as daylight time behind standard time, where
// Java's tz data, like tzdata's "rearguard" format, has the rest of the
// year as daylight time ahead of standard. javaDaylight looks at the
// periods just before and after t's (javaNeighbours):
//
//   - A daylight period next to no daylight period and to no standard
//     period behind it, but to one ahead of it (the other may be level), is
//     negative daylight time: Java's standard time (WET for Casablanca's
//     Ramadan, GMT for a Dublin winter).
//   - A standard period next to a daylight period behind it (negative
//     daylight time) and to no period ahead of it is Java's daylight time:
//     between two such periods (Dublin's summer, Casablanca outside
//     Ramadan), after a level one (Dublin's all-year +01:00 of 1968 to
//     1971), or before a standard period behind it, where the zone leaves
//     negative daylight time for a new standard time (tzdata 2026c and
//     later: Casablanca's +01:00 of 2026 until it moves to +00:00 for good
//     on September 20, WEST for Java; the +00:00 after it is WET).
//   - Other periods keep tzdata's flag: a period between one ahead and
//     one behind, such as Europe/Tallinn's Moscow time from 1944 to 1981,
//     between German summer time and Moscow summer time, is standard time
//     for Java too.
//
// Java's tz data marks these periods by its own rules, not by a guess from
// their neighbours, so a tz database whose rules put a zone's negative
// daylight time in a shape not seen so far can still name a period
// differently from Java; TestDateMatchesJava checks every zone Java knows
// against what Java prints, with the Go toolchain's tz database.
func javaDaylight(t time.Time) bool {
	dst := t.IsDST()
	_, offset := t.Zone()
	negative := false // a neighbour makes t's period negative daylight time or its other half
	for _, n := range javaNeighbours(t) {
		_, other := n.Zone()
		switch {
		case dst && (n.IsDST() || other < offset):
			return true // daylight next to daylight, or ahead of standard time
		case !dst && other > offset:
			return false // standard time behind a neighbour
		case n.IsDST() != dst && other != offset:
			negative = true // daylight behind standard time
		}
	}
	return dst != negative
}

// javaNeighbours returns instants in the periods just before and just after
// t's, where there are such (a zone with no transitions has none). A
// neighbour is a period that differs from t's in offset, abbreviation or
// daylight flag: where Go computes periods from a zone's rule for future
// times (the TZ string that ends tzdata files: every date in "slim" files,
// such as Go's own zoneinfo.zip, and after 2037 in "fat" ones),
// Time.ZoneBounds ends them at the turn of the year as well, and the period
// on the other side is t's own.
func javaNeighbours(t time.Time) []time.Time {
	name, offset := t.Zone()
	same := func(n time.Time) bool {
		nname, noffset := n.Zone()
		return nname == name && noffset == offset && n.IsDST() == t.IsDST()
	}
	var neighbours []time.Time
	// A few steps suffice: the split at the turn of the year is one, but a
	// period that spans years, such as standard time in a zone whose
	// daylight time has ended, may be split at each turn.
	const maxSteps = 64
	for n, i := t, 0; i < maxSteps; i++ {
		start, _ := n.ZoneBounds()
		if start.IsZero() {
			break
		}
		if n = start.Add(-time.Nanosecond); !same(n) {
			neighbours = append(neighbours, n)
			break
		}
	}
	for n, i := t, 0; i < maxSteps; i++ {
		_, end := n.ZoneBounds()
		if end.IsZero() {
			break
		}
		if n = end; !same(n) {
			neighbours = append(neighbours, n)
			break
		}
	}
	return neighbours
}

// numericAbbrev reports whether a tzdata abbreviation is an offset, "-03" or
// "+0530", rather than a name.
func numericAbbrev(s string) bool {
	if len(s) < 2 || (s[0] != '+' && s[0] != '-') {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// LocalLocation returns the system's time zone under its zone name, so that
// Date can look the name up: time.Local is named after $TZ when that is
// set, but only "Local" when it comes from /etc/localtime. Java then takes
// the name from where the link /etc/localtime points
// (/usr/share/zoneinfo/America/Sao_Paulo); so does LocalLocation. It returns
// time.Local when the name cannot be found or loaded.
func LocalLocation() *time.Location {
	if time.Local.String() != "Local" {
		return time.Local
	}
	target, err := os.Readlink("/etc/localtime")
	if err != nil {
		return time.Local
	}
	_, name, ok := strings.Cut(target, "zoneinfo/")
	if !ok {
		return time.Local
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return time.Local
	}
	return loc
}
