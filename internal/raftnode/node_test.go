package raftnode_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/raftnode"
	"github.com/paddockhq/paddock/internal/storage"
)

func testConfig(t testing.TB, dir string) raftnode.Config {
	return raftnode.Config{
		ID:           1,
		DataDir:      filepath.Join(dir, "data"),
		LogDir:       filepath.Join(dir, "log"),
		TickInterval: 10 * time.Millisecond,
		Logger:       testLogger(t),
	}
}

func start(t testing.TB, cfg raftnode.Config, sm raftnode.StateMachine) *raftnode.Node {
	t.Helper()
	n, err := raftnode.Start(cfg, sm)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = n.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := n.WaitLeader(ctx); err != nil {
		t.Fatalf("WaitLeader: %v", err)
	}
	return n
}

func propose(t testing.TB, n *raftnode.Node, data string) {
	t.Helper()
	if err := n.Propose(context.Background(), []byte(data), nil); err != nil {
		t.Fatalf("Propose(%q): %v", data, err)
	}
}

// proposeConcurrently has each of g goroutines propose "<prefix>g<i>-<j>"
// for j in 0..per-1, in order, and returns how many were proposed.
func proposeConcurrently(t testing.TB, n *raftnode.Node, prefix string, g, per int) int {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, g)
	for i := range g {
		wg.Go(func() {
			for j := range per {
				if err := n.Propose(context.Background(), fmt.Appendf(nil, "%sg%d-%d", prefix, i, j), nil); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Propose: %v", err)
	}
	return g * per
}

// checkOrder checks that items holds every "<prefix>g<i>-<j>" exactly once
// and each goroutine's proposals in the order it made them.
func checkOrder(t testing.TB, items []string, prefix string, g, per int) {
	t.Helper()
	next := make([]int, g)
	seen := 0
	for _, it := range items {
		rest, ok := strings.CutPrefix(it, prefix+"g")
		if !ok {
			continue
		}
		var i, j int
		if _, err := fmt.Sscanf(rest, "%d-%d", &i, &j); err != nil || i >= g {
			t.Fatalf("unexpected item %q", it)
		}
		if j != next[i] {
			t.Fatalf("goroutine %d: applied %d, expected %d next", i, j, next[i])
		}
		next[i]++
		seen++
	}
	if seen != g*per {
		t.Fatalf("applied %d proposals, want %d", seen, g*per)
	}
}

func TestConcurrentProposalsAppliedInOneOrder(t *testing.T) {
	sm := newListSM()
	n := start(t, testConfig(t, t.TempDir()), sm)
	const g, per = 16, 40
	proposeConcurrently(t, n, "", g, per)
	items := sm.waitItems(t, g*per)
	checkOrder(t, items, "", g, per)
	applied, _, err := sm.state()
	if err != nil {
		t.Fatal(err)
	}
	st := n.Status()
	if !st.IsLeader || st.Lead != 1 || st.ID != 1 || st.Applied != applied || st.Commit < applied ||
		st.LastIndex < applied || st.Term == 0 {
		t.Fatalf("status %+v, state machine applied %d", st, applied)
	}
	if n.AppliedIndex() != applied {
		t.Fatalf("AppliedIndex %d, state machine %d", n.AppliedIndex(), applied)
	}
}

func TestGroupCommit(t *testing.T) {
	sm := newListSM()
	n := start(t, testConfig(t, t.TempDir()), sm)
	before := n.WALSyncs()
	const g, per = 64, 20
	total := proposeConcurrently(t, n, "", g, per)
	sm.waitItems(t, total)
	syncs := n.WALSyncs() - before
	t.Logf("%d entries, %d fsyncs", total, syncs)
	if syncs == 0 || syncs >= uint64(total)/2 {
		t.Fatalf("%d fsyncs for %d concurrently proposed entries: batches are not shared", syncs, total)
	}
}

func TestRestartAfterClose(t *testing.T) {
	dir := t.TempDir()
	sm := newListSM()
	n := start(t, testConfig(t, dir), sm)
	proposeConcurrently(t, n, "a", 4, 25)
	want := sm.waitItems(t, 100)
	appliedBefore := n.AppliedIndex()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	sm2 := newListSM()
	n2 := start(t, testConfig(t, dir), sm2)
	got := sm2.waitItems(t, 100)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("after restart the state machine has %v, want %v", got, want)
	}
	if sm2.restored != 0 {
		t.Fatalf("restored a snapshot at %d; none should exist", sm2.restored)
	}
	eventually(t, "the new leader's entry to apply", func() bool { return n2.AppliedIndex() > appliedBefore })
	proposeConcurrently(t, n2, "b", 4, 25)
	items := sm2.waitItems(t, 200)
	checkOrder(t, items, "a", 4, 25)
	checkOrder(t, items, "b", 4, 25)
	if _, _, err := sm2.state(); err != nil {
		t.Fatal(err)
	}
}

func TestSnapshotCompactionAndRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.SnapCount = 50
	cfg.SnapRetainCount = 3
	cfg.WALSegmentBytes = 2048
	sm := newListSM()
	n := start(t, cfg, sm)
	firstSegments := n.WALSegments()
	// Wait for each ten to apply, or raft batches them all into one Ready.
	for i := range 400 {
		propose(t, n, fmt.Sprintf("x%d", i))
		if i%10 == 9 {
			sm.waitItems(t, i+1)
		}
	}
	eventually(t, "a snapshot near the end of the log", func() bool { return n.Status().SnapshotIndex >= 350 })
	st := n.Status()
	if fi := n.FirstIndex(); fi <= 1 || fi > st.SnapshotIndex {
		t.Fatalf("raft's memory log starts at %d with snapshot %d: not compacted", fi, st.SnapshotIndex)
	}
	// Old snapshots and segments are deleted on a goroutine of their own,
	// after the snapshot is recorded: three kept, and maybe one more
	// written since the last purge.
	var snaps []storage.SnapshotInfo
	eventually(t, "old snapshots purged", func() bool {
		var err error
		if snaps, err = storage.ListSnapshots(cfg.DataDir); err != nil {
			t.Fatal(err)
		}
		return len(snaps) == 3 || len(snaps) == 4
	})
	var segs []string
	eventually(t, fmt.Sprintf("the first WAL segment released (%d segments at start)", firstSegments), func() bool {
		segs, _ = filepath.Glob(filepath.Join(cfg.LogDir, "*.wal"))
		return len(segs) > 0 && !strings.HasPrefix(filepath.Base(segs[0]), "0000000000000000-")
	})
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	// A snapshot may have been finishing during Close.
	snaps, err := storage.ListSnapshots(cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}

	// Restart: the newest snapshot, then the WAL after it.
	sm2 := newListSM()
	n2 := start(t, cfg, sm2)
	if sm2.restored != snaps[len(snaps)-1].Index {
		t.Fatalf("restored snapshot %d, want the newest, %d", sm2.restored, snaps[len(snaps)-1].Index)
	}
	items := sm2.waitItems(t, 400)
	for i, it := range items {
		if it != fmt.Sprintf("x%d", i) {
			t.Fatalf("item %d is %q after restart", i, it)
		}
	}
	for i := 400; i < 430; i++ {
		propose(t, n2, fmt.Sprintf("x%d", i))
		if i%10 == 9 {
			sm2.waitItems(t, i+1)
		}
	}
	if err := n2.Close(); err != nil {
		t.Fatal(err)
	}

	// Damage the newest snapshot: the next older one and a longer replay.
	snaps, err = storage.ListSnapshots(cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	newest := snaps[len(snaps)-1]
	b, err := os.ReadFile(newest.Path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(newest.Path, b, 0o640); err != nil {
		t.Fatal(err)
	}
	sm3 := newListSM()
	start(t, cfg, sm3)
	if sm3.restored == 0 || sm3.restored >= newest.Index {
		t.Fatalf("restored snapshot %d, want one older than the damaged %d", sm3.restored, newest.Index)
	}
	items = sm3.waitItems(t, 430)
	for i, it := range items {
		if it != fmt.Sprintf("x%d", i) {
			t.Fatalf("item %d is %q after falling back", i, it)
		}
	}
	if _, _, err := sm3.state(); err != nil {
		t.Fatal(err)
	}
}

func TestProposeErrors(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.MaxProposalBytes = 100
	n := start(t, cfg, newListSM())
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, raftnode.ErrEmptyProposal},
		{"too large", make([]byte, 101), raftnode.ErrProposalTooLarge},
		{"at the limit", make([]byte, 100), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := n.Propose(context.Background(), tt.data, nil); !errors.Is(err, tt.want) {
				t.Fatalf("Propose = %v, want %v", err, tt.want)
			}
		})
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Propose(context.Background(), []byte("late"), nil); !errors.Is(err, raftnode.ErrStopped) {
		t.Fatalf("Propose after Close = %v, want ErrStopped", err)
	}
	if err := n.WaitLeader(context.Background()); !errors.Is(err, raftnode.ErrStopped) {
		t.Fatalf("WaitLeader after Close = %v, want ErrStopped", err)
	}
	select {
	case <-n.Done():
	default:
		t.Fatal("Done not closed after Close")
	}
	if n.Err() != nil {
		t.Fatalf("Err after a clean Close = %v", n.Err())
	}
}

