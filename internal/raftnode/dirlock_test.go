package raftnode_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/raftnode"
	"github.com/paddockhq/paddock/internal/storage"
)

// TestSnapshotDirLocked checks that a node holds its snapshot directory
// while it runs: a second node on the same DataDir with a LogDir of its own
// is refused, naming the directory, until the first is closed; and a node
// whose DataDir is also its LogDir takes both locks without refusing
// itself.
func TestSnapshotDirLocked(t *testing.T) {
	dir := t.TempDir()
	cfgA := testConfig(t, dir)
	cfgA.LogDir = filepath.Join(dir, "logA")
	a := start(t, cfgA, newListSM())
	propose(t, a, "a")

	cfgB := testConfig(t, dir)
	cfgB.LogDir = filepath.Join(dir, "logB")
	if b, err := raftnode.Start(cfgB, newListSM()); err == nil {
		_ = b.Close()
		t.Fatal("a second node started on the snapshot directory of a running one")
	} else if !errors.Is(err, storage.ErrLocked) || !strings.Contains(err.Error(), cfgA.DataDir) {
		t.Fatalf("second node on the same DataDir: Start = %v, want ErrLocked naming %s", err, cfgA.DataDir)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// Closing released the snapshot directory, and the refused Start
	// released the WAL directory it had locked.
	b := start(t, cfgB, newListSM())
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	same := testConfig(t, t.TempDir())
	same.LogDir = same.DataDir
	sm := newListSM()
	c := start(t, same, sm)
	propose(t, c, "c")
	sm.waitItems(t, 1)
	if n, err := raftnode.Start(same, newListSM()); err == nil {
		_ = n.Close()
		t.Fatal("a second node started on the directory of a running one")
	} else if !errors.Is(err, storage.ErrLocked) {
		t.Fatalf("second node on the same directory: Start = %v, want ErrLocked", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	sm = newListSM()
	c = start(t, same, sm) // restarts on its own directory
	sm.waitItems(t, 1)
}
