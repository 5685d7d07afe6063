package raftnode_test

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/storage"
)

// slowSnapSM is a listSM whose snapshot writer waits for release.
type slowSnapSM struct {
	*listSM
	started chan struct{} // a token when a snapshot write begins
	release chan struct{} // closed to let snapshot writes go on
}

func (s *slowSnapSM) Snapshot() (func(io.Writer) error, error) {
	write, err := s.listSM.Snapshot()
	if err != nil {
		return nil, err
	}
	return func(w io.Writer) error {
		select {
		case s.started <- struct{}{}:
		default:
		}
		<-s.release
		return write(w)
	}, nil
}

func TestSnapshotDoesNotBlockApply(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.SnapCount = 10
	sm := &slowSnapSM{listSM: newListSM(), started: make(chan struct{}, 1), release: make(chan struct{})}
	n := start(t, cfg, sm)
	released := false
	t.Cleanup(func() {
		if !released {
			close(sm.release)
		}
	})
	for i := range 10 {
		propose(t, n, fmt.Sprintf("a%d", i))
	}
	sm.waitItems(t, 10)
	<-sm.started // the snapshot is being written, and stuck
	for i := range 50 {
		propose(t, n, fmt.Sprintf("b%d", i))
		if i%10 == 9 {
			sm.waitItems(t, 10+i+1)
		}
	}
	if si := n.Status().SnapshotIndex; si != 0 {
		t.Fatalf("snapshot index %d while the only snapshot is still being written", si)
	}
	applied := n.AppliedIndex()
	close(sm.release)
	released = true
	eventually(t, "the snapshot to finish", func() bool { return n.Status().SnapshotIndex > 0 })
	// The slow snapshot holds the index captured when it started, well
	// below what was applied meanwhile (a next one may already be done).
	snaps, err := storage.ListSnapshots(cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(snaps, func(i, j int) bool { return snaps[i].Index < snaps[j].Index })
	if len(snaps) == 0 || snaps[0].Index >= applied-40 {
		t.Fatalf("snapshots %+v: want the first at the index captured when it started, well below %d", snaps, applied)
	}
	// Later snapshots happen again once the slow one is done.
	for i := range 20 {
		propose(t, n, fmt.Sprintf("c%d", i))
		sm.waitItems(t, 60+i+1)
	}
	eventually(t, "a later snapshot", func() bool { return n.Status().SnapshotIndex > applied })
}

// TestSnapLogPercent checks that with SnapLogPercent a snapshot waits, past
// SnapCount entries, until the WAL written since the previous snapshot is
// that percentage of the previous snapshot's size; without it snapshots
// follow SnapCount alone.
func TestSnapLogPercent(t *testing.T) {
	for _, pct := range []uint64{0, 300} {
		t.Run(fmt.Sprint(pct), func(t *testing.T) {
			cfg := testConfig(t, t.TempDir())
			cfg.SnapCount, cfg.SnapLogPercent, cfg.SnapRetainCount = 4, pct, 1000
			sm := newListSM()
			n := start(t, cfg, sm)
			const entries = 80
			for i := range entries {
				propose(t, n, fmt.Sprintf("%03d%s", i, strings.Repeat("x", 97)))
				sm.waitItems(t, i+1)
				// One snapshot at a time: let each finish, and the purge
				// after it (which holds the next one back), so that the
				// gaps measure the policy, not the writer's or the
				// purge's speed on a loaded machine.
				eventually(t, "no snapshot or purge in flight", func() bool { return !n.SnapshotOrPurgeInFlight() })
			}
			perEntry := float64(n.WALStats().BytesWritten) / float64(n.AppliedIndex())
			snaps, err := storage.ListSnapshots(cfg.DataDir)
			if err != nil {
				t.Fatal(err)
			}
			if len(snaps) < 3 {
				t.Fatalf("%d snapshots after %d entries", len(snaps), entries)
			}
			for i := 1; i < len(snaps); i++ {
				gap := snaps[i].Index - snaps[i-1].Index
				fi, err := os.Stat(snaps[i-1].Path)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case pct == 0 && gap > cfg.SnapCount:
					t.Errorf("snapshots at %d and %d: more than SnapCount apart", snaps[i-1].Index, snaps[i].Index)
				case pct > 0 && float64(gap)*perEntry < 0.8*float64(pct)/100*float64(fi.Size()):
					t.Errorf("snapshots at %d and %d: %d entries of ~%.0f WAL bytes after a snapshot of %d bytes",
						snaps[i-1].Index, snaps[i].Index, gap, perEntry, fi.Size())
				}
			}
			if pct > 0 && len(snaps) > 6 {
				t.Errorf("%d snapshots: the log percentage held none back", len(snaps))
			}
		})
	}
}
