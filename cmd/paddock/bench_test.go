package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
	"github.com/paddockhq/paddock/zk"
)

// benchJSON is the part of the --json output the tests read.
type benchJSON struct {
	Workload    string                                   `json:"workload"`
	Servers     string                                   `json:"servers"`
	Sessions    int                                      `json:"sessions"`
	Inflight    int                                      `json:"inflight"`
	ValueSize   int                                      `json:"value_size"`
	DurationS   float64                                  `json:"duration_s"`
	Ops         int64                                    `json:"ops"`
	OpsPerS     float64                                  `json:"ops_per_s"`
	Errors      int64                                    `json:"errors"`
	Latency     struct{ P50, P90, P99, P999, Max int64 } `json:"latency_us"`
	CPUPerOp    *float64                                 `json:"server_cpu_us_per_op"`
	RSS         *int64                                   `json:"server_rss_bytes"`
	ServerProcs []struct {
		PID int `json:"pid"`
	} `json:"server_procs"`
	Root        string `json:"root"`
	Kept        bool   `json:"kept"`
	Interrupted bool   `json:"interrupted"`
}

// lastJSONLine parses the last line of stdout.
func lastJSONLine(t *testing.T, stdout string) benchJSON {
	t.Helper()
	lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
	var r benchJSON
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		t.Fatalf("last line of stdout is not JSON: %v\n%s", err, stdout)
	}
	return r
}

func checkBenchJSON(t *testing.T, r benchJSON) {
	t.Helper()
	l := r.Latency
	if r.Ops <= 0 || r.OpsPerS <= 0 || r.Errors != 0 || r.DurationS <= 0 {
		t.Errorf("ops %d, ops/s %v, errors %d, duration %v: want ops and no errors", r.Ops, r.OpsPerS, r.Errors, r.DurationS)
	}
	if !(0 < l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max) {
		t.Errorf("latency percentiles not ordered: %+v", l)
	}
}

func TestBenchCommand(t *testing.T) {
	p := zktest.StartPaddock(t, zktest.PaddockOptions{})

	t.Run("json", func(t *testing.T) {
		// Go-style single-dash flags work too; --server-pid takes a list.
		pids := strconv.Itoa(p.Pid()) + "," + strconv.Itoa(os.Getpid())
		code, stdout, stderr := runCmd(t, "bench", "--servers", p.Addr, "--workload", "set", "--duration", "300ms",
			"--sessions", "2", "--inflight", "4", "--value-size", "64", "--server-pid", pids, "-json")
		if code != exitOK {
			t.Fatalf("exit %d; stderr: %s", code, stderr)
		}
		if stderr != "" {
			t.Errorf("stderr %q, want nothing (no progress off a terminal)", stderr)
		}
		r := lastJSONLine(t, stdout)
		checkBenchJSON(t, r)
		if r.Workload != "set" || r.Servers != p.Addr || r.Sessions != 2 || r.Inflight != 4 || r.ValueSize != 64 {
			t.Errorf("result describes %+v", r)
		}
		if r.CPUPerOp == nil || *r.CPUPerOp <= 0 || r.RSS == nil || *r.RSS <= 0 || len(r.ServerProcs) != 2 {
			t.Errorf("server figures: cpu/op %v, rss %v, procs %v; want both pids' figures", r.CPUPerOp, r.RSS, r.ServerProcs)
		}
		if r.Kept {
			t.Error("set kept its root")
		}
	})

	t.Run("table", func(t *testing.T) {
		code, stdout, stderr := runCmd(t, "bench", "--servers", p.Addr, "--workload", "watch-fanout",
			"--ops", "50", "--watchers", "3")
		if code != exitOK {
			t.Fatalf("exit %d; stderr: %s", code, stderr)
		}
		for _, want := range []string{`workload +watch-fanout\n`, `\nops +50\n`, `\nops/s +[1-9]`, `\nall notified +[1-9]`,
			`p99\.9`, `\nroot +/bench-[0-9a-f]+ \(deleted\)\n`} {
			if !regexp.MustCompile(want).MatchString(stdout) {
				t.Errorf("table does not match %q:\n%s", want, stdout)
			}
		}
	})

	t.Run("keep", func(t *testing.T) {
		for _, tt := range []struct {
			args []string
			kept bool
		}{
			{[]string{"--workload", "populate", "--znodes", "300"}, true},
			{[]string{"--workload", "populate", "--znodes", "300", "--keep=false"}, false},
			{[]string{"--workload", "create", "--ops", "100", "--keep"}, true},
		} {
			args := append([]string{"bench", "--servers", p.Addr, "--sessions", "2", "--json"}, tt.args...)
			code, stdout, stderr := runCmd(t, args...)
			if code != exitOK {
				t.Fatalf("%v: exit %d; stderr: %s", tt.args, code, stderr)
			}
			r := lastJSONLine(t, stdout)
			checkBenchJSON(t, r)
			if r.Kept != tt.kept {
				t.Errorf("%v: kept %v, want %v", tt.args, r.Kept, tt.kept)
			}
		}
	})
}

func TestBenchUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--workload", "nope"}, `workload: "nope" is not one of`},
		{[]string{"--read-ratio", "2"}, "read-ratio"},
		{[]string{"--sessions", "0", "--inflight", "0"}, "inflight: 0"},
		{[]string{"--server-pid", "abc"}, "server-pid"},
		{[]string{"--no-such-flag"}, "unknown flag"},
		{[]string{"extra"}, "unknown command"},
	}
	for _, tt := range tests {
		code, stdout, stderr := runCmd(t, append([]string{"bench", "--servers", "127.0.0.1:1"}, tt.args...)...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", tt.args, code, stdout, stderr, exitUsage, tt.want)
		}
	}
}

// TestBenchBinaryInterrupt sends SIGINT to a running "paddock bench": it
// prints what it measured, deletes its root and exits 1.
func TestBenchBinaryInterrupt(t *testing.T) {
	p := zktest.StartPaddock(t, zktest.PaddockOptions{})
	cmd := exec.Command(os.Args[0], "bench", "--servers", p.Addr, "--workload", "set", "--keys", "1",
		"--duration", "1m", "--sessions", "2", "--inflight", "2", "--json")
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill() // by PID: only the process this test started
			_ = cmd.Wait()
		}
	})

	// Wait for the run's one key to be written: the load is on.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := zk.Connect(ctx, p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	root := ""
	waitFor(t, "the bench to write its key", func() bool {
		if root == "" {
			names, _, err := c.Children(ctx, "/")
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range names {
				if strings.HasPrefix(n, "bench-") {
					root = "/" + n
				}
			}
			return false
		}
		ok, st, err := c.Exists(ctx, root+"/k-0")
		return err == nil && ok && st.Version > 0
	})

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd); code != exitFailure {
		t.Errorf("exit %d after SIGINT, want %d; stderr: %s", code, exitFailure, stderr.String())
	}
	r := lastJSONLine(t, stdout.String())
	checkBenchJSON(t, r)
	if !r.Interrupted || r.Root != root || r.DurationS >= 60 {
		t.Errorf("interrupted %v, root %s (want %s), duration %v s", r.Interrupted, r.Root, root, r.DurationS)
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr %q does not say the run was interrupted", stderr.String())
	}
	if ok, _, err := c.Exists(ctx, root); err != nil || ok {
		t.Errorf("root %s exists after the interrupted run: %v (%v)", root, ok, err)
	}
}
