package server

import (
	"fmt"
	"log/slog"
	"testing"
	"time"
)

// TestExpiryAtBucketEnd: a session expires when its bucket ends, as
// ZooKeeper's session tracker wakes at each bucket's end, not up to a tick
// later. The server is started three quarters of a tick after a bucket
// boundary, so an expiry check on a tick counted from the server's start
// would come that late. The time of the expiry's log line is what is
// measured (before the close is proposed, so a slow disk does not count);
// half a tick leaves room for a busy machine's timer.
func TestExpiryAtBucketEnd(t *testing.T) {
	const tick = time.Second
	time.Sleep(tick - time.Duration(time.Now().UnixMilli()%tick.Milliseconds())*time.Millisecond + 3*tick/4)
	s, logs := startLogged(t, slog.LevelInfo, func(c *configT) {
		c.TickTime = tick
		c.MinSessionTimeout, c.MaxSessionTimeout = 2*tick, 2*tick // the raw client asks for 10 s
	})
	c := redial(t, s.Addr().String(), 0, make([]byte, 16))
	e := s.tracker.Get(c.session)
	if e == nil {
		t.Fatal("the new session is not tracked")
	}
	deadline := e.Deadline()
	// The raw client never pings: the session expires.
	want := map[string]string{"session": fmt.Sprintf("0x%x", c.session)}
	logs.waitLog(t, "expiring session", want)
	at, err := time.Parse(time.RFC3339Nano, logs.find("expiring session", want)["time"].(string))
	if err != nil {
		t.Fatal(err)
	}
	lag := at.Sub(deadline)
	t.Logf("deadline %s, expired %v after it", deadline.Format("15:04:05.000"), lag)
	if lag < 0 {
		t.Errorf("the session expired %v before its deadline", -lag)
	}
	if lag > tick/2 {
		t.Errorf("the session expired %v after its deadline, want within half a tick (%v)", lag, tick/2)
	}
}
