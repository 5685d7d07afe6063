package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/storage"
	"github.com/paddockhq/paddock/zk"
)

// TestServerNegativeShutdownTimeout: a negative --shutdown-timeout is a
// usage error (exit 2) found before the server starts, not a shutdown that
// gives up at once (or, below -5s, dumps every goroutine and exits 1).
func TestServerNegativeShutdownTimeout(t *testing.T) {
	// A context already cancelled, so that a server started by mistake
	// stops at once rather than run for ever.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"server", "--port", "0", "--data-dir", t.TempDir(), "--shutdown-timeout", "-1s"}, &stdout, &stderr)
	if code != exitUsage {
		t.Errorf("exit code %d, want %d; stderr:\n%s", code, exitUsage, stderr.String())
	}
	if !strings.Contains(stderr.String(), "--shutdown-timeout") || strings.Contains(stderr.String(), "paddock serving") {
		t.Errorf("stderr %q: want an error naming --shutdown-timeout before the server starts", stderr.String())
	}
}

// TestShutdownTimeoutReachedExitsZero: --shutdown-timeout is how long to
// wait for in-flight requests "before closing anyway". Reaching it (here at
// once, with 0 and a client connected) cuts the drain short, but the server
// still closes cleanly with its log synced: exit status 0, not 1.
func TestShutdownTimeoutReachedExitsZero(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dataDir := t.TempDir()
	addr, stop := startInProcess(t, dataDir, "--shutdown-timeout", "0")
	c, err := zk.Connect(ctx, addr, zk.WithSessionTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Create(ctx, "/kept", []byte("v"), zk.WorldACL(zk.PermAll), zk.ModePersistent); err != nil {
		t.Fatal(err)
	}
	if code := stop(); code != exitOK {
		t.Fatalf("exit code %d after the shutdown timeout was reached, want %d", code, exitOK)
	}
	addr2, _ := startInProcess(t, dataDir)
	r, err := zk.Connect(ctx, addr2)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if ok, _, err := r.Exists(ctx, "/kept"); err != nil || !ok {
		t.Fatalf("/kept after restart: exists %v, err %v", ok, err)
	}
}

// failWriter fails every write, as a full disk does.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestDataToolWriteErrorExits1: a tool that cannot write its report has
// failed (exit 1); it is not a usage error (exit 2, "Run 'paddock --help'").
func TestDataToolWriteErrorExits1(t *testing.T) {
	dir := t.TempDir()
	s := dtStartServer(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := zk.Connect(ctx, s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 { // past SnapCount 5: a snapshot is written
		if _, err := c.Create(ctx, "/n"+strconv.Itoa(i), nil, zk.WorldACL(zk.PermAll), zk.ModePersistent); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	waitFor(t, "a snapshot", func() bool {
		infos, _ := storage.ListSnapshots(filepath.Join(dir, "snap"))
		return len(infos) > 0
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"data", "verify", dir},
		{"data", "verify", "--json", dir},
		{"snapshot", "inspect", dir},
		{"snapshot", "inspect", "--json", dir},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stderr bytes.Buffer
			code := run(context.Background(), args, failWriter{}, &stderr)
			if code != exitFailure || strings.Contains(stderr.String(), "--help") {
				t.Errorf("exit %d, stderr %q: want %d and no usage hint", code, stderr.String(), exitFailure)
			}
		})
	}
}
