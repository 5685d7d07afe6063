package raftnode_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/paddockhq/paddock/internal/raftnode"
)

// memNet connects in-process nodes: Send steps messages straight into the
// peer (Step never blocks) and streams snapshots on a goroutine. Links can
// be cut in both directions.
type memNet struct {
	mu    sync.Mutex
	nodes map[uint64]*raftnode.Node
	down  map[uint64]bool
}

func newMemNet() *memNet {
	return &memNet{nodes: make(map[uint64]*raftnode.Node), down: make(map[uint64]bool)}
}

func (n *memNet) set(id uint64, node *raftnode.Node) {
	n.mu.Lock()
	n.nodes[id] = node
	n.mu.Unlock()
}

// isolate cuts (or restores) every link of id.
func (n *memNet) isolate(id uint64, cut bool) {
	n.mu.Lock()
	n.down[id] = cut
	n.mu.Unlock()
}

type memTransport struct {
	net  *memNet
	from uint64
}

func (t *memTransport) Send(msgs []raftpb.Message) {
	t.net.mu.Lock()
	defer t.net.mu.Unlock()
	src := t.net.nodes[t.from]
	for _, m := range msgs {
		dst := t.net.nodes[m.To]
		if dst == nil || t.net.down[m.To] || t.net.down[t.from] {
			if src != nil {
				src.ReportUnreachable(m.To)
			}
			continue
		}
		if m.Type == raftpb.MsgSnap {
			go func() {
				rc, size, err := src.OpenSnapshot(m.Snapshot.Metadata.Index)
				if err == nil {
					err = dst.ReceiveSnapshot(m, rc, size)
					rc.Close()
				}
				src.ReportSnapshot(m.To, err == nil)
			}()
			continue
		}
		dst.Step(m)
	}
}

type member struct {
	id  uint64
	cfg raftnode.Config
	sm  *listSM
	n   *raftnode.Node
}

// startCluster starts voters 1..nv and learners nv+1..nv+nl.
func startCluster(t *testing.T, nv, nl int, snapCount uint64) (*memNet, []*member) {
	t.Helper()
	return startClusterWith(t, nv, nl, snapCount, nil)
}

// startClusterWith is startCluster with each member's configuration passed
// through adjust first (when not nil).
func startClusterWith(t *testing.T, nv, nl int, snapCount uint64, adjust func(*raftnode.Config)) (*memNet, []*member) {
	t.Helper()
	net := newMemNet()
	var voters, learners []uint64
	for i := 1; i <= nv; i++ {
		voters = append(voters, uint64(i))
	}
	for i := nv + 1; i <= nv+nl; i++ {
		learners = append(learners, uint64(i))
	}
	dir := t.TempDir()
	var ms []*member
	for _, id := range append(slices.Clone(voters), learners...) {
		cfg := raftnode.Config{
			ID:           id,
			DataDir:      filepath.Join(dir, fmt.Sprint(id), "data"),
			TickInterval: 10 * time.Millisecond,
			SnapCount:    snapCount,
			Voters:       voters,
			Learners:     learners,
			Transport:    &memTransport{net: net, from: id},
			Logger:       testLogger(t),
		}
		if adjust != nil {
			adjust(&cfg)
		}
		m := &member{id: id, cfg: cfg}
		m.start(t, net)
		ms = append(ms, m)
	}
	return net, ms
}

func (m *member) start(t *testing.T, net *memNet) {
	t.Helper()
	m.sm = newListSM()
	n, err := raftnode.Start(m.cfg, m.sm)
	if err != nil {
		t.Fatalf("start member %d: %v", m.id, err)
	}
	m.n = n
	net.set(m.id, n)
	t.Cleanup(func() { _ = n.Close() })
}

func (m *member) stop(t *testing.T, net *memNet) {
	t.Helper()
	net.set(m.id, nil)
	if err := m.n.Close(); err != nil {
		t.Fatalf("close member %d: %v", m.id, err)
	}
}

// leader waits for a member to lead, among those not excluded.
// otherThan returns the first member of ms that is not m.
func otherThan(ms []*member, m *member) *member {
	for _, o := range ms {
		if o != m {
			return o
		}
	}
	return nil
}

