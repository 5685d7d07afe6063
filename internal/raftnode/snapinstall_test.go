package raftnode_test

import (
	"fmt"
	"testing"

	"github.com/paddockhq/paddock/internal/raftnode"
)

// TestOwnSnapshotFinishingAfterInstallKeepsNewerIndex has a follower's own
// snapshot still being written when it installs a newer one from the
// leader; when its own then finishes, the node must not take it for its
// newest snapshot: SnapshotIndex stays at the installed one.
func TestOwnSnapshotFinishingAfterInstallKeepsNewerIndex(t *testing.T) {
	net, ms := startCluster(t, 3, 0, 20)
	l := leader(t, ms)
	f := otherThan(ms, l)
	// Restart the follower with a state machine whose snapshots wait.
	f.stop(t, net)
	sm := &slowSnapSM{listSM: newListSM(), started: make(chan struct{}, 1), release: make(chan struct{})}
	released := false
	n, err := raftnode.Start(f.cfg, sm)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !released {
			close(sm.release)
		}
		_ = n.Close()
	})
	f.n, f.sm = n, sm.listSM
	net.set(f.id, n)

	// One at a time, so that the follower keeps up and snapshots itself
	// (the leader's snapshots do not compact past it).
	eventually(t, "the follower to catch up", func() bool { return n.AppliedIndex() >= l.n.AppliedIndex() })
	for i := range 25 {
		propose(t, l.n, fmt.Sprintf("a%d", i))
		sm.waitItems(t, i+1)
	}
	sm.mu.Lock()
	restored := sm.restored
	sm.mu.Unlock()
	if restored != 0 {
		t.Fatal("the follower fell behind and installed a snapshot already")
	}
	<-sm.started // the follower's own snapshot is being written, and held
	own := n.AppliedIndex()

	net.isolate(f.id, true)
	for i := range 200 {
		propose(t, l.n, fmt.Sprintf("b%d", i))
	}
	l.sm.waitItems(t, 225)
	eventually(t, "the leader to compact past the follower", func() bool {
		return l.n.FirstIndex() > own+1
	})
	net.isolate(f.id, false)
	eventually(t, "the follower to install the leader's snapshot", func() bool {
		return n.Status().SnapshotIndex > own
	})
	installed := n.Status().SnapshotIndex

	close(sm.release)
	released = true
	eventually(t, "the follower's own snapshot to finish", func() bool { return !n.SnapshotInFlight() })
	if got := n.Status().SnapshotIndex; got < installed {
		t.Fatalf("SnapshotIndex went back from %d (installed from the leader) to %d (the follower's own, older, snapshot)", installed, got)
	}
}
