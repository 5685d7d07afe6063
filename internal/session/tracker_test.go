package session

import (
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"
)

// base is a multiple of every tick used here.
var base = time.UnixMilli(1_700_000_000_000)

func at(ms int64) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }

func TestDeadlineRounding(t *testing.T) {
	cases := []struct {
		tick, timeout time.Duration
		now, want     int64 // ms after base
	}{
		{2 * time.Second, 5 * time.Second, 0, 6000},
		{2 * time.Second, 5 * time.Second, 300, 6000},
		{2 * time.Second, 4 * time.Second, 0, 6000}, // an exact multiple still goes to the next one
		{2 * time.Second, 4 * time.Second, 1999, 6000},
		{2 * time.Second, 4 * time.Second, 2000, 8000},
		{time.Second, 10 * time.Second, 1, 11000},
		{500 * time.Millisecond, 0, 0, 500},
	}
	for _, tc := range cases {
		tr := NewTracker(tc.tick)
		e := tr.Add(1, tc.timeout, at(tc.now))
		if got := e.Deadline(); !got.Equal(at(tc.want)) {
			t.Errorf("tick %v timeout %v now +%d: deadline +%d, want +%d",
				tc.tick, tc.timeout, tc.now, got.Sub(base).Milliseconds(), tc.want)
		}
		if e.Timeout() != tc.timeout || e.ID != 1 {
			t.Errorf("entry = id %d timeout %v", e.ID, e.Timeout())
		}
	}
	if tr := NewTracker(0); tr.tick != time.Second {
		t.Errorf("NewTracker(0) tick = %v, want 1s", tr.tick)
	}
}

func TestExpiredOnce(t *testing.T) {
	tr := NewTracker(2 * time.Second)
	e := tr.Add(7, 5*time.Second, at(0)) // deadline +6000
	if got := tr.Expired(at(5999)); len(got) != 0 {
		t.Fatalf("expired early: %v", got)
	}
	if got := tr.Expired(at(6000)); !reflect.DeepEqual(got, []int64{7}) {
		t.Fatalf("Expired(+6000) = %v, want [7]", got)
	}
	if got := tr.Expired(at(60000)); len(got) != 0 {
		t.Fatalf("reported twice: %v", got)
	}
	if tr.Touch(e, at(6001)) {
		t.Fatal("Touch after expiry reported true")
	}
	if tr.SetTimeout(e, time.Minute, at(6001)) {
		t.Fatal("SetTimeout after expiry reported true")
	}
	if tr.Len() != 0 || tr.Get(7) != nil {
		t.Fatalf("expired session still tracked: len %d", tr.Len())
	}
	// The id can be tracked again; the old entry stays dead.
	e2 := tr.Add(7, 5*time.Second, at(7000))
	if e2 == e || !tr.Touch(e2, at(7001)) || tr.Touch(e, at(7001)) {
		t.Fatal("re-added session confused with the expired entry")
	}
}

func TestTouchMovesBucket(t *testing.T) {
	tr := NewTracker(2 * time.Second)
	e := tr.Add(1, 5*time.Second, at(0)) // +6000
	if !tr.Touch(e, at(500)) || !e.Deadline().Equal(at(6000)) {
		t.Fatalf("touch within the bucket moved it to +%d", e.Deadline().Sub(base).Milliseconds())
	}
	if !tr.Touch(e, at(3000)) || !e.Deadline().Equal(at(10000)) {
		t.Fatalf("touch at +3000: deadline +%d, want +10000", e.Deadline().Sub(base).Milliseconds())
	}
	if got := tr.Expired(at(9999)); len(got) != 0 {
		t.Fatalf("expired from the old bucket: %v", got)
	}
	// Touch never moves a deadline earlier.
	if !tr.Touch(e, at(0)) || !e.Deadline().Equal(at(10000)) {
		t.Fatalf("touch with an older time moved the deadline to +%d", e.Deadline().Sub(base).Milliseconds())
	}
	snap := tr.Snapshot()
	if len(snap) != 1 || !reflect.DeepEqual(snap[at(10000)], []int64{1}) {
		t.Fatalf("Snapshot = %v", snap)
	}
	if got := tr.Expired(at(10000)); !reflect.DeepEqual(got, []int64{1}) {
		t.Fatalf("Expired(+10000) = %v", got)
	}
}

