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
}

func (s *stats) record(d time.Duration) { s.latency.add(d) }

func (s *stats) reset() {
	s.received.Store(0)
	s.sent.Store(0)
	s.latency.reset()
}

// latency keeps min/avg/max request latency in milliseconds, as ZooKeeper
// reports it.
type latency struct {
	mu         sync.Mutex
	min, max   int64
	total, cnt int64
}

func (l *latency) add(d time.Duration) {
	ms := d.Milliseconds()
	l.mu.Lock()
	if l.cnt == 0 || ms < l.min {
		l.min = ms
	}
	if ms > l.max {
		l.max = ms
	}
	l.total += ms
	l.cnt++
	l.mu.Unlock()
}

func (l *latency) get() (min int64, avg float64, max int64, cnt int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cnt > 0 {
		avg = float64(l.total) / float64(l.cnt)
	}
	return l.min, avg, l.max, l.cnt
}

func (l *latency) reset() {
	l.mu.Lock()
	l.min, l.max, l.total, l.cnt = 0, 0, 0, 0
	l.mu.Unlock()
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
