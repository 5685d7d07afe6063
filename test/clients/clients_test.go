package clients_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
)

// paddockTargetEnabled switches the Paddock target on for TestClients.
//
// TODO(paddock-server): set paddockTargetEnabled to true once
// "paddock server" serves clients; every session must then pass against it.
const paddockTargetEnabled = true

// target is a server the client sessions run against.
type target struct {
	name  string
	start func(t *testing.T) *zktest.Process
}

// targets returns the servers TestClients runs against.
func targets() []target {
	ts := []target{{
		name:  "zookeeper",
		start: func(t *testing.T) *zktest.Process { return zktest.StartZooKeeper(t, zktest.ZKOptions{}) },
	}}
	if paddockTargetEnabled {
		ts = append(ts, target{
			name:  "paddock",
			start: func(t *testing.T) *zktest.Process { return zktest.StartPaddock(t, zktest.PaddockOptions{}) },
		})
	}
	return ts
}

// sessionTimeout bounds one scripted session.
const sessionTimeout = 3 * time.Minute

// script is a scripted session run as a child process.
type script struct {
	name string
	argv []string // the server address is appended
	need []string // files that must exist
}

func scripts() []script {
	return []script{
		{
			name: "kazoo",
			argv: []string{"/usr/bin/python3", "kazoo_session.py"},
			need: []string{"/usr/bin/python3", "/usr/lib/python3/dist-packages/kazoo"},
		},
		{
			name: "zkcli",
			argv: []string{"bash", "zkcli_session.sh"},
			need: []string{"/usr/share/zookeeper/bin/zkCli.sh"},
		},
		{
			name: "cli_mt",
			argv: []string{"bash", "cli_mt_session.sh"},
			need: []string{"/usr/lib/zookeeper/bin/cli_mt"},
		},
	}
}

func TestClients(t *testing.T) {
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			srv := tg.start(t)
			for _, sc := range scripts() {
				t.Run(sc.name, func(t *testing.T) { runScript(t, sc, srv) })
			}
			t.Run("gozk", func(t *testing.T) { runGoZKSession(t, srv.Addr) })
		})
	}
}

// runScript runs one scripted session against srv and fails the test with
// its transcript (and the server log's tail) if the script fails.
func runScript(t *testing.T, sc script, srv *zktest.Process) {
	for _, f := range sc.need {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%s session needs %s: %v", sc.name, f, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), sessionTimeout)
	defer cancel()
	argv := append(append([]string{}, sc.argv...), srv.Addr)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir(), "PYTHONDONTWRITEBYTECODE=1")
	// The script starts clients of its own: run it in its own process group
	// and, on timeout, kill that group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start).Round(time.Millisecond)
	if err != nil {
		reason := err.Error()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			reason = "timed out after " + sessionTimeout.String()
		}
		t.Fatalf("%s session (%s) failed after %v: %s\n--- transcript ---\n%s\n--- %s log tail ---\n%s",
			sc.name, filepath.Join(argv...), elapsed, reason, out.String(), srv.Addr, srv.LogTail())
	}
	t.Logf("%s session passed in %v; transcript:\n%s", sc.name, elapsed, out.String())
}