func TestSetTimeout(t *testing.T) {
	tr := NewTracker(time.Second)
	e := tr.Add(1, 30*time.Second, at(0)) // +31000
	if !tr.SetTimeout(e, 2*time.Second, at(500)) {
		t.Fatal("SetTimeout reported false")
	}
	if e.Timeout() != 2*time.Second || !e.Deadline().Equal(at(3000)) {
		t.Fatalf("after shrinking: timeout %v deadline +%d, want 2s +3000", e.Timeout(), e.Deadline().Sub(base).Milliseconds())
	}
	if got := tr.Expired(at(3000)); !reflect.DeepEqual(got, []int64{1}) {
		t.Fatalf("Expired(+3000) = %v", got)
	}
	e = tr.Add(2, time.Second, at(0))
	tr.SetTimeout(e, 10*time.Second, at(0))
	if !e.Deadline().Equal(at(11000)) || len(tr.Snapshot()) != 1 {
		t.Fatalf("after growing: deadline +%d buckets %v", e.Deadline().Sub(base).Milliseconds(), tr.Snapshot())
	}
	// Touch uses the new timeout.
	tr.Touch(e, at(5000))
	if !e.Deadline().Equal(at(16000)) {
		t.Fatalf("touch after SetTimeout: +%d", e.Deadline().Sub(base).Milliseconds())
	}
}

func TestAddRefreshes(t *testing.T) {
	tr := NewTracker(time.Second)
	e := tr.Add(1, 10*time.Second, at(0))
	if again := tr.Add(1, 2*time.Second, at(0)); again != e {
		t.Fatal("Add of a tracked id made a new entry")
	}
	if e.Timeout() != 2*time.Second || !e.Deadline().Equal(at(3000)) || tr.Len() != 1 || len(tr.Snapshot()) != 1 {
		t.Fatalf("refresh: timeout %v deadline +%d len %d", e.Timeout(), e.Deadline().Sub(base).Milliseconds(), tr.Len())
	}
	if tr.Get(1) != e || tr.Get(2) != nil {
		t.Fatal("Get")
	}
}

func TestRemove(t *testing.T) {
	tr := NewTracker(time.Second)
	e := tr.Add(1, time.Second, at(0))
	tr.Add(2, time.Second, at(0))
	tr.Remove(1)
	tr.Remove(1)  // twice is fine
	tr.Remove(99) // unknown is fine
	if tr.Touch(e, at(100)) || tr.Len() != 1 {
		t.Fatalf("removed session: touch true or len %d", tr.Len())
	}
	if got := tr.Expired(at(5000)); !reflect.DeepEqual(got, []int64{2}) {
		t.Fatalf("Expired = %v, want [2]", got)
	}
	if len(tr.Snapshot()) != 0 {
		t.Fatalf("buckets left: %v", tr.Snapshot())
	}
}

func TestBuckets(t *testing.T) {
	tr := NewTracker(time.Second)
	for id := int64(1); id <= 6; id++ {
		tr.Add(id, time.Duration(id%3)*time.Second, at(0)) // 1s,2s,0s,1s,2s,0s
	}
	snap := tr.Snapshot()
	want := map[time.Time][]int64{at(1000): {3, 6}, at(2000): {1, 4}, at(3000): {2, 5}}
	for k := range snap {
		slices.Sort(snap[k])
	}
	if !reflect.DeepEqual(snap, want) {
		t.Fatalf("Snapshot = %v, want %v", snap, want)
	}
	got := tr.Expired(at(2500)) // two buckets at once
	slices.Sort(got)
	if !reflect.DeepEqual(got, []int64{1, 3, 4, 6}) {
		t.Fatalf("Expired(+2500) = %v", got)
	}
	if tr.Len() != 2 {
		t.Fatalf("Len = %d", tr.Len())
	}
}

