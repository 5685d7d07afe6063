package zk_test

import (
	"testing"

	"github.com/paddockhq/paddock/zk"
)

func init() {
	addServerTests(serverTest{"watch-remove-once-per-event", testWatchRemoveOncePerEvent})
}

// testWatchRemoveOncePerEvent: a watcher registered under several kinds of
// one path gets each "removed" event once, as with ZooKeeper's Java client
// (its removed watchers are sets per event type): one DataWatchRemoved for
// a data and an exist watch, one PersistentWatchRemoved for a persistent and
// a persistent-recursive one.
func testWatchRemoveOncePerEvent(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	root := s.root(t, c)
	p := root + "/p"
	wtCreate(t, c, p)
	w := zk.NewChanWatcher(16)
	if _, _, err := c.GetW(ctx, p, w); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ExistsW(ctx, p, w); err != nil {
		t.Fatal(err)
	}
	opsMust(t, c.AddWatch(ctx, p, w, zk.AddWatchPersistent))
	opsMust(t, c.AddWatch(ctx, p, w, zk.AddWatchPersistentRecursive))
	opsMust(t, c.RemoveWatches(ctx, p, w, zk.WatcherAny, false))
	got := map[zk.EventType]int{}
	wtBarrier(t, c, p)
	for more := true; more; {
		select {
		case e := <-w.C:
			got[e.Type]++
		default:
			more = false
		}
	}
	if got[zk.EventDataWatchRemoved] != 1 || got[zk.EventPersistentWatchRemoved] != 1 || len(got) != 2 {
		t.Fatalf("removed events %v, want one DataWatchRemoved and one PersistentWatchRemoved", got)
	}
}
