package server

import (
	"log/slog"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/config"
)

// TestLeaderGoneFastElection stops the leader of a 3-member ensemble whose
// election timeout is 4 s and checks that a follower stood for election at
// once because the leader's streams ended and its peer port refused
// connections, rather than after its election timeout, and that a new
// leader serves. (How much sooner is for the failover benchmark:
// scripts/bench-vs-zookeeper.sh, docs/benchmarks.md.)
func TestLeaderGoneFastElection(t *testing.T) {
	const election, heartbeat = 4 * time.Second, 400 * time.Millisecond
	sink := &logSink{}
	members := startEnsembleLogged(t, 3, 0, func(c *config.Config) {
		c.RaftElectionTimeout, c.RaftHeartbeat = election, heartbeat
	}, slog.New(slog.NewJSONHandler(sink, nil)))
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
	sink.waitLog(t, "the leader's process is gone; standing for election at once", nil)
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, s := range members {
			if s != old && s.mode() == "leader" && s.serving.Load() {
				t.Logf("new leader %d serving after %v", s.cfg.ServerID, time.Since(start))
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no new leader serving")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
