package javastr

import "math"

// ParseInt parses s as Java's Integer.parseInt(s, radix) does (radix 2 to
// 36): an optional '-' or '+' (not alone), then at least one digit as
// Character.digit reads them (Digit), no blanks, within int32's range.
func ParseInt(s string, radix int) (int32, bool) {
	neg, s, ok := sign(s)
	if !ok {
		return 0, false
	}
	var n int64
	for _, r := range s {
		d := Digit(r, radix)
		if d < 0 {
			return 0, false
		}
		n = n*int64(radix) + int64(d)
		if n > -math.MinInt32 {
			return 0, false
		}
	}
	if neg {
		n = -n
	}
	if n > math.MaxInt32 {
		return 0, false
	}
	return int32(n), true
}

// ParseLong parses s as Java's Long.parseLong(s) does: an optional '-' or
// '+' (not alone), then at least one decimal digit of any script (Digit),
// no blanks, within int64's range.
func ParseLong(s string) (int64, bool) {
	neg, s, ok := sign(s)
	if !ok {
		return 0, false
	}
	// Accumulated negatively, as Java does, so that -2^63 fits.
	limit := int64(-math.MaxInt64)
	if neg {
		limit = math.MinInt64
	}
	multmin := limit / 10
	var n int64
	for _, r := range s {
		d := Digit(r, 10)
		if d < 0 || n < multmin {
			return 0, false
		}
		n *= 10
		if n < limit+int64(d) {
			return 0, false
		}
		n -= int64(d)
	}
	if neg {
		return n, true
	}
	return -n, true
}

// sign takes the optional '-' or '+' off s; ok is false when no digit
// can follow (s is empty, or only a sign).
func sign(s string) (neg bool, digits string, ok bool) {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	return neg, s, s != ""
}

// Digit returns r's value as a digit in radix (at most 36), as Java's
// Character.digit(char, int) does, or -1: a decimal digit of any script in
// the BMP (digitZeros), or a Latin letter, ASCII or fullwidth, standing for
// 10 to 35. Java reads a string char by char, so a character outside the
// BMP (two surrogates) is no digit.
func Digit(r rune, radix int) int {
	v := -1
	switch {
	case r >= '0' && r <= '9':
		v = int(r - '0')
	case r >= 'a' && r <= 'z':
		v = int(r-'a') + 10
	case r >= 'A' && r <= 'Z':
		v = int(r-'A') + 10
	case r >= '\uff41' && r <= '\uff5a':
		v = int(r-'\uff41') + 10
	case r >= '\uff21' && r <= '\uff3a':
		v = int(r-'\uff21') + 10
	default:
		for _, zero := range digitZeros {
			if r >= zero && r <= zero+9 {
				v = int(r - zero)
				break
			}
		}
	}
	if v >= radix {
		return -1
	}
	return v
}

// digitZeros holds the zero of every run of decimal digits in the BMP
// other than ASCII's (general category Nd) as Java's Character.digit knows
// them in JDK 17 (Unicode 13); each run holds the digits 0 to 9 in order.
// The list is fixed rather than taken from Go's unicode package because
// the replicated apply reads numbers with it (ip ACLs, quota stats): every
// replica must read them alike whatever Unicode version its Go has.
var digitZeros = [...]rune{
	0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6,
	0x0C66, 0x0CE6, 0x0D66, 0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090,
	0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40,
	0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
}
