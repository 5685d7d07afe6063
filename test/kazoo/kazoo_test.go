package kazoo_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
)

// paddockTargetEnabled switches the Paddock target on for TestKazooSuite.
//
// TODO(paddock-server): set paddockTargetEnabled to true once
// "paddock server" serves clients; kazoo's suite must then pass against it
// (minus the tests deselect.txt lists for Paddock).
const paddockTargetEnabled = true

// suiteTimeout bounds one run of the suite. It is the backstop: runSuite
// gives run.sh a limit runShMargin lower (KAZOO_SUITE_TIMEOUT), so that
// run.sh's timeout fires first and run.sh still prints its diagnostics (the
// tails of the servers' logs) before the process group is killed.
const suiteTimeout = 8 * time.Minute

// runShMargin is how much earlier than suiteTimeout run.sh's own limit
// fires: run.sh gives pytest 30 s more after SIGTERM (timeout -k 30), then
// needs a few seconds for its diagnostics and cleanup.
const runShMargin = 90 * time.Second

// target is a server kind run.sh knows, with the environment it needs.
type target struct {
	name string
	env  func(t *testing.T) []string
}

func targets() []target {
	ts := []target{{name: "zookeeper", env: func(*testing.T) []string { return nil }}}
	if paddockTargetEnabled {
		ts = append(ts, target{name: "paddock", env: func(t *testing.T) []string {
			return []string{"PADDOCK_BIN=" + zktest.BuildPaddock(t)}
		}})
	}
	return ts
}

func TestKazooSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("kazoo's suite takes about a minute and a half; skipped with -short")
	}
	for _, f := range []string{"/usr/bin/python3", "/usr/lib/python3/dist-packages/kazoo/tests", "/usr/share/java/zookeeper.jar"} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("kazoo's suite needs %s: %v", f, err)
		}
	}
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			runSuite(t, tg)
		})
	}
}

// runSuite runs run.sh for tg and fails with its output if it fails.
func runSuite(t *testing.T, tg target) {
	ctx, cancel := context.WithTimeout(context.Background(), suiteTimeout)
	defer cancel()
	runShLimit := suiteTimeout - runShMargin
	cmd := exec.CommandContext(ctx, "bash", "run.sh", tg.name)
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir(),
		"KAZOO_SUITE_TIMEOUT="+strconv.Itoa(int(runShLimit/time.Second)))
	cmd.Env = append(cmd.Env, tg.env(t)...)
	// run.sh's servers die with pytest (parent-death signal) and run.sh
	// kills leftovers by PID; on our timeout, kill its whole process group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 30 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start).Round(time.Second)
	if err != nil {
		reason := err.Error()
		var ee *exec.ExitError
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			reason = "run.sh killed after " + suiteTimeout.String()
		case errors.As(err, &ee) && ee.ExitCode() == 124:
			reason = "timed out after run.sh's limit of " + runShLimit.String()
		}
		t.Fatalf("kazoo suite against %s failed after %v: %s\n%s", tg.name, elapsed, reason, out.String())
	}
	t.Logf("kazoo suite against %s passed in %v:\n%s", tg.name, elapsed, out.String())
}
