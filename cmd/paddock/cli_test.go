package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
)

// runCLIBinary runs the test binary as "paddock cli args..." with stdin
// and returns its exit status and output.
func runCLIBinary(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"cli"}, args...)...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("paddock cli %q: %v", args, err)
	}
	return code, out.String(), errOut.String()
}

// TestCLIExitStatus checks the exit status of non-interactive "paddock
// cli": a command's (0, 1 on failure, 127 when unknown), and a script's,
// which is its last command's, as zkCli.sh gives them.
func TestCLIExitStatus(t *testing.T) {
	srv := zktest.StartPaddock(t, zktest.PaddockOptions{})
	server := []string{"-server", srv.Addr, "-timeout", "10000"}
	tests := []struct {
		name       string
		stdin      string
		args       []string
		code       int
		wantOut    string
		wantErr    string
		notWantErr string
	}{
		{name: "create", args: []string{"create", "/cli", "hello world"}, code: 0, wantErr: "Created /cli\n", notWantErr: "paddock:"},
		{name: "get", args: []string{"get", "/cli"}, code: 0, wantOut: "\nhello world\n"},
		{name: "no node", args: []string{"ls", "/nope"}, code: 1, wantErr: "Node does not exist: /nope\n", notWantErr: "paddock:"},
		{name: "usage", args: []string{"get"}, code: 1, wantErr: "get [-s] [-w] path\n"},
		{name: "flags of the command", args: []string{"ls", "-s", "/cli"}, code: 0, wantOut: "numChildren = 0\n"},
		{name: "unknown command", args: []string{"bogus"}, code: 127, wantErr: "Command not found: Command not found bogus\n"},
		{name: "script ends well", stdin: "ls /nope\nls /cli\n", code: 0, wantOut: "[]\n"},
		{name: "script ends badly", stdin: "ls /cli\nget /nope\n", code: 1, wantErr: "Node does not exist: /nope\n"},
		{name: "quit keeps the status", stdin: "ls /nope\nquit\nls /cli\n", code: 1, wantErr: "Node does not exist: /nope\n"},
		{name: "script unknown command", stdin: "ls /cli\nfoo\n", code: 127},
		// ZooKeeperMain.executeLine skips an empty line; a line of blanks
		// is the command " " (or "\t"), which is not found.
		{name: "empty line keeps the status", stdin: "stat /nope\n\n", code: 1, wantErr: "Node does not exist: /nope\n"},
		{name: "empty lines keep success", stdin: "ls /nope\nls /cli\n\n\n", code: 0},
		{name: "line of blanks", stdin: "ls /cli\n   \n", code: 127, wantErr: "Command not found: Command not found  \n"},
		{name: "line of a tab", stdin: "stat /nope\n\t\n", code: 127, wantErr: "Command not found: Command not found \t\n"},
		// Words after the command reach it as written (zkCli's
		// parseOptions), not as Go-style flags of paddock cli.
		{name: "command words untouched", args: []string{"get", "-json", "/cli"}, code: 1, wantErr: "Unrecognized option: -json\n"},
		{name: "json", args: []string{"--json", "get", "/cli"}, code: 0, wantOut: `{"data":"hello world","path":"/cli"}` + "\n"},
		{name: "client configuration refused", args: []string{"-client-configuration", "zk.properties", "ls", "/"}, code: 2,
			wantErr: "-client-configuration zk.properties: not supported", notWantErr: "shorthand"},
		{name: "json error", args: []string{"-json", "get", "/nope"}, code: 1, wantOut: `{"code":"NONODE","error":"Node does not exist: /nope"}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLIBinary(t, tt.stdin, append(append([]string{}, server...), tt.args...)...)
			if code != tt.code {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("stdout %q does not contain %q", out, tt.wantOut)
			}
			if !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("stderr %q does not contain %q", errOut, tt.wantErr)
			}
			if tt.notWantErr != "" && strings.Contains(errOut, tt.notWantErr) {
				t.Errorf("stderr %q contains %q", errOut, tt.notWantErr)
			}
		})
	}

	t.Run("json lines", func(t *testing.T) {
		code, out, _ := runCLIBinary(t, "stat /cli\nls /\ndelete /nope\n", append(append([]string{}, server...), "--json")...)
		if code != 1 {
			t.Errorf("exit status %d, want 1", code)
		}
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if !strings.HasPrefix(l, `{"event":`) { // session events are objects of their own
				lines = append(lines, l)
			}
		}
		if len(lines) != 3 {
			t.Fatalf("want 3 JSON lines, got %q", out)
		}
		for _, l := range lines {
			var v map[string]any
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Errorf("line %q is not JSON: %v", l, err)
			}
		}
		if !strings.Contains(lines[0], `"dataLength":11`) || !strings.Contains(lines[2], `"code":"NONODE"`) {
			t.Errorf("unexpected JSON: %q", out)
		}
	})
}

// TestCLINoServer checks that a server that cannot be reached fails the
// command with a message, after the timeout.
func TestCLINoServer(t *testing.T) {
	port := zktest.FreePort(t)
	code, _, errOut := runCLIBinary(t, "", "-server", "127.0.0.1:"+strconv.Itoa(port), "-timeout", "300", "ls", "/")
	if code != exitFailure || !strings.Contains(errOut, "paddock: connect to 127.0.0.1:") {
		t.Errorf("exit status %d, stderr %q; want %d and a connect error", code, errOut, exitFailure)
	}
	// A bad flag value is a usage error (doc.go: status 2).
	code, _, errOut = runCLIBinary(t, "", "-timeout", "0", "ls", "/")
	if code != exitUsage || !strings.Contains(errOut, "-timeout must be positive") {
		t.Errorf("exit status %d, stderr %q; want %d and a timeout error", code, errOut, exitUsage)
	}
}

// TestCliFlagWithoutValue checks that a last flag with no value after it is
// reported and ignored, as zkCli.sh 3.8 does ("echo 'ls /' | zkCli.sh
// -server host:port -timeout" prints "Error: no argument found for option
// -timeout", then runs the script with the default timeout, status 0).
func TestCliFlagWithoutValue(t *testing.T) {
	srv := zktest.StartPaddock(t, zktest.PaddockOptions{})
	code, out, errOut := runCLIBinary(t, "ls /\n", "-server", srv.Addr, "-timeout")
	if code != exitOK || !strings.Contains(out, "[zookeeper]") {
		t.Errorf("exit status %d, stdout %q, stderr %q; want 0 and ls's answer", code, out, errOut)
	}
	if !strings.Contains(errOut, "Error: no argument found for option -timeout\n") {
		t.Errorf("stderr %q; want zkCli's report of the flag without a value", errOut)
	}
}
