package datatool

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/raftnode"
	"github.com/paddockhq/paddock/internal/storage"
)

// TestPurgeSnapshotDirLocked checks that purge respects the lock on the
// snapshot directory: a server running on the same dataDir with a
// dataLogDir of its own leaves the WAL directory purge is given unlocked,
// and purge must still refuse to delete its snapshots.
func TestPurgeSnapshotDirLocked(t *testing.T) {
	dir := t.TempDir()
	dirs := DataDirs(filepath.Join(dir, "data"), filepath.Join(dir, "stopped"))
	if err := os.MkdirAll(dirs.WAL, 0o750); err != nil { // a stopped server's WAL directory
		t.Fatal(err)
	}
	cfg := fixtureConfig(filepath.Join(dir, "data"))
	cfg.LogDir = filepath.Join(dir, "running", WALSubdir)
	n, err := raftnode.Start(cfg, newFSMSM())
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := n.WaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := Purge(&out, dirs, PurgeOptions{Retain: 3}); !errors.Is(err, storage.ErrLocked) ||
		!strings.Contains(err.Error(), "a server is using "+dirs.Snap) {
		t.Fatalf("purge of a running server's snapshot directory: %v\n%s", err, out.String())
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Purge(&out, dirs, PurgeOptions{Retain: 3}); err != nil {
		t.Fatalf("purge after the server stopped: %v", err)
	}
}
