package metrics

import (
	"math"
	"testing"
	"time"
)

// TestBuckets checks that every duration falls in a bucket whose bounds hold
// it, that buckets follow each other without gaps, and that each is at most
// 1/16 of its lower bound wide above the exact range.
func TestBuckets(t *testing.T) {
	prevHi := 0.0
	for i := 0; i < numBuckets; i++ {
		lo, hi := bucketBounds(i)
		if lo != prevHi {
			t.Fatalf("bucket %d starts at %v, previous ended at %v", i, lo, prevHi)
		}
		if i >= 2*subBuckets && (hi-lo)/lo > 1.0/subBuckets+1e-12 {
			t.Fatalf("bucket %d [%v, %v) is too wide", i, lo, hi)
		}
		prevHi = hi
	}
	for _, us := range []uint64{0, 1, 15, 16, 31, 32, 33, 63, 64, 100, 1000, 999_999, 1 << 20, 123_456_789, 1<<37 - 1} {
		i := bucketOf(us)
		lo, hi := bucketBounds(i)
		if float64(us) < lo || float64(us) >= hi {
			t.Errorf("bucketOf(%d) = %d = [%v, %v)", us, i, lo, hi)
		}
	}
	if got := bucketOf(math.MaxUint64); got != numBuckets-1 {
		t.Errorf("bucketOf(max) = %d, want the last bucket %d", got, numBuckets-1)
	}
}

// TestQuantile checks the estimates against exact quantiles of known data.
func TestQuantile(t *testing.T) {
	tests := []struct {
		name string
		us   func(i int) uint64 // the i-th of n values, in µs
		n    int
		q    float64
		want float64 // µs
	}{
		{"uniform median", func(i int) uint64 { return uint64(i) }, 100_000, 0.5, 50_000},
		{"uniform p99", func(i int) uint64 { return uint64(i) }, 100_000, 0.99, 99_000},
		{"constant", func(int) uint64 { return 700 }, 1000, 0.9, 700},
		{"two modes p50", func(i int) uint64 { return []uint64{100, 10_000}[i%2] }, 1000, 0.25, 100},
		{"two modes p90", func(i int) uint64 { return []uint64{100, 10_000}[i%2] }, 1000, 0.9, 10_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := make([]uint64, numBuckets)
			for i := 0; i < tt.n; i++ {
				b[bucketOf(tt.us(i))]++
			}
			got := quantile(b, tt.q)
			if math.Abs(got-tt.want)/tt.want > 0.07 {
				t.Errorf("quantile %v = %v µs, want %v within 7%%", tt.q, got, tt.want)
			}
		})
	}
	if got := quantile(make([]uint64, numBuckets), 0.5); !math.IsNaN(got) {
		t.Errorf("quantile of nothing = %v, want NaN", got)
	}
}

// TestSummaryWindow checks that count and sum are cumulative while the
// quantiles forget what is older than the window.
func TestSummaryWindow(t *testing.T) {
	s := newSummary("x", "x", advancedQuantiles)
	t0 := time.Now()
	count, _, qs := s.snapshot(t0)
	if count != 0 || !math.IsNaN(qs[0.5]) {
		t.Fatalf("empty: count %d p50 %v, want 0 and NaN", count, qs[0.5])
	}
	for i := 0; i < 100; i++ {
		s.Observe(100 * time.Millisecond)
	}
	count, sum, qs := s.snapshot(t0.Add(time.Minute))
	if count != 100 || math.Abs(sum-10_000) > 1e-6 || math.Abs(qs[0.5]-100)/100 > 0.07 {
		t.Fatalf("after slow requests: count %d sum %v p50 %v ms", count, sum, qs[0.5])
	}
	// Scrapes every two minutes leave marks; after the window the slow
	// requests no longer count for the quantiles.
	for m := 3; m <= 13; m += 2 {
		s.snapshot(t0.Add(time.Duration(m) * time.Minute))
	}
	for i := 0; i < 100; i++ {
		s.Observe(time.Millisecond)
	}
	count, sum, qs = s.snapshot(t0.Add(14 * time.Minute))
	if count != 200 || math.Abs(sum-10_100) > 1e-6 {
		t.Errorf("count %d sum %v, want 200 and 10100 ms (cumulative)", count, sum)
	}
	if math.Abs(qs[0.99]-1)/1 > 0.07 {
		t.Errorf("p99 = %v ms, want about 1 ms: the slow requests are out of the window", qs[0.99])
	}
	if len(s.marks) > 8 {
		t.Errorf("%d marks kept, want the window's few", len(s.marks))
	}
	s.Observe(-time.Second) // a clock step back counts as zero
	if count, _, _ := s.snapshot(t0.Add(15 * time.Minute)); count != 201 {
		t.Errorf("count %d after a negative observation, want 201", count)
	}
}

// TestSummaryObserveAllocs checks that Observe does not allocate.
func TestSummaryObserveAllocs(t *testing.T) {
	s := newSummary("x", "x", basicQuantiles)
	if n := testing.AllocsPerRun(1000, func() { s.Observe(1234 * time.Microsecond) }); n != 0 {
		t.Errorf("Observe allocates %v times", n)
	}
}
