package server

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/fsm"
	"github.com/paddockhq/paddock/internal/proto"
)

// TestLostExpiryExpiresAgain makes the expiry loop's first proposal of a
// session's close fail, refused at once or lost afterwards (as a change of
// leader fails the proposals in flight), and checks that the session still
// expires and its ephemeral goes: without tracking it again the tracker
// would never look at it again and the ephemeral would stay for good.
func TestLostExpiryExpiresAgain(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func() (*call, error)
	}{
		{"refused", func() (*call, error) { return nil, errors.New("proposal refused") }},
		{"lost", func() (*call, error) {
			c := &call{done: make(chan struct{})}
			c.res.Err = proto.ErrConnectionLoss
			close(c.done)
			return c, nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var proposals atomic.Int32
			s := startServerHooked(t, func(cfg *config.Config) {
				cfg.TickTime = 50 * time.Millisecond
				cfg.MinSessionTimeout, cfg.MaxSessionTimeout = 100*time.Millisecond, 200*time.Millisecond
			}, func(s *Server) {
				s.expiryPropose = func(ctx context.Context, e *fsm.Entry) (*call, error) {
					if proposals.Add(1) == 1 {
						return tc.fail()
					}
					return s.propose(ctx, e)
				}
			})

			gone := dial(t, s.Addr().String())
			gone.mustCreate("/e", "", proto.FlagEphemeral)
			gone.nc.Close() // no close: the session must expire
			c := dial(t, s.Addr().String())
			deadline := time.Now().Add(10 * time.Second)
			for {
				h, _ := c.call(proto.OpExists, &proto.ExistsRequest{Path: "/e"}, nil)
				if h.Err == proto.ErrNoNode {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the ephemeral is still there after %d expiry proposals", proposals.Load())
				}
				time.Sleep(20 * time.Millisecond)
			}
			if n := proposals.Load(); n != 2 {
				t.Errorf("%d expiry proposals, want 2 (one lost, one applied)", n)
			}
		})
	}
}
