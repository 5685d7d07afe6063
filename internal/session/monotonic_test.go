package session

import (
	"strings"
	"testing"
	"time"
	"unsafe"
)

// timeRep is time.Time's representation: with a monotonic clock reading
// (the top bit of wall), wall holds 33 bits of seconds since 1885 above 30
// bits of nanoseconds, and ext the monotonic reading.
type timeRep struct {
	wall uint64
	ext  int64
	loc  *time.Location
}

// wallStepped returns what time.Now would have returned at the instant of
// now had the system clock been stepped by step (whole seconds) meanwhile:
// the same monotonic reading, a wall clock step apart. Go offers no way to
// build such a time (Add moves both clocks), so it edits the representation;
// it checks that the result is that time, and fails the test if Go's
// representation has changed (the test must then be rewritten, not lost).
func wallStepped(t *testing.T, now time.Time, step time.Duration) time.Time {
	t.Helper()
	if step%time.Second != 0 {
		t.Fatalf("step %v is not whole seconds", step)
	}
	var r timeRep
	if unsafe.Sizeof(now) != unsafe.Sizeof(r) || !strings.Contains(now.String(), " m=") {
		t.Fatal("time.Time's representation is not the one this test knows: rewrite wallStepped")
	}
	r = *(*timeRep)(unsafe.Pointer(&now))
	r.wall += uint64(int64(step/time.Second)) << 30
	got := *(*time.Time)(unsafe.Pointer(&r))
	if got.Round(0).Sub(now.Round(0)) != step || got.Sub(now) != 0 || !strings.Contains(got.String(), " m=") {
		t.Fatalf("could not build a time with a stepped wall clock: %v from %v; rewrite wallStepped", got, now)
	}
	return got
}

// TestWallClockStep checks that deadlines follow the monotonic clock: a step
// of the system clock, forward or back, by far more than the timeout, does
// not expire a session early or keep it late (ZOOKEEPER-1366). The times
// are built as time.Now would return them across such a step (wallStepped).
func TestWallClockStep(t *testing.T) {
	tr := NewTracker(100 * time.Millisecond)
	now := time.Now()
	e := tr.Add(1, time.Second, now)
	deadline := e.Deadline()

	forward := wallStepped(t, now.Add(10*time.Millisecond), time.Hour)
	if got := tr.Expired(forward); len(got) != 0 {
		t.Fatalf("the wall clock stepped forward an hour 10ms after the session was touched: expired %v", got)
	}
	// 10ms later, the deadline moves at most to the next bucket.
	if !tr.Touch(e, forward) {
		t.Fatal("touch across a forward step reported the session gone")
	}
	if d := e.Deadline().Sub(deadline); d < 0 || d > 100*time.Millisecond {
		t.Fatalf("touch 10ms later across a forward step moved the deadline by %v", d)
	}

	// Stepped back: the session still expires once its timeout has passed
	// (here, 2s after it was touched, by the monotonic clock).
	back := wallStepped(t, now.Add(2*time.Second), -time.Hour)
	if got := tr.Expired(back); len(got) != 1 || got[0] != 1 {
		t.Fatalf("2s after the touch, with the wall clock stepped back an hour: expired %v, want [1]", got)
	}
}
