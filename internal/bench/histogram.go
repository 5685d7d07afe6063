package bench

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram bounds: latencies are kept in microseconds from 1 µs to one
// hour with three significant digits (an error of at most 0.1%).
const (
	histMinUS   = 1
	histMaxUS   = int64(time.Hour / time.Microsecond)
	histSigFigs = 3
)

// Histogram records latencies. It is not safe for concurrent use: each
// session records into its own, and they are merged at the end.
type Histogram struct {
	h   *hdrhistogram.Histogram
	max int64 // exact largest value recorded, µs
}

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram {
	return &Histogram{h: hdrhistogram.New(histMinUS, histMaxUS, histSigFigs)}
}

// Record adds one latency. Values below 1 µs count as 1 µs, values above an
// hour as an hour.
func (h *Histogram) Record(d time.Duration) {
	h.RecordMicros(d.Microseconds())
}

// RecordMicros adds one latency given in microseconds, clamped as in Record.
func (h *Histogram) RecordMicros(us int64) {
	us = min(max(us, histMinUS), histMaxUS)
	h.max = max(h.max, us)
	_ = h.h.RecordValue(us) // in range by construction
}

// Merge adds every value recorded in o.
func (h *Histogram) Merge(o *Histogram) {
	h.h.Merge(o.h)
	h.max = max(h.max, o.max)
}

// Count returns the number of values recorded.
func (h *Histogram) Count() int64 { return h.h.TotalCount() }

// Percentiles are latency percentiles in microseconds.
type Percentiles struct {
	P50  int64   `json:"p50"`
	P90  int64   `json:"p90"`
	P99  int64   `json:"p99"`
	P999 int64   `json:"p999"`
	Max  int64   `json:"max"`
	Mean float64 `json:"mean"`
}

// Percentiles returns the histogram's percentiles (all zero when it is
// empty). Each is the largest value equivalent, within the histogram's
// precision, to the recorded value at its nearest rank, ceil(q/100 * n)
// (the smallest value that at least q% of the values do not exceed), and
// at most Max, which is exact; so P50 <= P90 <= P99 <= P999 <= Max.
func (h *Histogram) Percentiles() Percentiles {
	n := h.Count()
	if n == 0 {
		return Percentiles{}
	}
	// hdrhistogram rounds q/100*n to the nearest rank, one below the
	// nearest rank when the fraction is under a half (p99.9 of 1,700
	// values would be the 1,698th, leaving 0.12% of them above it). Ask it
	// for the percentile whose rounded rank is ceil(q/100*n), computed in
	// integers (q in tenths of a percent) so that no rounding of q/100*n
	// moves it either.
	at := func(permille int64) int64 {
		rank := (permille*n + 999) / 1000
		return min(h.h.ValueAtQuantile(100*float64(rank)/float64(n)), h.max)
	}
	return Percentiles{
		P50:  at(500),
		P90:  at(900),
		P99:  at(990),
		P999: at(999),
		Max:  h.max,
		Mean: min(h.h.Mean(), float64(h.max)),
	}
}
