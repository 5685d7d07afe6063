package server

import (
	"sync"
	"sync/atomic"
	"time"
)

// stats are the server-wide counters behind srvr, stat and mntr.
type stats struct {
	received atomic.Int64
	sent     atomic.Int64
	latency  latency
	// traceMask is gtmk's and stmk's (fourlw.go); srst leaves it alone.
	traceMask traceMask
}

func (s *stats) record(d time.Duration) { s.latency.add(d) }

func (s *stats) reset() {
	s.received.Store(0)
	s.sent.Store(0)
	s.latency.reset()
}

// latency keeps min/avg/max request latency in milliseconds, as ZooKeeper
// reports it. It is lock-free: every request updates it.
type latency struct {
	min, max   atomic.Int64 // min is stored +1 so that 0 means "none yet"
	total, cnt atomic.Int64
}

func (l *latency) add(d time.Duration) {
	ms := d.Milliseconds()
	for {
		cur := l.min.Load()
		if cur != 0 && cur-1 <= ms {
			break
		}
		if l.min.CompareAndSwap(cur, ms+1) {
			break
		}
	}
	for {
		cur := l.max.Load()
		if ms <= cur || l.max.CompareAndSwap(cur, ms) {
			break
		}
	}
	l.total.Add(ms)
	l.cnt.Add(1)
}

func (l *latency) get() (min int64, avg float64, max int64, cnt int64) {
	cnt = l.cnt.Load()
	if cnt > 0 {
		avg = float64(l.total.Load()) / float64(cnt)
	}
	if m := l.min.Load(); m > 0 {
		min = m - 1
	}
	return min, avg, l.max.Load(), cnt
}

func (l *latency) reset() {
	l.min.Store(0)
	l.max.Store(0)
	l.total.Store(0)
	l.cnt.Store(0)
}

// connStats are one connection's counters, for cons.
type connStats struct {
	received    atomic.Int64
	sent        atomic.Int64
	established time.Time
	mu          sync.Mutex
	lastOp      string
	lastCxid    int32
	lastZxid    int64
	lastResp    time.Time
	lastLatency int64
	latency     latency
}

func (cs *connStats) record(it *item, d time.Duration, zxid int64) {
	cs.latency.add(d)
	cs.mu.Lock()
	cs.lastOp = opAbbrev(it.op)
	if it.xid > 0 {
		cs.lastCxid = it.xid
	}
	cs.lastResp = time.Now()
	cs.lastZxid = zxid
	cs.lastLatency = d.Milliseconds()
	cs.mu.Unlock()
}

func (cs *connStats) reset() {
	cs.received.Store(0)
	cs.sent.Store(0)
	cs.latency.reset()
	cs.mu.Lock()
	cs.lastOp, cs.lastCxid, cs.lastZxid, cs.lastLatency = "NA", 0, 0, 0
	cs.mu.Unlock()
}
