package server

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// stats are the server-wide counters behind srvr, stat and mntr.
type stats struct {
	received atomic.Int64
	sent     atomic.Int64
	latency  latency
	// traceMask is gtmk's and stmk's (fourlw.go); srst leaves it alone.
	traceMask traceMask
	// leaderSince is when this ensemble member became leader (Unix ns),
	// 0 while it does not lead: mntr's zk_leader_uptime.
	leaderSince atomic.Int64
	// proposals are the sizes of the proposals this member committed as
	// leader, since it became leader or the last srst: ZooKeeper's
	// Leader.getProposalStats, for srvr's "Proposal sizes" line and
	// mntr's zk_*_proposal_size.
	proposals bufferStats
}

func (s *stats) record(d time.Duration) { s.latency.add(d) }

// reset is srst's: ZooKeeper resets the leader's proposal sizes with the
// server stats (a member that does not lead has none to reset).
func (s *stats) reset() {
	s.received.Store(0)
	s.sent.Store(0)
	s.latency.reset()
	s.proposals.reset()
}

// leaderChanged follows this member's leadership (raft's leader-change
// hook): a new term of leadership starts its uptime and, as ZooKeeper's
// new Leader object does, its proposal sizes afresh.
func (s *stats) leaderChanged(isLeader bool) {
	if !isLeader {
		s.leaderSince.Store(0)
		return
	}
	if s.leaderSince.CompareAndSwap(0, time.Now().UnixNano()) {
		s.proposals.reset()
	}
}

// leaderUptime is how long this member has led; 0 while it does not.
func (s *stats) leaderUptime() time.Duration {
	since := s.leaderSince.Load()
	if since == 0 {
		return 0
	}
	return max(time.Since(time.Unix(0, since)), 0)
}

// observeProposal records the size in bytes of a log entry committed while
// this member leads (ZooKeeper's leader records every proposal it makes,
// its followers' forwarded requests included). The state machine's apply
// is to call it for every non-empty entry; it allocates nothing and takes
// no lock.
func (s *Server) observeProposal(size int) {
	if s.stats.leaderSince.Load() != 0 {
		s.stats.proposals.add(int64(size))
	}
}

// bufferStats are ZooKeeper's BufferStats: the last, smallest and largest
// of a series of sizes, each -1 before the first. The zero value is
// empty. Lock-free: each value is stored plus one, so that 0 means none.
type bufferStats struct {
	last, min, max atomic.Int64
}

func (b *bufferStats) add(n int64) {
	v := n + 1
	b.last.Store(v)
	for {
		cur := b.min.Load()
		if (cur != 0 && cur <= v) || b.min.CompareAndSwap(cur, v) {
			break
		}
	}
	for {
		cur := b.max.Load()
		if cur >= v || b.max.CompareAndSwap(cur, v) {
			break
		}
	}
}

// get returns the last, smallest and largest size, -1 for none.
func (b *bufferStats) get() (last, min, max int64) {
	return b.last.Load() - 1, b.min.Load() - 1, b.max.Load() - 1
}

func (b *bufferStats) reset() {
	b.last.Store(0)
	b.min.Store(0)
	b.max.Store(0)
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

// elapsedOrigin is a moment and the system's monotonic clock then, in
// milliseconds, for elapsedMillis.
var elapsedOrigin, elapsedOriginMillis = readElapsedOrigin()

func readElapsedOrigin() (time.Time, int64) {
	at := time.Now()
	if ms, ok := systemElapsedMillis(); ok {
		return at, ms
	}
	return at, 1 // count from process start; 0 is cons's "no response"
}

// elapsedMillis is t on ZooKeeper's Time.currentElapsedTime clock, from
// which its cons and the admin API's connections print lresp
// (last_response_time): System.nanoTime in milliseconds, on Linux the
// CLOCK_MONOTONIC time since boot, not a wall-clock time. Elsewhere it
// counts from when the process started.
func elapsedMillis(t time.Time) int64 {
	return elapsedOriginMillis + t.Sub(elapsedOrigin).Milliseconds()
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
	// lastActive is when the connection last answered a request. Unlike
	// lastResp, crst leaves it: it places the connection in dump's expiry
	// buckets, which ZooKeeper's stats reset does not move.
	lastActive time.Time
	// answered is set once a request is recorded, and cleared by crst: a
	// failed write leaves lastOp "NA" as well, but with its zxid.
	answered bool
}

// record accounts for an answered request as ZooKeeper's
// FinalRequestProcessor does (updateStats). Auth and SASL packets, which
// ZooKeeper answers in processPacket outside its request pipeline, change
// no connection stats.
func (cs *connStats) record(it *item, d time.Duration, zxid int64) {
	now := time.Now()
	if it.op == proto.OpAuth || it.op == proto.OpSASL {
		cs.mu.Lock()
		cs.lastActive = now
		cs.mu.Unlock()
		return
	}
	cs.latency.add(d)
	cs.mu.Lock()
	cs.lastOp = lastOp(it)
	if it.xid >= 0 { // special xids (ping, setWatches) are not the client's
		cs.lastCxid = it.xid
	}
	cs.lastResp, cs.lastActive, cs.answered = now, now, true
	cs.lastZxid = zxid
	cs.lastLatency = d.Milliseconds()
	cs.mu.Unlock()
}

// lastOp is the lop= of cons after it was answered. As in ZooKeeper, a
// write other than multi that fails (ZooKeeper's error txn, thrown before
// FinalRequestProcessor names the operation) leaves "NA".
func lastOp(it *item) string {
	err := it.err
	if it.call != nil {
		err = it.call.res.Err
	}
	if err != proto.ErrOK && failedWriteUnnamed(it.op) {
		return "NA"
	}
	return opAbbrev(it.op)
}

// failedWriteUnnamed reports whether op is a write ZooKeeper's
// PrepRequestProcessor turns into an error txn when it fails.
func failedWriteUnnamed(op proto.OpCode) bool {
	switch op {
	case proto.OpCreate, proto.OpCreate2, proto.OpCreateTTL, proto.OpCreateContainer,
		proto.OpDelete, proto.OpDeleteContainer, proto.OpSetData, proto.OpSetACL,
		proto.OpCheck, proto.OpReconfig:
		return true
	}
	return false
}

// recordSession accounts for the createSession that opened the
// connection's session, as ZooKeeper's FinalRequestProcessor does before
// it sends the ConnectResponse: lop=SESS, the request's cxid 0, the zxid
// then and the time since the ConnectRequest came. (A reconnect to an
// existing session goes through no request pipeline and records nothing.)
func (cs *connStats) recordSession(d time.Duration, zxid int64) {
	now := time.Now()
	cs.latency.add(d)
	cs.mu.Lock()
	cs.lastOp, cs.lastCxid, cs.lastZxid = "SESS", 0, zxid
	cs.lastResp, cs.lastActive, cs.answered = now, now, true
	cs.lastLatency = d.Milliseconds()
	cs.mu.Unlock()
}

func (cs *connStats) reset() {
	cs.received.Store(0)
	cs.sent.Store(0)
	cs.latency.reset()
	cs.mu.Lock()
	cs.lastOp, cs.lastCxid, cs.lastZxid, cs.lastLatency = "NA", 0, 0, 0
	cs.lastResp, cs.answered = time.Time{}, false
	cs.mu.Unlock()
}
