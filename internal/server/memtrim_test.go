package server

import (
	"testing"
	"time"
)

// TestMemTrimmer walks the trimmer through snapshots under load and a quiet
// spell: the first snapshot frees at once, one within freeMemoryEvery of a
// free waits, and the wait ends at the first tick after a tick with nothing
// applied, or at a snapshot once freeMemoryEvery has passed.
func TestMemTrimmer(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	var m memTrimmer
	steps := []struct {
		what string
		do   func() bool
		want bool
	}{
		{"first snapshot frees", func() bool { return m.snapshotDone(at(0)) }, true},
		{"tick, nothing pending", func() bool { return m.tick(10, at(1)) }, false},
		{"tick, quiet, nothing pending", func() bool { return m.tick(10, at(2)) }, false},
		{"snapshot 5 s later waits", func() bool { return m.snapshotDone(at(5)) }, false},
		{"tick while writes are applied", func() bool { return m.tick(20, at(6)) }, false},
		{"tick while writes are applied", func() bool { return m.tick(30, at(7)) }, false},
		{"first quiet tick frees", func() bool { return m.tick(30, at(8)) }, true},
		{"the next quiet tick does not free again", func() bool { return m.tick(30, at(9)) }, false},
		{"snapshot 10 s after the free waits", func() bool { return m.snapshotDone(at(18)) }, false},
		{"busy", func() bool { return m.tick(40, at(19)) }, false},
		{"snapshot a minute after the last free frees", func() bool { return m.snapshotDone(at(68.5)) }, true},
		{"and leaves nothing pending", func() bool { return m.tick(40, at(69)) }, false},
	}
	for i, st := range steps {
		if got := st.do(); got != st.want {
			t.Fatalf("step %d (%s): free = %v, want %v", i, st.what, got, st.want)
		}
	}
}