func leader(t *testing.T, ms []*member, skip ...uint64) *member {
	t.Helper()
	var l *member
	eventually(t, "a leader", func() bool {
		for _, m := range ms {
			if slices.Contains(skip, m.id) {
				continue
			}
			if m.n.Status().IsLeader {
				l = m
				return true
			}
		}
		return false
	})
	return l
}

func TestClusterReplicatesFromAnyMember(t *testing.T) {
	_, ms := startCluster(t, 3, 1, 0)
	leader(t, ms)
	// Propose through every member, followers and learner included.
	for i, m := range ms {
		for j := range 5 {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := m.n.WaitLeader(ctx); err != nil {
				t.Fatal(err)
			}
			cancel()
			propose(t, m.n, fmt.Sprintf("m%d-%d", i, j))
		}
	}
	want := ms[0].sm.waitItems(t, 20)
	for _, m := range ms[1:] {
		if got := m.sm.waitItems(t, 20); !slices.Equal(got, want) {
			t.Fatalf("member %d applied %v, member 1 %v", m.id, got, want)
		}
	}
	st := leader(t, ms).n.Status()
	eventually(t, "progress of every member", func() bool {
		st = leader(t, ms).n.Status()
		return len(st.Progress) == 4
	})
	if !st.Progress[4].IsLearner || st.Progress[1].IsLearner {
		t.Fatalf("progress %+v: member 4 should be the only learner", st.Progress)
	}
	if got := ms[3].n.Status(); !got.IsLearner() || got.IsLeader {
		t.Fatalf("learner status %+v", got)
	}
}

func TestClusterLeaderFailover(t *testing.T) {
	net, ms := startCluster(t, 3, 0, 0)
	old := leader(t, ms)
	propose(t, old.n, "before")
	for _, m := range ms {
		m.sm.waitItems(t, 1)
	}
	net.isolate(old.id, true)
	nl := leader(t, ms, old.id)
	propose(t, nl.n, "after")
	for _, m := range ms {
		if m != old {
			m.sm.waitFor(t, "after", func(items []string) bool { return slices.Contains(items, "after") })
		}
	}
	// The old leader steps down (check quorum), then catches up when healed.
	eventually(t, "old leader steps down", func() bool { return !old.n.Status().IsLeader })
	net.isolate(old.id, false)
	old.sm.waitFor(t, "after", func(items []string) bool { return slices.Contains(items, "after") })
}

func TestClusterReadIndex(t *testing.T) {
	_, ms := startCluster(t, 3, 0, 0)
	l := leader(t, ms)
	propose(t, l.n, "x")
	// Propose returns once queued: x is committed when the leader applied it.
	l.sm.waitFor(t, "x", func(items []string) bool { return slices.Contains(items, "x") })
	f := otherThan(ms, l)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Every member asks at once: the leader must tell the requests apart.
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Go(func() {
			if _, err := m.n.ReadIndex(ctx); err != nil {
				t.Errorf("ReadIndex on member %d: %v", m.id, err)
			}
		})
	}
	wg.Wait()
	idx, err := f.n.ReadIndex(ctx)
	if err != nil {
		t.Fatalf("ReadIndex on a follower: %v", err)
	}
	if err := f.n.WaitApplied(ctx, idx); err != nil {
		t.Fatal(err)
	}
	if _, items, _ := f.sm.state(); !slices.Contains(items, "x") {
		t.Fatalf("after ReadIndex %d and WaitApplied the follower has %v, missing x", idx, items)
	}
}

