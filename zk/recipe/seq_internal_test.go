package recipe

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// seqName is the name ZooKeeper gives a sequential create of given under a
// parent whose counter is c: given and c formatted with %010d, which takes
// 11 characters for c below -999999999 (after the counter overflowed).
func seqName(given string, c int32) string { return fmt.Sprintf("%s%010d", given, c) }

// TestSortedSeqOverflow: sequence numbers past the int32 counter's
// overflow (ZooKeeper's "<path>-2147483648", then counting up to -1) are
// recognised, whatever their width, and sort after the ones made before the
// overflow, in creation order: the contenders of a lock or an election, the
// members of a group and the items of a queue keep their order.
func TestSortedSeqOverflow(t *testing.T) {
	counters := []int32{math.MaxInt32 - 1, math.MaxInt32, math.MinInt32, math.MinInt32 + 1, -1000000000, -999999999, -5, -1}
	const guid = "_c_0d5e3b4a-1d2c-4e5f-8a9b-0c1d2e3f4a5b-"
	for _, given := range []string{lockPrefix, candidatePrefix, memberPrefix, guid + lockPrefix} {
		var names []string
		for _, c := range counters {
			names = append(names, seqName(given, c))
		}
		shuffled := slices.Clone(names)
		slices.Reverse(shuffled)
		prefix := given
		if len(given) > len(guid) {
			prefix = lockPrefix
		}
		var got []string
		for _, n := range sortedSeq(shuffled, prefix) {
			got = append(got, n.name)
		}
		if !slices.Equal(got, names) {
			t.Errorf("sortedSeq(%q):\n got %q\nwant %q", given, got, names)
		}
	}
	var names []string
	for _, c := range counters {
		names = append(names, seqName(itemPrefix, c))
		names = append(names, seqName(prioName(0), c))
	}
	shuffled := slices.Clone(names)
	slices.Reverse(shuffled)
	var got []string
	for _, it := range items(shuffled) {
		got = append(got, it.name)
	}
	// Priority 0 items and plain items interleave by sequence number.
	var want []string
	for i := 0; i < len(names); i += 2 {
		want = append(want, names[i+1], names[i]) // equal sequence: by name ("pq-" < "qn-")
	}
	if !slices.Equal(got, want) {
		t.Errorf("items:\n got %q\nwant %q", got, want)
	}
}

// TestParseSeqMalformed: names that are not a sequential create's (as
// ZooKeeper formats it) do not parse, none panics, and the width of a
// number tells a given name ending in '-' from a negative number.
func TestParseSeqMalformed(t *testing.T) {
	for _, name := range []string{
		"", "-", "lock", "lock-", "lock-123", "lock-00000000x1", "lock-+000000001",
		"lock--", "-----------", "lock--9999999999", "lock--2147483649",
		"lock-2147483648", "lock-- 000000001", "lock--0000000001", "lock--000000000",
		"lock-00000000001", "read-0000000001", "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00",
	} {
		if n, ok := parseSeq(name, lockPrefix); ok {
			t.Errorf("parseSeq(%q) = %+v, want no lock sequence", name, n)
		}
	}
	for name, want := range map[string]int64{
		"lock-0000000007":  7,
		"lock-1234567890":  1234567890,
		"lock-2147483647":  math.MaxInt32,
		"lock--2147483648": 1 << 31,
		"lock--1234567890": 1<<32 - 1234567890,
		"lock--000000001":  1<<32 - 1,
	} {
		n, ok := parseSeq(name, lockPrefix)
		if !ok || n.prefix != lockPrefix || n.seq != want {
			t.Errorf("parseSeq(%q) = %+v, %v; want prefix %q, seq %d", name, n, ok, lockPrefix, want)
		}
	}
}
