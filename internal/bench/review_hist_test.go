package bench

import (
	"slices"
	"testing"
)

// TestHistogramPercentileRank: a percentile is the value at the nearest
// rank, ceil(q/100 * n): the smallest value that at least q% of the calls
// did not exceed. With 1,700 calls of which 2 (0.118%) are slow, more than
// 0.1% took 50 ms, so p99.9 is 50 ms, not the fast calls' 100 µs (which
// rank 1698.3 rounded to the nearest, 1698, gives); with 1 slow call in
// 1,001 (0.0999%) it is 100 µs.
func TestHistogramPercentileRank(t *testing.T) {
	tests := []struct {
		name   string
		values []int64
		p      func(Percentiles) int64
		want   int64
	}{
		{"p99.9 of 1700", append(slices.Repeat([]int64{100}, 1698), 50_000, 50_000), func(p Percentiles) int64 { return p.P999 }, 50_000},
		{"p99 of 170", append(slices.Repeat([]int64{100}, 168), 50_000, 50_000), func(p Percentiles) int64 { return p.P99 }, 50_000},
		{"p90 of 12", append(slices.Repeat([]int64{100}, 10), 50_000, 50_000), func(p Percentiles) int64 { return p.P90 }, 50_000},
		{"p50 of 12 (ties)", append(slices.Repeat([]int64{100}, 6), slices.Repeat([]int64{50_000}, 6)...), func(p Percentiles) int64 { return p.P50 }, 100},
		{"p99.9 of 1000", append(slices.Repeat([]int64{100}, 999), 50_000), func(p Percentiles) int64 { return p.P999 }, 100},
		{"p99.9 of 1001", append(slices.Repeat([]int64{100}, 1000), 50_000), func(p Percentiles) int64 { return p.P999 }, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHistogram()
			for _, v := range tt.values {
				h.RecordMicros(v)
			}
			if got := tt.p(h.Percentiles()); !within(got, tt.want) {
				t.Errorf("got %d µs, want %d (±0.1%%)", got, tt.want)
			}
		})
	}
}
