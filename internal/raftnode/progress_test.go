package raftnode_test

import (
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/raftnode"
)

// TestLeaderKeepsFollowersActive: on a healthy cluster the leader's Status
// shows every follower active at every moment. raft's quorum check forgets
// the members' activity once an election timeout, in a tick, and relearns
// it from their next answers; the status must not show them inactive in
// between (mntr's zk_synced_followers and zk_learners dropped to 0 for a
// tick each election timeout).
func TestLeaderKeepsFollowersActive(t *testing.T) {
	// An election timeout of 30 ticks of 10 ms: a follower really goes
	// quiet for that long only on a starved machine. Watch four.
	_, ms := startClusterWith(t, 3, 0, 0, func(c *raftnode.Config) { c.ElectionTicks = 30 })
	l := leader(t, ms)
	end := time.Now().Add(1200 * time.Millisecond)
	samples := 0
	for time.Now().Before(end) {
		st := l.n.Status()
		if !st.IsLeader {
			t.Fatal("the leader lost its leadership on a healthy cluster")
		}
		for id, p := range st.Progress {
			if id != l.id && !p.Active {
				t.Fatalf("after %d samples: member %d shown inactive: %+v", samples, id, st.Progress)
			}
		}
		samples++
		time.Sleep(time.Millisecond)
	}
}
