package bench

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// within reports whether got is within the histogram's precision (0.1%)
// of want.
func within(got, want int64) bool {
	d := got - want
	return d >= -want/1000-1 && d <= want/1000+1
}

func TestHistogramPercentiles(t *testing.T) {
	tests := []struct {
		name   string
		values []int64 // µs
		want   Percentiles
	}{
		{"empty", nil, Percentiles{}},
		{"one", []int64{250}, Percentiles{P50: 250, P90: 250, P99: 250, P999: 250, Max: 250, Mean: 250}},
		{"1..1000", seq(1, 1000), Percentiles{P50: 500, P90: 900, P99: 990, P999: 999, Max: 1000, Mean: 500.5}},
		{"1..10000", seq(1, 10000), Percentiles{P50: 5000, P90: 9000, P99: 9900, P999: 9990, Max: 10000, Mean: 5000.5}},
		// 99 fast calls and one slow one: only the top percentiles see it.
		{"outlier", append(slices.Repeat([]int64{100}, 999), 50_000), Percentiles{P50: 100, P90: 100, P99: 100, P999: 100, Max: 50_000, Mean: 149.9}},
		{"clamped", []int64{0, -5, int64(2 * time.Hour / time.Microsecond)}, Percentiles{P50: 1, P90: histMaxUS, P99: histMaxUS, P999: histMaxUS, Max: histMaxUS}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHistogram()
			vs := slices.Clone(tt.values)
			rand.Shuffle(len(vs), func(i, j int) { vs[i], vs[j] = vs[j], vs[i] })
			for _, v := range vs {
				h.RecordMicros(v)
			}
			got := h.Percentiles()
			if h.Count() != int64(len(tt.values)) {
				t.Errorf("Count = %d, want %d", h.Count(), len(tt.values))
			}
			for _, c := range []struct {
				name      string
				got, want int64
			}{{"p50", got.P50, tt.want.P50}, {"p90", got.P90, tt.want.P90}, {"p99", got.P99, tt.want.P99},
				{"p99.9", got.P999, tt.want.P999}, {"max", got.Max, tt.want.Max}} {
				if !within(c.got, c.want) {
					t.Errorf("%s = %d, want %d (±0.1%%)", c.name, c.got, c.want)
				}
			}
			if tt.want.Mean != 0 && !within(int64(got.Mean*10), int64(tt.want.Mean*10)) {
				t.Errorf("mean = %v, want %v", got.Mean, tt.want.Mean)
			}
			checkOrdered(t, "percentiles", got)
		})
	}
}

// TestHistogramMaxExact checks that Max is the largest value recorded, not
// the top of its bucket, and that no percentile exceeds it.
func TestHistogramMaxExact(t *testing.T) {
	h := NewHistogram()
	h.RecordMicros(123_457) // in a bucket 64 µs wide
	h.Record(123_456 * time.Microsecond)
	p := h.Percentiles()
	if p.Max != 123_457 || p.P999 > p.Max || p.P50 > p.Max {
		t.Errorf("percentiles %+v, want max exactly 123457 and nothing above it", p)
	}
}

func TestHistogramMerge(t *testing.T) {
	a, b := NewHistogram(), NewHistogram()
	for _, v := range seq(1, 500) {
		a.RecordMicros(v)
	}
	for _, v := range seq(501, 1000) {
		b.RecordMicros(v)
	}
	a.Merge(b)
	p := a.Percentiles()
	if a.Count() != 1000 || !within(p.P50, 500) || !within(p.P99, 990) || p.Max != 1000 {
		t.Errorf("merged: count %d, percentiles %+v; want 1000 values of 1..1000", a.Count(), p)
	}
}

func seq(from, to int64) []int64 {
	var s []int64
	for v := from; v <= to; v++ {
		s = append(s, v)
	}
	return s
}

// checkOrdered fails t unless p50 <= p90 <= p99 <= p99.9 <= max.
func checkOrdered(t *testing.T, what string, p Percentiles) {
	t.Helper()
	if !(p.P50 <= p.P90 && p.P90 <= p.P99 && p.P99 <= p.P999 && p.P999 <= p.Max) {
		t.Errorf("%s not ordered: %+v", what, p)
	}
}
