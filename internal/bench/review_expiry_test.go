package bench

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
)

// TestSessionsExpire: a stall longer than the session timeout expires every
// session of the run, the admin session's too. The closed loops stop long
// before the window's end: the run must fail, not report the figures of a
// shorter window as a good run's. The server is still there afterwards, so
// the run's root must still be deleted (from a new session), not left
// behind.
func TestSessionsExpire(t *testing.T) {
	p := zktest.StartPaddock(t, zktest.PaddockOptions{TickTime: 500}) // sessions of 1 s allowed
	proxy := startStallProxy(t, p.Addr)
	c := connect(t, p.Addr)
	for _, w := range []string{WorkloadEphemeralChurn, WorkloadWatchFanout} {
		t.Run(w, func(t *testing.T) {
			cfg := DefaultConfig(proxy.addr(), w)
			cfg.Sessions, cfg.Inflight, cfg.Watchers = 2, 4, 2
			cfg.Duration, cfg.SessionTimeout = 3*time.Second, time.Second
			cfg.ProgressInterval = 20 * time.Millisecond
			cfg.Progress = &onFirstWrite{f: func() { proxy.stall(2500 * time.Millisecond) }}
			res, err := Run(testCtx(t), cfg)
			if !errors.Is(err, errEndedEarly) || res != nil {
				t.Errorf("Run = %+v, %v; want no result and %v", res, err, errEndedEarly)
			}
			children, _, err := c.Children(testCtx(t), "/")
			if err != nil {
				t.Fatal(err)
			}
			for _, ch := range children {
				if strings.HasPrefix(ch, "bench-") {
					t.Errorf("/%s left behind", ch)
				}
			}
		})
	}
}
