// Package gctune gives the Go garbage collector a floor of headroom: after
// every collection it sets the GOGC percentage so that the heap may grow by
// at least a fixed number of bytes before the next one, and by the usual
// 100% of the live heap once that is larger.
//
// A server whose live heap is small (tens of megabytes) but which allocates
// quickly under load would otherwise collect many times a second, and each
// collection's concurrent mark takes a quarter of the CPUs for its
// duration, which shows in the latency tail. The floor bounds the
// collections' frequency at the price of at most that many bytes of
// memory; a large heap (a tree of millions of znodes) is collected exactly
// as with GOGC=100. A memory limit (GOMEMLIMIT) still applies on top.
//
// The package keeps no global state beyond the runtime's own GC setting,
// which it changes only between Start and the returned stop function.
package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// BasePercent is the GOGC percentage used once the live heap is at least
// the headroom: Go's default.
const BasePercent = 100

// maxPercent caps the percentage for a nearly empty heap.
const maxPercent = 100_000

// Percent returns the GOGC percentage that lets a heap of live bytes grow
// by at least headroom bytes before the next collection: the smallest
// percentage p >= BasePercent with live*p/100 >= headroom.
func Percent(live, headroom uint64) int {
	if live == 0 {
		live = 1
	}
	if headroom/live >= maxPercent/100 {
		return maxPercent
	}
	p := (headroom*100 + live - 1) / live // ceil(headroom*100/live)
	return int(max(p, BasePercent))
}

// liveHeapMetric is the runtime metric with the heap the last collection
// marked live.
const liveHeapMetric = "/gc/heap/live:bytes"

// Tuner adjusts GOGC after every collection; see Start.
type Tuner struct {
	headroom uint64
	previous int // GOGC when Start was called, restored by Stop

	mu      sync.Mutex
	stopped bool
	percent int // the percentage last set
	runs    int // collections seen
	sample  []metrics.Sample
}

// sentinel is allocated and dropped once per collection: its cleanup runs
// after the collection that found it unreachable.
type sentinel struct{ _ [16]byte }

// Start makes every garbage collection from now on set GOGC for the next
// one from the live heap it found (Percent), and returns the Tuner, whose
// Stop ends that and restores the GOGC in force before Start. headroom 0
// means no tuning; the Tuner is then inert.
func Start(headroom uint64) *Tuner {
	t := &Tuner{headroom: headroom, sample: []metrics.Sample{{Name: liveHeapMetric}}}
	if headroom == 0 {
		t.stopped = true
		return t
	}
	t.previous = debug.SetGCPercent(BasePercent)
	t.percent = BasePercent
	t.arm()
	return t
}

// arm drops a sentinel whose cleanup runs after the next collection.
func (t *Tuner) arm() {
	s := new(sentinel)
	runtime.AddCleanup(s, func(t *Tuner) { t.collected() }, t)
}

// collected runs after each collection: it sets GOGC for the next one and
// re-arms.
func (t *Tuner) collected() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	t.runs++
	metrics.Read(t.sample)
	if v := t.sample[0].Value; v.Kind() == metrics.KindUint64 {
		if p := Percent(v.Uint64(), t.headroom); p != t.percent {
			debug.SetGCPercent(p)
			t.percent = p
		}
	}
	t.arm()
}

// Current returns the GOGC percentage the tuner last set and how many
// collections it has seen.
func (t *Tuner) Current() (percent, collections int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.percent, t.runs
}

// Stop ends the tuning and restores the GOGC in force before Start. It is
// safe to call more than once.
func (t *Tuner) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	t.stopped = true
	debug.SetGCPercent(t.previous)
}