func TestClusterSnapshotCatchUp(t *testing.T) {
	net, ms := startCluster(t, 3, 0, 20)
	l := leader(t, ms)
	lag := otherThan(ms, l)
	lag.stop(t, net)
	// Enough entries that the others snapshot and compact past what the
	// stopped member has (catch-up slack is min(5000, SnapCount)).
	for i := range 200 {
		propose(t, l.n, fmt.Sprintf("e%d", i))
	}
	l.sm.waitItems(t, 200)
	eventually(t, "leader compacts its log", func() bool { return l.n.Status().SnapshotIndex > 100 })
	lag.start(t, net)
	items := lag.sm.waitItems(t, 200)
	if lag.sm.restored == 0 {
		t.Fatalf("the lagging member caught up without a snapshot (items %d)", len(items))
	}
	want := l.sm.waitItems(t, 200)
	if !slices.Equal(items[:200], want[:200]) {
		t.Fatalf("lagging member diverged")
	}
	// It keeps following after the snapshot.
	propose(t, l.n, "last")
	lag.sm.waitFor(t, "last", func(items []string) bool { return slices.Contains(items, "last") })
}

// TestLeaderAppendsBeforeItsOwnSave checks that a leader sends new entries
// to its followers before its own fsync of them returns, so the disks of
// leader and followers work in parallel: with the leader's fsync held, the
// followers still save the entry; the entry commits once released.
func TestLeaderAppendsBeforeItsOwnSave(t *testing.T) {
	hold, release, ms := startHeldCluster(t)
	l := leader(t, ms)
	before := map[uint64]uint64{}
	for _, m := range ms {
		before[m.id] = m.n.WALSyncs()
	}
	hold.Store(l.id)
	propose(t, l.n, "x")
	for _, m := range ms {
		if m == l {
			continue
		}
		eventually(t, fmt.Sprintf("member %d saving the entry while the leader's fsync is held", m.id), func() bool {
			return m.n.WALSyncs() > before[m.id]
		})
	}
	if _, items, _ := l.sm.state(); len(items) != 1 {
		t.Fatalf("the leader applied %v while its save was held", items)
	}
	close(release)
	for _, m := range ms {
		m.sm.waitFor(t, "x", func(items []string) bool { return slices.Contains(items, "x") })
	}
}

// TestQuorumCommitsWhileLeaderFsyncs checks that the leader's own fsync
// does not hold up the group (raft's asynchronous storage writes): with the
// leader's fsync held, it still steps its followers' acknowledgements, so
// the entry commits on the followers' two copies and they apply it; the
// leader applies it only once its own copy is durable.
func TestQuorumCommitsWhileLeaderFsyncs(t *testing.T) {
	hold, release, ms := startHeldCluster(t)
	l := leader(t, ms)
	term := l.n.Term()
	hold.Store(l.id)
	propose(t, l.n, "x")
	for _, m := range ms {
		if m != l {
			m.sm.waitFor(t, "x", func(items []string) bool { return slices.Contains(items, "x") })
		}
	}
	// The same leader, in the same term, committed it: a leader stuck in
	// its fsync would have stopped heartbeating and lost an election.
	for _, m := range ms {
		if got := m.n.Term(); got != term {
			t.Fatalf("member %d is in term %d, was %d: the leadership changed while the leader's fsync was held", m.id, got, term)
		}
	}
	if !l.n.Status().IsLeader {
		t.Fatalf("member %d lost the leadership while its fsync was held", l.id)
	}
	if _, items, _ := l.sm.state(); slices.Contains(items, "x") {
		t.Fatalf("the leader applied x (%v) before its own copy was durable", items)
	}
	close(release)
	l.sm.waitFor(t, "x", func(items []string) bool { return slices.Contains(items, "x") })
}

// startHeldCluster starts 3 members whose WAL fsyncs block, once the
// member's id is stored in hold, until release is closed (or 30 s, past
// eventually's limit), and waits until a first entry is applied everywhere.
func startHeldCluster(t *testing.T) (hold *atomic.Uint64, release chan struct{}, ms []*member) {
	t.Helper()
	hold, release = new(atomic.Uint64), make(chan struct{})
	_, ms = startClusterWith(t, 3, 0, 0, func(cfg *raftnode.Config) {
		id := cfg.ID
		cfg.OnWALSync = func(time.Duration) {
			if hold.Load() == id {
				select {
				case <-release:
				case <-time.After(30 * time.Second):
				}
			}
		}
	})
	propose(t, leader(t, ms).n, "warm")
	for _, m := range ms {
		m.sm.waitItems(t, 1)
	}
	return hold, release, ms
}
