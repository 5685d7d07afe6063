package session

import (
	"sync"
	"sync/atomic"
	"time"
)

// Tracker holds session deadlines. It is safe for concurrent use.
type Tracker struct {
	tick time.Duration
	// epoch is when the tracker was made, to the millisecond, with the
	// monotonic clock reading time.Now gave it; epochMs is its wall clock in
	// Unix milliseconds. Deadlines are measured from epoch (see clock), not
	// read off the wall clock, so that a step of the system clock moves none
	// of them (ZooKeeper's ZOOKEEPER-1366: a clock stepped forward by more
	// than the session timeout expired every session at once).
	epoch   time.Time
	epochMs int64

	mu       sync.Mutex
	sessions map[int64]*Entry
	buckets  map[int64]map[int64]*Entry // bucket time (ms, see clock) → sessions
}

// Entry is one tracked session. Keep it to touch without a map lookup.
type Entry struct {
	ID      int64
	timeout atomic.Int64 // milliseconds
	bucket  atomic.Int64 // the bucket it sits in (ms, see Tracker.clock)
	gone    atomic.Bool
}

// Timeout returns the session's timeout.
func (e *Entry) Timeout() time.Duration { return time.Duration(e.timeout.Load()) * time.Millisecond }

// Deadline returns the time the session expires unless touched, on the
// wall clock as it ran when the tracker was made (see Tracker.clock): after
// a step of the system clock it differs from the wall clock by the step.
func (e *Entry) Deadline() time.Time { return time.UnixMilli(e.bucket.Load()) }

// NewTracker returns a tracker with buckets tick wide (a tick <= 0 means a
// second; buckets are whole milliseconds, at least one). It reads the clock
// once, for the origin it measures times from.
func NewTracker(tick time.Duration) *Tracker {
	if tick <= 0 {
		tick = time.Second
	}
	tick = max(tick.Truncate(time.Millisecond), time.Millisecond)
	now := time.Now()
	// A whole millisecond, so that clock counts as UnixMilli does for
	// times without a monotonic reading. Add keeps the monotonic reading.
	epoch := now.Add(-time.Duration(now.UnixNano() % int64(time.Millisecond)))
	return &Tracker{tick: tick, epoch: epoch, epochMs: epoch.UnixMilli(),
		sessions: make(map[int64]*Entry), buckets: make(map[int64]map[int64]*Entry)}
}

// clock returns x in milliseconds: the tracker's origin in Unix
// milliseconds plus the time from the origin to x, rounded down. The time
// from the origin is x.Sub(epoch), measured with the monotonic clock when x
// has a reading of it, as every time from time.Now does (and Add keeps):
// then a step of the wall clock changes nothing here. A time without one
// (time.UnixMilli, Round(0)) is measured by its wall clock, and clock
// returns its UnixMilli.
func (t *Tracker) clock(x time.Time) int64 {
	d := x.Sub(t.epoch)
	ms := int64(d / time.Millisecond)
	if d%time.Millisecond < 0 {
		ms--
	}
	return t.epochMs + ms
}

// roundUp returns the bucket for a deadline: the next multiple of the tick.
func (t *Tracker) roundUp(deadline time.Time) int64 {
	tick := t.tick.Milliseconds()
	ms := t.clock(deadline)
	return (ms/tick + 1) * tick
}

// UntilNextBucket returns how long after now the next bucket begins: when
// the sessions of the bucket ending then expire. An expiry loop that waits
// this long each time expires sessions when their bucket ends, as
// ZooKeeper's session tracker does, rather than up to a tick later.
func (t *Tracker) UntilNextBucket(now time.Time) time.Duration {
	ms := t.clock(now)
	return time.Duration(t.roundUp(now)-ms) * time.Millisecond
}

