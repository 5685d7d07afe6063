package server

import (
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/config"
)

// TestLeaderGoneFastElection stops the leader of a 3-member ensemble whose
// election timeout is 4 s and checks that a new leader is serving well
// before a follower's election timeout could have run out (at least 4 s
// after the last heartbeat): the followers see the leader's streams end and
// its peer port refuse connections, and one of them stands at once.
func TestLeaderGoneFastElection(t *testing.T) {
	const election, heartbeat = 4 * time.Second, 400 * time.Millisecond
	members := startEnsembleWith(t, 3, 0, func(c *config.Config) {
		c.RaftElectionTimeout, c.RaftHeartbeat = election, heartbeat
	})
	var old *Server
	for _, s := range members {
		if s.mode() == "leader" {
			old = s
		}
	}
	if old == nil {
		t.Fatal("no leader")
	}
	start := time.Now()
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	// Without the fast path no follower can stand before election -
	// heartbeat has passed since the kill.
	limit := election - heartbeat - 500*time.Millisecond
	for {
		for _, s := range members {
			if s != old && s.mode() == "leader" && s.serving.Load() {
				t.Logf("new leader %d serving after %v", s.cfg.ServerID, time.Since(start))
				return
			}
		}
		if time.Since(start) > limit {
			t.Fatalf("no new leader within %v of the old one stopping (election timeout %v)", limit, election)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
