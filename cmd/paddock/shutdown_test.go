package main

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/zk"
)

// startInProcess runs "paddock server" with args on dataDir until the
// returned stop function cancels it; stop returns the exit code. addr is the
// client address the server logged.
func startInProcess(t *testing.T, dataDir string, args ...string) (addr string, stop func() int) {
	t.Helper()
	var stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"server", "--port", "0", "--data-dir", dataDir, "--log-format", "json"}, args...),
			io.Discard, &stderr)
	}()
	waitFor(t, "the serving log line", func() bool {
		for _, line := range strings.Split(stderr.String(), "\n") {
			var rec struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "paddock serving" {
				addr = rec.Addr
				return true
			}
		}
		return false
	})
	stopped := false
	stop = func() int {
		if stopped {
			return exitOK
		}
		stopped = true
		cancel()
		select {
		case code := <-done:
			return code
		case <-time.After(20 * time.Second):
			t.Fatalf("server did not stop; stderr:\n%s", stderr.String())
			return -1
		}
	}
	t.Cleanup(func() { stop() })
	return addr, stop
}

// TestShutdownKeepsOrClosesSessions checks what SIGINT/SIGTERM (here: the
// cancelled context) does to the sessions of connected clients: by default
// they stay open and their ephemerals survive the restart; with
// --close-sessions-on-shutdown they are closed and the ephemerals are gone.
func TestShutdownKeepsOrClosesSessions(t *testing.T) {
	for _, tc := range []struct {
		name          string
		args          []string
		wantEphemeral bool
	}{
		{"default", nil, true},
		{"close-sessions", []string{"--close-sessions-on-shutdown"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			dataDir := t.TempDir()
			addr, stop := startInProcess(t, dataDir, tc.args...)
			c, err := zk.Connect(ctx, addr, zk.WithSessionTimeout(20*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Create(ctx, "/eph", nil, zk.WorldACL(zk.PermAll), zk.ModeEphemeral); err != nil {
				t.Fatal(err)
			}
			if code := stop(); code != exitOK {
				t.Fatalf("exit code %d", code)
			}
			addr2, _ := startInProcess(t, dataDir)
			r, err := zk.Connect(ctx, addr2)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			ok, _, err := r.Exists(ctx, "/eph")
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.wantEphemeral {
				t.Fatalf("ephemeral present after restart: %v, want %v", ok, tc.wantEphemeral)
			}
		})
	}
}
