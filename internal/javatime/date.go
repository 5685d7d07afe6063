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

// javaZoneNames are the short names java.util.Date.toString prints (Java
// 17's TimeZone.getDisplayName(daylight, SHORT, Locale.US)), standard then
// daylight, for common zones whose tzdata abbreviation is a number ("-03",
// "+0530"): there Go prints the number and Java a name (BRT, not -03). Zones
// with a named abbreviation (CET, EST, IST, JST) print the same in both and
// are not listed. Africa/Casablanca is left out: tzdata marks its Ramadan
// time as daylight time and Java its summer time, so the two disagree on
// which name applies.
var javaZoneNames = map[string][2]string{
	"America/Argentina/Buenos_Aires": {"ART", "ARST"},
	"America/Argentina/Cordoba":      {"ART", "ARST"},
	"America/Argentina/Mendoza":      {"ART", "ARST"},
	"America/Asuncion":               {"PYT", "PYST"},
	"America/Bahia":                  {"BRT", "BRST"},
	"America/Belem":                  {"BRT", "BRST"},
	"America/Bogota":                 {"COT", "COST"},
	"America/Caracas":                {"VET", "VEST"},
	"America/Fortaleza":              {"BRT", "BRST"},
	"America/Guayaquil":              {"ECT", "ECST"},
	"America/La_Paz":                 {"BOT", "BOST"},
	"America/Lima":                   {"PET", "PEST"},
	"America/Manaus":                 {"AMT", "AMST"},
	"America/Montevideo":             {"UYT", "UYST"},
	"America/Noronha":                {"FNT", "FNST"},
	"America/Nuuk":                   {"WGT", "WGST"},
	"America/Recife":                 {"BRT", "BRST"},
	"America/Santiago":               {"CLT", "CLST"},
	"America/Sao_Paulo":              {"BRT", "BRST"},
	"Asia/Almaty":                    {"ALMT", "ALMST"},
	"Asia/Amman":                     {"EET", "EEST"},
	"Asia/Baghdad":                   {"AST", "ADT"},
	"Asia/Bahrain":                   {"AST", "ADT"},
	"Asia/Baku":                      {"AZT", "AZST"},
	"Asia/Bangkok":                   {"ICT", "ICST"},
	"Asia/Colombo":                   {"IST", "IDT"},
	"Asia/Damascus":                  {"EET", "EEST"},
	"Asia/Dhaka":                     {"BDT", "BDST"},
	"Asia/Dubai":                     {"GST", "GDT"},
	"Asia/Ho_Chi_Minh":               {"ICT", "ICST"},
	"Asia/Irkutsk":                   {"IRKT", "IRKST"},
	"Asia/Kabul":                     {"AFT", "AFST"},
	"Asia/Kamchatka":                 {"PETT", "PETST"},
	"Asia/Kathmandu":                 {"NPT", "NPST"},
	"Asia/Krasnoyarsk":               {"KRAT", "KRAST"},
	"Asia/Kuala_Lumpur":              {"MYT", "MYST"},
	"Asia/Kuwait":                    {"AST", "ADT"},
	"Asia/Magadan":                   {"MAGT", "MAGST"},
	"Asia/Muscat":                    {"GST", "GDT"},
	"Asia/Novosibirsk":               {"NOVT", "NOVST"},
	"Asia/Omsk":                      {"OMST", "OMSST"},
	"Asia/Qatar":                     {"AST", "ADT"},
	"Asia/Riyadh":                    {"AST", "ADT"},
	"Asia/Singapore":                 {"SGT", "SGST"},
	"Asia/Tashkent":                  {"UZT", "UZST"},
	"Asia/Tbilisi":                   {"GET", "GEST"},
	"Asia/Tehran":                    {"IRST", "IRDT"},
	"Asia/Ulaanbaatar":               {"ULAT", "ULAST"},
	"Asia/Vladivostok":               {"VLAT", "VLAST"},
	"Asia/Yakutsk":                   {"YAKT", "YAKST"},
	"Asia/Yangon":                    {"MMT", "MMST"},
	"Asia/Yekaterinburg":             {"YEKT", "YEKST"},
	"Asia/Yerevan":                   {"AMT", "AMST"},
	"Atlantic/Azores":                {"AZOT", "AZOST"},
	"Atlantic/Cape_Verde":            {"CVT", "CVST"},
	"Europe/Istanbul":                {"TRT", "TRST"},
	"Europe/Minsk":                   {"MSK", "MSD"},
	"Europe/Samara":                  {"SAMT", "SAMST"},
	"Indian/Maldives":                {"MVT", "MVST"},
	"Indian/Mauritius":               {"MUT", "MUST"},
	"Pacific/Apia":                   {"WSST", "WSDT"},
	"Pacific/Chatham":                {"CHAST", "CHADT"},
	"Pacific/Easter":                 {"EAST", "EASST"},
	"Pacific/Fiji":                   {"FJT", "FJST"},
	"Pacific/Galapagos":              {"GALT", "GALST"},
	"Pacific/Kiritimati":             {"LINT", "LINST"},
	"Pacific/Noumea":                 {"NCT", "NCST"},
	"Pacific/Port_Moresby":           {"PGT", "PGST"},
	"Pacific/Tongatapu":              {"TOT", "TOST"},
}

// Date formats t, in its location, as java.util.Date.toString does,
// "EEE MMM dd HH:mm:ss zzz yyyy", with the zone named as Java names it
// (javaZone), after the location's name: give it a location from
// time.LoadLocation or LocalLocation, not time.Local read from
// /etc/localtime (named "Local").
func Date(t time.Time) string {
	return t.Format("Mon Jan 02 15:04:05 ") + javaZone(t, t.Location().String()) + t.Format(" 2006")
}

// javaZone returns the time-zone name java.util.Date.toString prints for t,
// whose location is the zone named zone ("America/Sao_Paulo"). A zone of
// javaZoneNames gets Java's name, which is the same at every date (Java has
// one standard and one daylight name per zone: TRT for Europe/Istanbul in
// 1970 too, where tzdata says EET). Otherwise a named tzdata abbreviation
// is printed as it is, and a numeric one ("-03") as Java prints a zone it
// has no name for: "GMT-03:00", or "GMT" at offset zero.
func javaZone(t time.Time, zone string) string {
	if names, ok := javaZoneNames[zone]; ok {
		if t.IsDST() {
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
