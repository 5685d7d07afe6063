package masterworker_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
)

// TestDemoScript runs demo.sh with a freshly built paddock: a real
// three-member ensemble, masters, workers and a client as processes, the
// primary master and a worker killed with SIGKILL midway. The script must
// exit 0 with its summary as the last line.
func TestDemoScript(t *testing.T) {
	bin := zktest.BuildPaddock(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "demo.sh")
	cmd.Env = append(os.Environ(), "PADDOCK_BIN="+bin, "TASKS=100", "KEEP=")
	// Its own process group, so that nothing it started outlives the
	// test; on timeout it gets SIGTERM first, which its trap turns into
	// killing every process it started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the group: nothing left, normally
	}
	t.Logf("demo.sh stdout:\n%s", stdout.String())
	if err != nil {
		t.Fatalf("demo.sh: %v (context: %v)\nstderr:\n%s", err, ctx.Err(), stderr.String())
	}
	lines := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
	const want = "100 submitted, 100 completed exactly once, 0 lost"
	if last := lines[len(lines)-1]; last != want {
		t.Errorf("last line %q, want %q\nstderr:\n%s", last, want, stderr.String())
	}
	if !strings.Contains(stdout.String(), "master-2 took over") {
		t.Errorf("no failover reported")
	}
}
