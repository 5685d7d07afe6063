package session

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestTouchRaceNeverMovesEarlier: two Touches of one session race (a
// client's own connection and a follower's forwarded touch, onApp): the
// one with the earlier time passes the lock-free check, then the later
// one moves the deadline first. The earlier one must not then move the
// deadline back: Touch's contract is that it never moves a deadline
// earlier, and a deadline moved back expires a live session early.
func TestTouchRaceNeverMovesEarlier(t *testing.T) {
	tr := NewTracker(2 * time.Second)
	e := tr.Add(1, 5*time.Second, at(0)) // +6000
	early, late := at(3000), at(9000)    // buckets +10000 and +16000

	tr.mu.Lock()
	done := make(chan bool)
	go func() { done <- tr.Touch(e, early) }()
	// Wait, bounded, until that Touch is past its lock-free check and
	// waits for the lock.
	deadline := time.Now().Add(10 * time.Second)
	for !touchWaitsForLock() {
		if time.Now().After(deadline) {
			tr.mu.Unlock()
			t.Fatal("the Touch never reached the lock")
		}
		time.Sleep(time.Millisecond)
	}
	// The later Touch wins the lock first.
	tr.move(e, tr.roundUp(late.Add(e.Timeout())))
	tr.mu.Unlock()

	select {
	case ok := <-done:
		if !ok {
			t.Fatal("Touch reported an untracked session")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Touch did not return")
	}
	if got := e.Deadline(); !got.Equal(at(16000)) {
		t.Fatalf("deadline +%d after the racing touches, want +16000 (the later touch's)",
			got.Sub(base).Milliseconds())
	}
	if got := tr.Expired(at(15999)); len(got) != 0 {
		t.Fatalf("session expired at +15999 after a touch at +9000 with a 5s timeout: %v", got)
	}
}

// touchWaitsForLock reports whether some goroutine is in Tracker.Touch
// waiting for a mutex.
func touchWaitsForLock() bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "(*Tracker).Touch") && strings.Contains(g, "sync.(*Mutex).Lock") {
			return true
		}
	}
	return false
}

// TestSubMillisecondTick: NewTracker replaces a tick <= 0 by a second but
// took any positive tick; one under a millisecond made every Add and Touch
// divide by zero.
func TestSubMillisecondTick(t *testing.T) {
	for _, tick := range []time.Duration{time.Nanosecond, 500 * time.Microsecond} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("tick %v: %v", tick, r)
				}
			}()
			tr := NewTracker(tick)
			e := tr.Add(1, 5*time.Millisecond, at(0))
			if d := e.Deadline(); d.Before(at(5)) || d.After(at(6)) {
				t.Errorf("tick %v: deadline +%v, want within (+5ms, +6ms]", tick, d.Sub(base))
			}
			if !tr.Touch(e, at(1)) {
				t.Errorf("tick %v: Touch reported an untracked session", tick)
			}
			if got := tr.Expired(at(7)); len(got) != 1 || got[0] != 1 {
				t.Errorf("tick %v: Expired(+7ms) = %v, want [1]", tick, got)
			}
		}()
	}
}