// Add starts tracking a session, or refreshes it if already tracked, with a
// deadline of now+timeout.
func (t *Tracker) Add(id int64, timeout time.Duration, now time.Time) *Entry {
	t.mu.Lock()
	e := t.sessions[id]
	if e == nil {
		e = &Entry{ID: id}
		t.sessions[id] = e
	}
	e.timeout.Store(timeout.Milliseconds())
	t.move(e, t.roundUp(now.Add(timeout)))
	t.mu.Unlock()
	return e
}

// Get returns the entry of a tracked session, or nil.
func (t *Tracker) Get(id int64) *Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sessions[id]
}

// Touch pushes a session's deadline to now+timeout, rounded up to the next
// tick multiple. A deadline is never moved earlier by Touch: callers pass a
// clock that does not run backwards, so the common case is one atomic
// comparison. It reports false if the session is no longer tracked (removed
// or expired).
func (t *Tracker) Touch(e *Entry, now time.Time) bool {
	if e.gone.Load() {
		return false
	}
	b := t.roundUp(now.Add(e.Timeout()))
	if e.bucket.Load() >= b {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if e.gone.Load() {
		return false
	}
	// A Touch with a later time may have moved it while this one waited.
	if e.bucket.Load() < b {
		t.move(e, b)
	}
	return true
}

// SetTimeout changes a session's timeout (a client reconnecting negotiates
// anew) and moves its deadline to now+timeout, earlier if the timeout shrank,
// as ExpiryQueue.update does. It reports false if the session is no longer
// tracked.
func (t *Tracker) SetTimeout(e *Entry, timeout time.Duration, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e.gone.Load() {
		return false
	}
	e.timeout.Store(timeout.Milliseconds())
	t.move(e, t.roundUp(now.Add(timeout)))
	return true
}

func (t *Tracker) move(e *Entry, b int64) {
	old := e.bucket.Load()
	if old == b && t.buckets[b][e.ID] == e {
		return
	}
	if s := t.buckets[old]; s != nil {
		delete(s, e.ID)
		if len(s) == 0 {
			delete(t.buckets, old)
		}
	}
	s := t.buckets[b]
	if s == nil {
		s = make(map[int64]*Entry)
		t.buckets[b] = s
	}
	s[e.ID] = e
	e.bucket.Store(b)
}

// Remove stops tracking a session.
func (t *Tracker) Remove(id int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.sessions[id]
	if e == nil {
		return
	}
	e.gone.Store(true)
	delete(t.sessions, id)
	if s := t.buckets[e.bucket.Load()]; s != nil {
		delete(s, id)
		if len(s) == 0 {
			delete(t.buckets, e.bucket.Load())
		}
	}
}

// Expired returns the sessions whose bucket is at or before now and stops
// tracking them (a late Touch reports false): the caller proposes their close.
func (t *Tracker) Expired(now time.Time) []int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	ms := t.clock(now)
	var out []int64
	for b, s := range t.buckets {
		if b > ms {
			continue
		}
		for id, e := range s {
			out = append(out, id)
			e.gone.Store(true)
			delete(t.sessions, id)
		}
		delete(t.buckets, b)
	}
	return out
}

// Len returns the number of tracked sessions.
func (t *Tracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.sessions)
}

// Snapshot returns the tracked sessions grouped by bucket, for dump.
func (t *Tracker) Snapshot() map[time.Time][]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[time.Time][]int64, len(t.buckets))
	for b, s := range t.buckets {
		for id := range s {
			out[time.UnixMilli(b)] = append(out[time.UnixMilli(b)], id)
		}
	}
	return out
}

// ResetAll gives every tracked session a deadline of now+timeout, even an
// earlier one than it had: a new leader does this, since it cannot know
// when the sessions were last heard from.
func (t *Tracker) ResetAll(now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, e := range t.sessions {
		t.move(e, t.roundUp(now.Add(e.Timeout())))
	}
}

// IDs returns the ids of the tracked sessions.
func (t *Tracker) IDs() []int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]int64, 0, len(t.sessions))
	for id := range t.sessions {
		out = append(out, id)
	}
	return out
}