func TestStartRefusesLockedDirectory(t *testing.T) {
	dir := t.TempDir()
	start(t, testConfig(t, dir), newListSM())
	// A snapshot the running node is writing: the second Start must not
	// take it for a crash's leftover and delete it before it finds the
	// directory locked.
	writing := filepath.Join(testConfig(t, dir).DataDir, "0000000000000009-0000000000000001.snap.tmp.123")
	if err := os.WriteFile(writing, []byte("being written"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := raftnode.Start(testConfig(t, dir), newListSM()); err == nil || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("second Start on one directory = %v, want a lock error", err)
	}
	if _, err := os.Stat(writing); err != nil {
		t.Fatalf("the refused Start removed the running node's snapshot in progress: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     raftnode.Config
		wantErr string
	}{
		{"minimal", raftnode.Config{ID: 1, DataDir: "/x"}, ""},
		{"no id", raftnode.Config{DataDir: "/x"}, "ID"},
		{"no data dir", raftnode.Config{ID: 1}, "DataDir"},
		{"tiny tick", raftnode.Config{ID: 1, DataDir: "/x", TickInterval: time.Microsecond}, "TickInterval"},
		{"negative proposal size", raftnode.Config{ID: 1, DataDir: "/x", MaxProposalBytes: -1}, "MaxProposalBytes"},
		{"negative segment size", raftnode.Config{ID: 1, DataDir: "/x", WALSegmentBytes: -1}, "WALSegmentBytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate = %v, want an error about %s", err, tt.wantErr)
			}
		})
	}
}

