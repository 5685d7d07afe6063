package raftnode

import (
	"math"
	"testing"
)

// TestSnapInterval checks the per-snapshot draw of how many entries the
// next snapshot waits for: between half of snapCount (exclusive) and
// snapCount, spread over that range rather than one value repeated, which
// would let the members of an ensemble snapshot in step.
func TestSnapInterval(t *testing.T) {
	const draws = 2000
	tests := []struct {
		name     string
		draw     func() uint64
		min, max uint64
	}{
		{"snapInterval(100000)", func() uint64 { return snapInterval(100000) }, 50001, 100000},
		{"snapInterval(7)", func() uint64 { return snapInterval(7) }, 4, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := uint64(math.MaxUint64), uint64(0)
			seen := map[uint64]bool{}
			for range draws {
				v := tt.draw()
				if v < tt.min || v > tt.max {
					t.Fatalf("drew %d, outside [%d, %d]", v, tt.min, tt.max)
				}
				lo, hi = min(lo, v), max(hi, v)
				seen[v] = true
			}
			// With 2,000 uniform draws the extremes come within a tenth of
			// the range's ends except with negligible probability.
			tenth := (tt.max - tt.min) / 10
			if lo > tt.min+tenth || hi < tt.max-tenth || len(seen) < int(min(tt.max-tt.min, 100)) {
				t.Fatalf("%d draws span [%d, %d] with %d distinct values; want them spread over [%d, %d]",
					draws, lo, hi, len(seen), tt.min, tt.max)
			}
		})
	}
	if got := snapInterval(1); got != 1 {
		t.Errorf("snapInterval(1) = %d, want 1", got)
	}
}
