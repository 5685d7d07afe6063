package raftnode_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/raftnode"
)

// crashDirEnv tells the test binary, re-executed as a child, to run
// TestCrashChild in that directory.
const crashDirEnv = "PADDOCK_RAFTNODE_CRASH_CHILD_DIR"

const (
	crashProposers = 8
	crashAcks      = 600 // acknowledged entries before the child is killed
)

func crashConfig(dir string) raftnode.Config {
	return raftnode.Config{
		ID:              1,
		DataDir:         filepath.Join(dir, "data"),
		LogDir:          filepath.Join(dir, "log"),
		TickInterval:    10 * time.Millisecond,
		SnapCount:       40,
		WALSegmentBytes: 4096,
	}
}

// TestCrashChild is the child process of TestCrashRecovery: it proposes
// entries from several goroutines and prints "ack <data>" on stdout as each
// is applied, until it is killed.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("helper process of TestCrashRecovery")
	}
	cfg := crashConfig(dir)
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	acks := make([]chan struct{}, crashProposers)
	for i := range acks {
		acks[i] = make(chan struct{}, 1)
	}
	sm := newListSM()
	sm.onApply = func(_ uint64, data []byte) {
		// Written before Apply returns: an ack means applied, hence durable.
		if _, err := os.Stdout.Write(fmt.Appendf(nil, "ack %s\n", data)); err != nil {
			panic(err)
		}
		var g, j int
		if _, err := fmt.Sscanf(string(data), "c%d-%d", &g, &j); err == nil && g < crashProposers {
			acks[g] <- struct{}{}
		}
	}
	n, err := raftnode.Start(cfg, sm)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := n.WaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range crashProposers {
		wg.Go(func() {
			for j := 0; j < 1_000_000 && ctx.Err() == nil; j++ {
				if err := n.Propose(ctx, fmt.Appendf(nil, "c%d-%d", g, j), nil); err != nil {
					return
				}
				select {
				case <-acks[g]:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	wg.Wait()
	t.Error("not killed within a minute")
}

// lockedBuffer is a bytes.Buffer safe for the exec package's copying
// goroutine and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestCrashRecovery kills a process writing through raftnode with SIGKILL and
// checks that every entry it acknowledged as applied is there after restart.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := false
	t.Cleanup(func() {
		if !waited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	var acked []string
	killed := false
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "ack ")
		if !ok {
			continue
		}
		acked = append(acked, data)
		if len(acked) == crashAcks && !killed {
			if err := cmd.Process.Kill(); err != nil { // SIGKILL to the child's pid
				t.Fatal(err)
			}
			killed = true
		}
	}
	werr := cmd.Wait()
	waited = true
	if !killed {
		t.Fatalf("child exited (%v) after %d acks; its log:\n%s", werr, len(acked), stderr.String())
	}
	t.Logf("child killed after %d acknowledged entries (%v)", len(acked), werr)

	cfg := crashConfig(dir)
	cfg.Logger = testLogger(t)
	sm := newListSM()
	n := start(t, cfg, sm)
	propose(t, n, "after-restart")
	items := sm.waitFor(t, "the entry proposed after restart", func(items []string) bool {
		return slices.Contains(items, "after-restart")
	})
	count := map[string]int{}
	for _, it := range items {
		count[it]++
	}
	for _, a := range acked {
		if count[a] != 1 {
			t.Fatalf("acknowledged entry %q is there %d times after the crash", a, count[a])
		}
	}
	if _, _, err := sm.state(); err != nil {
		t.Fatal(err)
	}
	for g := range crashProposers {
		var got []string
		for _, it := range items {
			if strings.HasPrefix(it, fmt.Sprintf("c%d-", g)) {
				got = append(got, it)
			}
		}
		for j, it := range got {
			if it != fmt.Sprintf("c%d-%d", g, j) {
				t.Fatalf("proposer %d: entry %d is %q", g, j, it)
			}
		}
	}
	t.Logf("restored snapshot at %d, %d items after restart", sm.restored, len(items))
}
