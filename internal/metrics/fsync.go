package metrics

import (
	"log/slog"
	"sync/atomic"
	"time"
)

// SlowFsyncs warns about write-ahead-log fsyncs slower than a threshold, as
// ZooKeeper's FileTxnLog does with fsync.warningthresholdms, and counts
// them. A server uses one whether or not it exports metrics; a Set has its
// own and exports the count as paddock_wal_slow_fsyncs_total.
type SlowFsyncs struct {
	log       *slog.Logger
	threshold time.Duration
	count     atomic.Uint64
}

// NewSlowFsyncs returns an accounting of fsyncs slower than threshold (zero
// counts every fsync); logger nil discards the warnings.
func NewSlowFsyncs(logger *slog.Logger, threshold time.Duration) *SlowFsyncs {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &SlowFsyncs{log: logger, threshold: threshold}
}

// Observe checks one fsync that took d, and reports whether it was slow.
func (f *SlowFsyncs) Observe(d time.Duration) bool {
	if d <= f.threshold {
		return false
	}
	f.log.Warn("fsync-ing the write ahead log took longer than fsync.warningthresholdms, which will adversely affect operation latency",
		"took_ms", float64(d.Microseconds())/1000, "threshold_ms", f.threshold.Milliseconds())
	f.count.Add(1) // after the warning, so a count read never runs ahead of the log
	return true
}

// Count returns how many slow fsyncs were observed.
func (f *SlowFsyncs) Count() uint64 { return f.count.Load() }

// Threshold returns the threshold.
func (f *SlowFsyncs) Threshold() time.Duration { return f.threshold }
