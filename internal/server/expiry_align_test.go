package server

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// TestExpiryAtBucketEnd: a session expires when its bucket ends, as
// ZooKeeper's session tracker wakes at each bucket's end, not up to a tick
// later. The server is started three quarters of a tick after a bucket
// boundary, so an expiry check on a tick counted from the server's start
// would come that late; the bound of half a tick leaves room for a slow
// disk's fsync of the session's close.
func TestExpiryAtBucketEnd(t *testing.T) {
	const tick = time.Second
	time.Sleep(tick - time.Duration(time.Now().UnixMilli()%tick.Milliseconds())*time.Millisecond + 3*tick/4)
	s := startServer(t, func(c *configT) {
		c.TickTime = tick
		c.MinSessionTimeout, c.MaxSessionTimeout = 2*tick, 2*tick // the raw client asks for 10 s
	})
	c := redial(t, s.Addr().String(), 0, make([]byte, 16))
	e := s.tracker.Get(c.session)
	if e == nil {
		t.Fatal("the new session is not tracked")
	}
	deadline := e.Deadline()
	// The raw client never pings: the session expires and the server
	// closes the connection.
	c.nc.SetReadDeadline(time.Now().Add(10 * tick))
	_, err := proto.ReadFrame(c.br, nil, 1<<20)
	closed := time.Now()
	if !errors.Is(err, io.EOF) {
		t.Fatalf("read = %v, want the connection closed by the session's expiry", err)
	}
	lag := closed.Sub(deadline)
	t.Logf("deadline %s, connection closed %v after it", deadline.Format("15:04:05.000"), lag)
	if lag < -5*time.Millisecond {
		t.Errorf("the session expired %v before its deadline", -lag)
	}
	if lag > tick/2 {
		t.Errorf("the session expired %v after its deadline, want within half a tick (%v)", lag, tick/2)
	}
}
