package zktest_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/paddockhq/paddock/internal/zktest"
)

// testLogger sends go-zk's log lines to the test log.
type testLogger struct{ t testing.TB }

func (l testLogger) Printf(format string, args ...any) { l.t.Logf("go-zk: "+format, args...) }

// connect opens a go-zk session to addr and waits until it has a session.
func connect(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	conn, events, err := zk.Connect([]string{addr}, 10*time.Second,
		zk.WithLogger(testLogger{t}), zk.WithLogInfo(false))
	if err != nil {
		t.Fatalf("connect to %s: %v", addr, err)
	}
	t.Cleanup(conn.Close)
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return conn
			}
		case <-timeout:
			t.Fatalf("no session with %s after 20s (state %v)", addr, conn.State())
		}
	}
}

func TestFourLetterWordErrors(t *testing.T) {
	closed := fmt.Sprintf("127.0.0.1:%d", zktest.FreePort(t))
	tests := []struct {
		name, addr, cmd, want string
	}{
		{"short command", "127.0.0.1:1", "ok", "must be 4 bytes"},
		{"long command", "127.0.0.1:1", "ruok!", "must be 4 bytes"},
		{"closed port", closed, "ruok", "connection refused"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := zktest.FourLetterWord(tc.addr, tc.cmd)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("FourLetterWord(%q, %q) error = %v, want one containing %q", tc.addr, tc.cmd, err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.addr) {
				t.Errorf("error %q does not name the address %s", err, tc.addr)
			}
		})
	}
}

func TestModuleRoot(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(filepath.Dir(wd)) // internal/zktest -> module root
	tests := []struct {
		name, dir, want string
		wantErr         bool
	}{
		{"package dir", wd, root, false},
		{"module root itself", root, root, false},
		{"no go.mod above", t.TempDir(), "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := zktest.ModuleRoot(tc.dir)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("ModuleRoot(%s) = %s, want an error", tc.dir, got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ModuleRoot(%s) = %q, %v; want %q", tc.dir, got, err, tc.want)
			}
		})
	}
}

func TestFreePort(t *testing.T) {
	port := zktest.FreePort(t)
	if port <= 0 || port > 65535 {
		t.Fatalf("FreePort = %d, not a TCP port", port)
	}
}

func TestStartZooKeeper(t *testing.T) {
	zkp := zktest.StartZooKeeper(t, zktest.ZKOptions{
		TickTime:    1000,
		ExtraConfig: []string{"maxClientCnxns=7"},
	})
	if want := fmt.Sprintf("127.0.0.1:%d", zkp.Port); zkp.Addr != want {
		t.Fatalf("Addr = %q, want %q", zkp.Addr, want)
	}
	firstPid := zkp.Pid()
	if firstPid <= 0 {
		t.Fatalf("Pid = %d for a running server", firstPid)
	}

	// The four-letter words show the configuration we asked for.
	fourLetter := []struct {
		cmd  string
		want []string
	}{
		{"ruok", []string{"imok"}},
		{"srvr", []string{"Mode: standalone"}},
		{"envi", []string{"zookeeper.version=3.8"}},
		{"conf", []string{
			"tickTime=1000",
			"maxClientCnxns=7",
			fmt.Sprintf("clientPort=%d", zkp.Port),
			"dataDir=" + zkp.DataDir,
		}},
	}
	for _, tc := range fourLetter {
		out, err := zktest.FourLetterWord(zkp.Addr, tc.cmd)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s answered %q, want it to contain %q", tc.cmd, out, w)
			}
		}
	}

	// Extended types are on: TTL nodes can be created.
	conn := connect(t, zkp.Addr)
	if _, err := conn.CreateTTL("/ttl", nil, zk.FlagTTL, zk.WorldACL(zk.PermAll), time.Hour); err != nil {
		t.Fatalf("CreateTTL with extended types enabled: %v", err)
	}
	// The super digest is set: super:test reads a node nobody else can.
	if _, err := conn.Create("/secret", []byte("s3"), 0, zk.DigestACL(zk.PermAll, "alice", "pw")); err != nil {
		t.Fatalf("create /secret: %v", err)
	}
	if _, _, err := conn.Get("/secret"); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("get /secret without auth: err = %v, want %v", err, zk.ErrNoAuth)
	}
	super := connect(t, zkp.Addr)
	if err := super.AddAuth("digest", []byte("super:test")); err != nil {
		t.Fatalf("add super auth: %v", err)
	}
	if data, _, err := super.Get("/secret"); err != nil || string(data) != "s3" {
		t.Fatalf("get /secret as super = %q, %v; want \"s3\"", data, err)
	}
	conn.Close()
	super.Close()

	// Kill: the process is gone and the port closed.
	if err := zkp.Kill(); err != nil {
		t.Fatal(err)
	}
	if pid := zkp.Pid(); pid != 0 {
		t.Fatalf("Pid = %d after Kill, want 0", pid)
	}
	if err := syscall.Kill(firstPid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("signal 0 to killed pid %d: %v, want ESRCH", firstPid, err)
	}
	if _, err := zktest.FourLetterWord(zkp.Addr, "ruok"); err == nil {
		t.Fatalf("ruok to %s succeeded after Kill", zkp.Addr)
	}
	if err := zkp.Kill(); err != nil {
		t.Fatalf("second Kill: %v", err)
	}

	// Restart: same port and data.
	zkp.Restart(t)
	if pid := zkp.Pid(); pid <= 0 || pid == firstPid {
		t.Fatalf("Pid after Restart = %d (first was %d)", pid, firstPid)
	}
	conn = connect(t, zkp.Addr)
	if ok, _, err := conn.Exists("/ttl"); err != nil || !ok {
		t.Fatalf("exists /ttl after restart = %v, %v; want true", ok, err)
	}
	conn.Close()

	// Stop: graceful, idempotent.
	if err := zkp.Stop(); err != nil {
		t.Fatal(err)
	}
	if pid := zkp.Pid(); pid != 0 {
		t.Fatalf("Pid = %d after Stop, want 0", pid)
	}
	if err := zkp.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if tail := zkp.LogTail(); !strings.Contains(tail, "zktest: starting") && !strings.Contains(tail, "INFO") {
		t.Errorf("LogTail = %q, want ZooKeeper's log", tail)
	}
}

func TestStartZooKeeperFailureShowsLog(t *testing.T) {
	// A config ZooKeeper rejects: the starter must fail, quoting the log.
	ft := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		zktest.StartZooKeeper(ft, zktest.ZKOptions{ExtraConfig: []string{"tickTime=notanumber"}})
	}()
	<-done
	if !ft.failed {
		t.Fatal("StartZooKeeper with a broken zoo.cfg did not fail")
	}
	if !strings.Contains(ft.msg, "exited before answering ruok") || !strings.Contains(ft.msg, "notanumber") {
		t.Fatalf("failure message does not explain the exit or quote the log:\n%s", ft.msg)
	}
}

// fatalRecorder records Fatal instead of failing the real test; Fatal ends
// the calling goroutine as testing.T's does.
type fatalRecorder struct {
	testing.TB
	failed bool
	msg    string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatal(args ...any) {
	f.failed, f.msg = true, fmt.Sprint(args...)
	runtime.Goexit()
}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.failed, f.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}
