package raftnode_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/paddockhq/paddock/internal/raftnode"
)

// lossyTransport drops the next messages of chosen types that its member
// sends, as a stream that breaks with them in its buffer, or a full queue,
// does; everything else goes through.
type lossyTransport struct {
	inner raftnode.Transport
	drop  [raftpb.MsgForgetLeader + 1]atomic.Int32 // how many of each type to drop
}

func (t *lossyTransport) Send(msgs []raftpb.Message) {
	var keep []raftpb.Message
	for _, m := range msgs {
		if int(m.Type) < len(t.drop) && t.drop[m.Type].Load() > 0 && t.drop[m.Type].Add(-1) >= 0 {
			continue
		}
		keep = append(keep, m)
	}
	t.inner.Send(keep)
}

// TestReadIndexSurvivesLostMessage checks that a ReadIndex (ZooKeeper's
// sync) whose request to the leader, or whose answer, was lost on the
// network is asked again rather than waited for until the caller gives
// up: raft never retransmits either, and no leader change happens to fail
// the call.
func TestReadIndexSurvivesLostMessage(t *testing.T) {
	for _, lost := range []raftpb.MessageType{raftpb.MsgReadIndex, raftpb.MsgReadIndexResp} {
		t.Run(lost.String(), func(t *testing.T) {
			lossy := map[uint64]*lossyTransport{}
			_, ms := startClusterWith(t, 3, 0, 0, func(cfg *raftnode.Config) {
				lt := &lossyTransport{inner: cfg.Transport}
				lossy[cfg.ID] = lt
				cfg.Transport = lt
			})
			l := leader(t, ms)
			propose(t, l.n, "x")
			l.sm.waitFor(t, "x", func(items []string) bool { return slices.Contains(items, "x") })
			f := otherThan(ms, l)
			sender := f.id // the follower asks the leader
			if lost == raftpb.MsgReadIndexResp {
				sender = l.id // the leader answers the follower
			}
			lossy[sender].drop[lost].Store(1)
			term := l.n.Term()

			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			idx, err := f.n.ReadIndex(ctx)
			if err != nil {
				t.Fatalf("ReadIndex on follower %d after one lost %v: %v", f.id, lost, err)
			}
			if n := lossy[sender].drop[lost].Load(); n > 0 {
				t.Fatalf("the %v was not sent (still %d to drop)", lost, n)
			}
			if got := l.n.Term(); got != term || !l.n.Status().IsLeader {
				t.Fatalf("the leadership changed (term %d, was %d): the test wants the same leader", got, term)
			}
			if err := f.n.WaitApplied(ctx, idx); err != nil {
				t.Fatal(err)
			}
			if _, items, _ := f.sm.state(); !slices.Contains(items, "x") {
				t.Fatalf("after ReadIndex %d the follower has %v, missing x", idx, items)
			}
		})
	}
}