// TestConcurrent runs adds, touches, removals and expiry sweeps at once (run
// with -race) and checks that every session ends up exactly one of expired
// once, removed, or still tracked.
func TestConcurrent(t *testing.T) {
	tr := NewTracker(10 * time.Millisecond)
	const workers, perWorker = 8, 200
	var (
		mu      sync.Mutex
		expired = make(map[int64]int)
		removed = make(map[int64]bool)
		wg      sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWorker; i++ {
				id := int64(w*perWorker + i)
				now := at(int64(i))
				e := tr.Add(id, 50*time.Millisecond, now)
				for j := 0; j < 3; j++ {
					tr.Touch(e, at(int64(i+j)))
				}
				if i%7 == 0 {
					tr.SetTimeout(e, 20*time.Millisecond, now)
				}
				if i%5 == 0 {
					tr.Remove(id)
					mu.Lock()
					removed[id] = true
					mu.Unlock()
				}
				tr.Get(id)
			}
		}(w)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 300; i++ {
			got := tr.Expired(at(int64(i)))
			mu.Lock()
			for _, id := range got {
				expired[id]++
			}
			mu.Unlock()
			tr.Snapshot()
			tr.Len()
		}
	}()
	wg.Wait()
	for _, id := range tr.Expired(at(1 << 30)) {
		expired[id]++
	}
	if tr.Len() != 0 || len(tr.Snapshot()) != 0 {
		t.Fatalf("after a final sweep: len %d buckets %d", tr.Len(), len(tr.Snapshot()))
	}
	for id := int64(0); id < workers*perWorker; id++ {
		n := expired[id]
		switch {
		case n > 1:
			t.Errorf("session %d expired %d times", id, n)
		case removed[id] && n != 0:
			// Expired before the worker removed it: allowed, once.
		case !removed[id] && n != 1:
			t.Errorf("session %d expired %d times, want 1", id, n)
		}
	}
}

func TestResetAll(t *testing.T) {
	tr := NewTracker(100 * time.Millisecond)
	t0 := time.UnixMilli(1_000_000)
	tr.Add(1, time.Second, t0)
	tr.Add(2, 3*time.Second, t0)
	later := t0.Add(10 * time.Second)
	tr.ResetAll(later)
	if got := tr.Expired(later.Add(900 * time.Millisecond)); len(got) != 0 {
		t.Fatalf("expired %v before the reset deadlines", got)
	}
	if got := tr.Expired(later.Add(1100 * time.Millisecond)); len(got) != 1 || got[0] != 1 {
		t.Fatalf("Expired after 1.1s = %v, want [1]", got)
	}
	if got := tr.IDs(); len(got) != 1 || got[0] != 2 {
		t.Fatalf("IDs() = %v, want [2]", got)
	}
}

// TestUntilNextBucket: waiting UntilNextBucket lands on the end of the
// bucket a session added now with a zero timeout falls in, and there the
// session is expired.
func TestUntilNextBucket(t *testing.T) {
	cases := []struct {
		now  int64 // ms after base (a multiple of the tick)
		want time.Duration
	}{
		{0, 2 * time.Second}, // a bucket's first instant: its end is a tick away
		{1, 1999 * time.Millisecond},
		{1500, 500 * time.Millisecond},
		{1999, time.Millisecond},
		{2000, 2 * time.Second},
	}
	for _, tc := range cases {
		tr := NewTracker(2 * time.Second)
		now := at(tc.now)
		if got := tr.UntilNextBucket(now); got != tc.want {
			t.Errorf("now +%d: UntilNextBucket = %v, want %v", tc.now, got, tc.want)
		}
		e := tr.Add(1, 0, now)
		end := now.Add(tr.UntilNextBucket(now))
		if !e.Deadline().Equal(end) {
			t.Errorf("now +%d: bucket ends at +%d, deadline +%d", tc.now, end.Sub(base).Milliseconds(), e.Deadline().Sub(base).Milliseconds())
		}
		if got := tr.Expired(end.Add(-time.Millisecond)); len(got) != 0 {
			t.Errorf("now +%d: expired %v before the bucket's end", tc.now, got)
		}
		if got := tr.Expired(end); !slices.Equal(got, []int64{1}) {
			t.Errorf("now +%d: expired %v at the bucket's end, want [1]", tc.now, got)
		}
	}
}
