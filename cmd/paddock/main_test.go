package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// runMainEnv makes the test binary behave as the paddock binary, so tests can
// check real exit codes and signal handling.
const runMainEnv = "PADDOCK_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not synchronisation
	}
}

func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVersionText(t *testing.T) {
	code, out, errOut := runCmd(t, "version")
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "paddock ") ||
		lines[1] != "go: "+runtime.Version() || !strings.HasPrefix(lines[2], "revision: ") {
		t.Errorf("unexpected output:\n%s", out)
	}
}

func TestVersionJSON(t *testing.T) {
	for _, flag := range []string{"--json", "-json", "--json=true"} {
		t.Run(flag, func(t *testing.T) {
			code, out, errOut := runCmd(t, "version", flag)
			if code != exitOK {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			var v versionInfo
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("output %q is not JSON: %v", out, err)
			}
			if v.Go != runtime.Version() || v.Version == "" {
				t.Errorf("got %+v", v)
			}
		})
	}
}

func TestPrintVersion(t *testing.T) {
	tests := []struct {
		name string
		v    versionInfo
		want string
	}{
		{"no vcs", versionInfo{Version: "(devel)", Go: "go1.26.0"}, "paddock (devel)\ngo: go1.26.0\nrevision: unknown\n"},
		{"clean", versionInfo{Version: "v1.2.3", Go: "go1.26.0", Revision: "abc123", Time: "2026-01-02T03:04:05Z"},
			"paddock v1.2.3\ngo: go1.26.0\nrevision: abc123\ncommitted: 2026-01-02T03:04:05Z\n"},
		{"modified", versionInfo{Version: "(devel)", Go: "go1.26.0", Revision: "abc123", Modified: true},
			"paddock (devel)\ngo: go1.26.0\nrevision: abc123 (modified)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := printVersion(&b, tt.v, false); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got %q, want %q", b.String(), tt.want)
			}
		})
	}
}

