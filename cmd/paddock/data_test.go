package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/server"
	"github.com/paddockhq/paddock/internal/storage"
	"github.com/paddockhq/paddock/zk"
)

// dtStartServer runs an in-process server on dir that snapshots every 5
// entries and keeps 10 snapshots.
func dtStartServer(t *testing.T, dir string) *server.Server {
	t.Helper()
	cfg := config.Default()
	cfg.ClientPort = 0
	cfg.DataDir, cfg.DataLogDir = dir, dir
	cfg.SnapCount = 5
	cfg.AutopurgeSnapRetainCount = 10
	s, err := server.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestDataToolCommands runs the data tools as the binary's commands on a
// real server's directory, while it runs and after it stopped.
func TestDataToolCommands(t *testing.T) {
	dir := t.TempDir()
	s := dtStartServer(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := zk.Connect(ctx, s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var last int64
	for i := range 40 {
		_, st, err := c.Create2(ctx, fmt.Sprintf("/node-%02d", i), []byte("v"), zk.WorldACL(zk.PermAll), zk.ModePersistent)
		if err != nil {
			t.Fatal(err)
		}
		last = st.Czxid
	}
	snapDir := filepath.Join(dir, "snap")
	deadline := time.Now().Add(10 * time.Second)
	for infos, _ := storage.ListSnapshots(snapDir); len(infos) < 5; infos, _ = storage.ListSnapshots(snapDir) {
		if time.Now().After(deadline) {
			t.Fatalf("%d snapshots", len(infos))
		}
		time.Sleep(10 * time.Millisecond) // polling: snapshots are written in the background
	}

	// Read-only tools work on a running server's directory.
	code, out, errOut := runCmd(t, "wal", "dump", dir)
	if code != 0 || !strings.Contains(out, "create2 /node-39 mode=PERSISTENT") {
		t.Fatalf("wal dump on a running server: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCmd(t, "snapshot", "inspect", "-json", dir)
	var sum struct {
		ChecksumOK bool
		Body       struct{ Znodes int64 }
	}
	if code != 0 || json.Unmarshal([]byte(out), &sum) != nil || !sum.ChecksumOK || sum.Body.Znodes < 5 {
		t.Fatalf("snapshot inspect --json: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut = runCmd(t, "data", "verify", dir); code != 0 {
		t.Fatalf("data verify on a running server: exit %d\n%s\n%s", code, out, errOut)
	}
	// Purge refuses while the server runs.
	code, _, errOut = runCmd(t, "data", "purge", "-n", "3", dir)
	if code != exitFailure || !strings.Contains(errOut, "a server is using") {
		t.Fatalf("purge while running: exit %d, %s", code, errOut)
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCmd(t, "data", "verify", "--json", dir)
	var rep struct {
		OK     bool
		Replay struct{ LastZxid int64 }
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || !rep.OK || rep.Replay.LastZxid != last {
		t.Fatalf("verify --json after stop: exit %d, last zxid want %#x\n%s\n%s", code, last, out, errOut)
	}
	code, out, errOut = runCmd(t, "data", "purge", "-n", "3", dir)
	if infos, _ := storage.ListSnapshots(snapDir); code != 0 || len(infos) != 3 || !strings.Contains(out, "removed snapshot ") {
		t.Fatalf("purge: exit %d, %d snapshots left\n%s\n%s", code, len(infos), out, errOut)
	}
	code, out, _ = runCmd(t, "snapshot", "dump", "--data", dir)
	if code != 0 || !strings.Contains(out, "\n/node-00\n") || !strings.Contains(out, `data = "v"`) {
		t.Fatalf("snapshot dump: exit %d\n%s", code, out)
	}

	// A damaged snapshot: inspect and verify fail naming it.
	infos, _ := storage.ListSnapshots(snapDir)
	newest := infos[len(infos)-1].Path
	b, _ := os.ReadFile(newest)
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(newest, b, 0o640); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCmd(t, "snapshot", "inspect", newest)
	if code != exitFailure || !strings.Contains(out, "checksum:        FAILED") || !strings.Contains(errOut, newest) {
		t.Fatalf("inspect of a damaged snapshot: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runCmd(t, "data", "verify", dir)
	if code != exitFailure || !strings.Contains(out, "PROBLEM: "+newest) {
		t.Fatalf("verify of a damaged snapshot: exit %d\n%s", code, out)
	}
}

func TestDataToolUsage(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"data", "purge", "-n", "2", dir}, exitUsage, "at least 3"},
		{[]string{"data", "purge", dir}, exitUsage, "-n N"},
		{[]string{"snapshot", "inspect"}, exitUsage, "accepts 1 arg"},
		{[]string{"wal", "dump", "--limit", "-1", dir}, exitUsage, "negative"},
		{[]string{"data", "verify", dir}, exitFailure, "not a Paddock data directory"},
		{[]string{"data", "purge", "-n", "3", dir}, exitFailure, "no WAL directory"},
		{[]string{"snapshot", "dump", dir}, exitFailure, "no snapshot files"},
		{[]string{"snapshot", "inspect", filepath.Join(dir, "x.snap")}, exitFailure, "no such file"},
	}
	for _, c := range cases {
		code, _, errOut := runCmd(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("paddock %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, errOut, c.code, c.want)
		}
	}
}
