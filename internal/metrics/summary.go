package metrics

import (
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Quantile sets of ZooKeeper's Prometheus summaries: a DetailLevel.BASIC
// summary reports the median, an ADVANCED one also the 90th and 99th
// percentiles.
var (
	basicQuantiles    = []float64{0.5}
	advancedQuantiles = []float64{0.5, 0.9, 0.99}
)

// summaryWindow is how far back the quantiles of a Summary look, as the
// Prometheus Java client's default (maxAgeSeconds 600) that ZooKeeper uses.
const summaryWindow = 10 * time.Minute

// Durations are counted in buckets of microseconds: exact below 32 µs, then
// 16 buckets per power of two (each at most 1/16 ≈ 6% wide), up to 2^37 µs
// (38 h); longer durations land in the last bucket.
const (
	subBuckets = 16
	maxOctave  = 32 // values up to 32<<maxOctave µs
	numBuckets = subBuckets * (maxOctave + 2)
)

// bucketOf returns the bucket of a duration of us microseconds.
func bucketOf(us uint64) int {
	if us < 2*subBuckets {
		return int(us)
	}
	e := bits.Len64(us) - 5 // us>>e is in [16, 32)
	if e > maxOctave {
		return numBuckets - 1
	}
	return subBuckets*(e+1) + int(us>>e) - subBuckets
}

// bucketBounds returns the range [lo, hi) of microseconds bucket i counts.
func bucketBounds(i int) (lo, hi float64) {
	if i < 2*subBuckets {
		return float64(i), float64(i + 1)
	}
	e := i/subBuckets - 1
	m := uint64(i%subBuckets + subBuckets)
	return float64(m << e), float64((m + 1) << e)
}

// Summary is a summary in ZooKeeper's style: a count, a sum and quantiles
// of durations, all in milliseconds, the quantiles over about the last ten
// minutes (between ten and twelve). Observe is lock-free and does not
// allocate: it adds to one of a fixed set of bucket counters; the quantiles
// are estimated from the buckets when the summary is collected, to within a
// bucket's width (about 6%).
type Summary struct {
	desc      *prometheus.Desc
	quantiles []float64
	created   time.Time

	buckets [numBuckets]atomic.Uint64
	sumNs   atomic.Int64

	mu    sync.Mutex // guards marks; held by collect only
	marks []mark
}

// mark is the bucket counts as a collect saw them at t.
type mark struct {
	t      time.Time
	counts []uint64
}

// newSummary returns a summary named name with the given quantiles.
func newSummary(name, help string, quantiles []float64) *Summary {
	return &Summary{
		desc:      prometheus.NewDesc(name, help, nil, nil),
		quantiles: quantiles,
		created:   time.Now(),
	}
}

// Observe records one duration; negative durations count as zero.
func (s *Summary) Observe(d time.Duration) {
	if d < 0 {
		d = 0
	}
	s.buckets[bucketOf(uint64(d/time.Microsecond))].Add(1)
	s.sumNs.Add(int64(d))
}

// Describe implements prometheus.Collector.
func (s *Summary) Describe(ch chan<- *prometheus.Desc) { ch <- s.desc }

// Collect implements prometheus.Collector.
func (s *Summary) Collect(ch chan<- prometheus.Metric) {
	count, sumMs, qs := s.snapshot(time.Now())
	ch <- prometheus.MustNewConstSummary(s.desc, count, sumMs, qs)
}

// snapshot returns the count and sum (in ms) since the summary was made and
// the quantiles (in ms; NaN when nothing was observed) over the window
// ending at now.
func (s *Summary) snapshot(now time.Time) (count uint64, sumMs float64, quantiles map[float64]float64) {
	cur := make([]uint64, numBuckets)
	for i := range cur {
		cur[i] = s.buckets[i].Load()
		count += cur[i]
	}
	sumMs = float64(s.sumNs.Load()) / float64(time.Millisecond)

	s.mu.Lock()
	// The base is the newest mark at least a window old; before there is
	// one, every observation so far is inside the window.
	var base []uint64
	keep := 0
	for i, m := range s.marks {
		if !m.t.After(now.Add(-summaryWindow)) {
			base, keep = m.counts, i
		}
	}
	s.marks = s.marks[keep:]
	if n := len(s.marks); n == 0 || now.Sub(s.marks[n-1].t) >= summaryWindow/5 {
		s.marks = append(s.marks, mark{t: now, counts: cur})
	}
	s.mu.Unlock()

	window := cur
	if base != nil {
		window = make([]uint64, numBuckets)
		for i := range window {
			window[i] = cur[i] - base[i]
		}
	}
	quantiles = make(map[float64]float64, len(s.quantiles))
	for _, q := range s.quantiles {
		quantiles[q] = quantile(window, q) / 1000
	}
	return count, sumMs, quantiles
}

// quantile estimates the q-quantile, in microseconds, of the durations
// counted in buckets, interpolating linearly inside the bucket it falls in.
// It returns NaN when the buckets are empty.
func quantile(buckets []uint64, q float64) float64 {
	var total uint64
	for _, c := range buckets {
		total += c
	}
	if total == 0 {
		return math.NaN()
	}
	rank := q * float64(total)
	var seen float64
	for i, c := range buckets {
		if c == 0 {
			continue
		}
		if seen+float64(c) >= rank {
			lo, hi := bucketBounds(i)
			return lo + (hi-lo)*(rank-seen)/float64(c)
		}
		seen += float64(c)
	}
	_, hi := bucketBounds(numBuckets - 1)
	return hi
}