func BenchmarkProposeApply(b *testing.B) {
	cfg := testConfig(b, b.TempDir())
	cfg.Logger = nil
	sm := newListSM()
	n := start(b, cfg, sm)
	data := []byte(strings.Repeat("p", 128))
	_, base, _ := sm.state()
	syncs := n.WALSyncs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := n.Propose(context.Background(), data, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
	sm.waitItems(b, len(base)+b.N)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/float64(max(n.WALSyncs()-syncs, 1)), "entries/fsync")
}

// TestSnapshotAfterPurge: entries applied while old snapshots were being
// purged (no snapshot starts meanwhile) get their snapshot once the purge
// ends, even when no more entries come to trigger one.
func TestSnapshotAfterPurge(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.SnapCount = 20
	sm := newListSM()
	n := start(t, cfg, sm)
	release := make(chan struct{})
	n.HoldPurges(release)
	for i := range 200 {
		propose(t, n, fmt.Sprintf("p%d", i))
		if i%10 == 9 {
			sm.waitItems(t, i+1)
		}
	}
	eventually(t, "the first snapshot", func() bool { return n.Status().SnapshotIndex > 0 })
	if idx := n.Status().SnapshotIndex; idx >= 150 {
		t.Fatalf("snapshot at %d while the first purge was held: the hold did not hold", idx)
	}
	close(release)
	eventually(t, "a snapshot of the entries applied during the purge", func() bool {
		return n.Status().SnapshotIndex >= 180
	})
}
