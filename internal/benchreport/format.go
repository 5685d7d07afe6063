package benchreport

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// thousands formats x rounded to an integer with commas: 1234567 → 1,234,567.
func thousands(x float64) string {
	s := strconv.FormatInt(int64(math.Round(x)), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// decimals formats x with precision fitting its size: 3 significant digits
// down to whole numbers (123, 12.3, 1.23, 0.123).
func decimals(x float64) string {
	a := math.Abs(x)
	switch {
	case a >= 100:
		return thousands(x)
	case a >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(x, 'f', 2, 64)
	default:
		return strconv.FormatFloat(x, 'f', 3, 64)
	}
}

// withRange formats s's median and, when the repetitions differ, its range
// in brackets, each value through f; "—" when s is empty.
func withRange(s Stat, f func(float64) string) string {
	if s.N == 0 {
		return "—"
	}
	out := f(s.Median)
	if s.N > 1 && s.Min != s.Max {
		out += " (" + f(s.Min) + "–" + f(s.Max) + ")"
	}
	return out
}

// ratio formats Ratio(zk, pd).
func ratio(zk, pd Stat) string {
	r, ok := Ratio(zk, pd)
	if !ok {
		return "—"
	}
	if r >= 10 {
		return strconv.FormatFloat(r, 'f', 1, 64) + "×"
	}
	return strconv.FormatFloat(r, 'f', 2, 64) + "×"
}

// scaled formats s's median divided by div with its unit, then, when the
// repetitions differ, its range in the same unit: "65.8 MiB (64.8–66.8)".
func scaled(s Stat, div float64, unit string) string {
	if s.N == 0 {
		return "—"
	}
	out := decimals(s.Median/div) + unit
	if s.N > 1 && s.Min != s.Max {
		out += " (" + decimals(s.Min/div) + "–" + decimals(s.Max/div) + ")"
	}
	return out
}

// latency formats a latency figure in µs: in µs below 1 ms, else in ms.
func latency(s Stat) string {
	if s.Median >= 1000 {
		return scaled(s, 1000, " ms")
	}
	return scaled(s, 1, " µs")
}

// size formats a byte figure in MiB, or GiB from 1 GiB.
func size(s Stat) string {
	if s.Median >= 1<<30 {
		return scaled(s, 1<<30, " GiB")
	}
	return scaled(s, 1<<20, " MiB")
}

// plain formats x with up to 4 significant digits and no trailing zeros:
// 10, 2.5.
func plain(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }

// gib formats bytes in GiB.
func gib(b float64) string { return decimals(b/(1<<30)) + " GiB" }

// count formats an integer count with commas.
func count[T ~int | ~int64](n T) string { return thousands(float64(n)) }

// firstWord returns s up to its first '-', ',' or space: the version number
// of "3.8.0-abc, built on ...".
func firstWord(s string) string {
	if i := strings.IndexAny(s, "-, "); i >= 0 {
		return s[:i]
	}
	return s
}

// plural returns "1 thing" or "n things".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
