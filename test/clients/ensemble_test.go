package clients_test

import (
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
)

// TestClientsEnsemble runs every scripted session against a three-member
// Paddock ensemble. Each session talks to one member, and the sessions are
// spread over the members so that both followers (which forward writes to
// the leader and answer once they have applied them) and the leader serve
// them. A session gets one member's address, not the ensemble's connect
// string: the scripts check one client's writes through another client,
// which ZooKeeper guarantees only on the same server (different servers
// are sequentially consistent, not linearizable, without a sync).
func TestClientsEnsemble(t *testing.T) {
	e := zktest.StartPaddockEnsemble(t, zktest.EnsembleOptions{})
	leader := e.Leader(t, 30*time.Second)
	var members []*zktest.Process // followers first
	for _, p := range e.Members {
		if p != leader {
			members = append(members, p)
		}
	}
	members = append(members, leader)
	next := 0
	member := func() *zktest.Process {
		p := members[next%len(members)]
		next++
		return p
	}
	for _, sc := range scripts() {
		p := member()
		t.Run(sc.name, func(t *testing.T) {
			t.Logf("%s session through member %d (%s)", sc.name, e.ID(p), p.Addr)
			runScript(t, sc, p)
		})
	}
	p := member()
	t.Run("gozk", func(t *testing.T) {
		t.Logf("go-zk session through member %d (%s)", e.ID(p), p.Addr)
		runGoZKSession(t, p.Addr)
	})
	if got := e.Leader(t, 30*time.Second); got != leader {
		t.Errorf("the leader changed from member %d to %d during the sessions", e.ID(leader), e.ID(got))
	}
}