func TestUsageAndConfigErrors(t *testing.T) {
	badTick := writeFile(t, "bad.cfg", "tickTime=abc\n")
	badRange := writeFile(t, "range.cfg", "clientPort=-1\n")
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"bad value in file", []string{"server", "--config", badTick}, `tickTime: "abc" is not an integer`},
		{"bad range in file", []string{"server", "--config", badRange}, `config: clientPort: "-1" must be in [0, 65535]`},
		{"missing file", []string{"server", "--config", filepath.Join(t.TempDir(), "none.cfg")}, "no such file"},
		{"bad log level flag", []string{"server", "--log-level", "loud"}, `config: flag --log-level: paddock.log.level: "loud"`},
		{"bad log format flag", []string{"server", "-log-format=xml"}, `flag --log-format: paddock.log.format: "xml"`},
		{"bad port flag", []string{"server", "--port", "70000"}, `clientPort: "70000" must be in [0, 65535]`},
		{"bad address flag", []string{"server", "--address", "a b"}, `clientPortAddress: "a b" is not a host name`},
		{"non-numeric port", []string{"server", "--port", "x"}, `invalid argument "x"`},
		{"unknown flag", []string{"server", "--bogus"}, "unknown flag: --bogus"},
		{"extra argument", []string{"server", "zoo.cfg"}, `unknown command "zoo.cfg"`},
		{"unknown command", []string{"serve"}, `unknown command "serve"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCmd(t, tt.args...)
			if code != exitUsage {
				t.Errorf("exit code %d, want %d", code, exitUsage)
			}
			if !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("stderr %q does not contain %q", errOut, tt.wantErr)
			}
		})
	}
}

func TestGoStyleArgs(t *testing.T) {
	root := newRootCmd()
	tests := []struct{ in, want []string }{
		{[]string{"version", "-json"}, []string{"version", "--json"}},
		{[]string{"server", "-port", "0", "-data-dir=/d"}, []string{"server", "--port", "0", "--data-dir=/d"}},
		{[]string{"server", "--port", "0"}, []string{"server", "--port", "0"}},
		{[]string{"server", "-h"}, []string{"server", "-h"}},
		{[]string{"server", "-help"}, []string{"server", "--help"}},
		{[]string{"server", "-nonsense"}, []string{"server", "-nonsense"}},
		{[]string{"server", "--", "-port"}, []string{"server", "--", "-port"}},
		// "paddock cli": its own flags, then the command, untouched, as
		// zkCli's parseOptions passes it on.
		{[]string{"cli", "-server", "h:1", "-timeout", "500", "-json", "ls", "/"},
			[]string{"cli", "--server", "h:1", "--timeout", "500", "--json", "ls", "/"}},
		{[]string{"cli", "set", "/mode", "-strict"}, []string{"cli", "set", "/mode", "-strict"}},
		{[]string{"cli", "-server", "h:1", "create", "/a", "-json"}, []string{"cli", "--server", "h:1", "create", "/a", "-json"}},
		{[]string{"cli", "set", "/a", "-data", "-verbose", "-server", "-config", "-limit", "-help"},
			[]string{"cli", "set", "/a", "-data", "-verbose", "-server", "-config", "-limit", "-help"}},
		{[]string{"cli", "-r", "get", "-json", "/a"}, []string{"cli", "-r", "get", "-json", "/a"}},
		{[]string{"cli", "-server=h:1", "-json", "get", "-w", "/a"}, []string{"cli", "--server=h:1", "--json", "get", "-w", "/a"}},
		// A flag's value is not the command, even when it looks like one.
		{[]string{"cli", "-server", "ls", "-json", "stat", "-json"}, []string{"cli", "--server", "ls", "--json", "stat", "-json"}},
		// Before the command, "paddock cli" skips the dashed words it does
		// not know, as zkCli's parseOptions does; the next word is the
		// command, not their value.
		{[]string{"cli", "-foo", "ls", "/"}, []string{"cli", "ls", "/"}},
		{[]string{"cli", "-foo", "bar"}, []string{"cli", "bar"}},
		{[]string{"cli", "--foo", "-x=1", "-", "-timeout", "5", "-Z", "ls", "-foo"}, []string{"cli", "--timeout", "5", "ls", "-foo"}},
		{[]string{"cli", "-h"}, []string{"cli", "-h"}},
		{[]string{"cli", "-help"}, []string{"cli", "--help"}},
		{[]string{"cli", "-client-configuration", "f", "ls"}, []string{"cli", "--client-configuration", "f", "ls"}},
		// A last flag with no value is reported and dropped, as zkCli's
		// parseOptions does (tested with its messages in
		// TestCliFlagWithoutValue).
		{[]string{"cli", "-server", "h:1", "-timeout"}, []string{"cli", "--server", "h:1"}},
		{[]string{"cli", "-server"}, []string{"cli"}},
		// Only the flags of the command reached: -json is not server's.
		{[]string{"server", "-json"}, []string{"server", "-json"}},
		// Other commands take flags after their arguments.
		{[]string{"wal", "dump", "/d", "-limit", "3", "-json"}, []string{"wal", "dump", "/d", "--limit", "3", "--json"}},
	}
	for _, tt := range tests {
		got := goStyleArgs(root, tt.in, io.Discard)
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("goStyleArgs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestServerInProcess runs "paddock server" until its context is cancelled:
// flags override the file, warnings are logged in the chosen format, and the
// listener is on loopback.
func TestServerInProcess(t *testing.T) {
	cfgPath := writeFile(t, "zoo.cfg", "tickTime=2000\nclientPort=2181\npaddock.log.format=text\nmystery.key=1\npreAllocSize=1024\n")
	dataDir := t.TempDir()
	var stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"server", "--config", cfgPath, "--port", "0", "--address", "127.0.0.1",
			"--data-dir", dataDir, "--log-format", "json", "--log-level", "debug"}, io.Discard, &stderr)
	}()
	waitFor(t, "the serving log line", func() bool { return strings.Contains(stderr.String(), "paddock serving") })
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("server did not stop after cancellation")
	}

	records := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q is not JSON (flag --log-format must override the file): %v", line, err)
		}
		msg, _ := rec["msg"].(string)
		if _, seen := records[msg]; !seen {
			records[msg] = rec
		}
	}
	if w := records["config warning"]; w == nil || !strings.Contains(w["detail"].(string), `unknown key "mystery.key"`) {
		t.Errorf("no warning for the unknown key; got %v", records)
	}
	if d := records["config key ignored by Paddock"]; d == nil || d["key"] != "preAllocSize" {
		t.Errorf("no debug note for preAllocSize; got %v", records)
	}
	s := records["paddock serving"]
	if s == nil || !regexp.MustCompile(`^127\.0\.0\.1:[1-9][0-9]*$`).MatchString(s["addr"].(string)) || s["dataDir"] != dataDir {
		t.Errorf("serving record %v: want a loopback addr and dataDir %s", s, dataDir)
	}
	if records["stopped"] == nil {
		t.Errorf("no stopped record in %v", records)
	}
}

// startBinary runs the test binary as paddock with args.
func startBinary(t *testing.T, args ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill() // by PID: only the process this test started
			_ = cmd.Wait()
		}
	})
	return cmd, bufio.NewScanner(stderr)
}

// waitExit waits for cmd with a deadline and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("wait: %v", err)
		}
		return cmd.ProcessState.ExitCode()
	case <-time.After(20 * time.Second):
		t.Fatal("process did not exit")
		return -1
	}
}

func TestBinaryInvalidConfigExits2(t *testing.T) {
	cfgPath := writeFile(t, "zoo.cfg", "tickTime=0\n")
	cmd, stderr := startBinary(t, "server", "--config", cfgPath)
	var out strings.Builder
	for stderr.Scan() {
		out.WriteString(stderr.Text() + "\n")
	}
	if code := waitExit(t, cmd); code != exitUsage {
		t.Errorf("exit code %d, want %d", code, exitUsage)
	}
	if !strings.Contains(out.String(), `paddock: config: tickTime: "0" must be at least 1 ms`) {
		t.Errorf("stderr %q does not name the key", out.String())
	}
}

func TestBinaryStopsOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, stderr := startBinary(t, "server", "-port", "0", "-data-dir", t.TempDir())
			lines := make(chan string, 64)
			go func() {
				defer close(lines)
				for stderr.Scan() {
					lines <- stderr.Text()
				}
			}()
			deadline := time.After(20 * time.Second)
			for serving := false; !serving; {
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatal("stderr closed before the server started")
					}
					serving = strings.Contains(l, "paddock serving")
				case <-deadline:
					t.Fatal("server did not start")
				}
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			var rest []string
			for l := range lines {
				rest = append(rest, l)
			}
			if code := waitExit(t, cmd); code != exitOK {
				t.Errorf("exit code %d after %v, want 0; stderr: %q", code, sig, rest)
			}
			if !strings.Contains(strings.Join(rest, "\n"), "msg=stopped") {
				t.Errorf("no clean stop logged: %q", rest)
			}
		})
	}
}
