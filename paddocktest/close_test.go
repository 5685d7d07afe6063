package paddocktest

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/zk"
)

// leftovers returns the stacks of goroutines running code of the ensemble:
// the servers, raft, the transport and this package's proxies (not the
// tests' own functions).
func leftovers() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var left []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "paddock/internal/") || strings.Contains(g, "paddocktest.(*") {
			left = append(left, g)
		}
	}
	return left
}

func TestCloseLeavesNothingRunning(t *testing.T) {
	before := runtime.NumGoroutine()
	ens, err := New(Options{Observers: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Exercise every kind of proxy state before closing: traffic, a cut
	// link, a paused member with a held connection, a killed member.
	c, err := zk.Connect(ctx, ens.ConnectString())
	if err != nil {
		ens.Close()
		t.Fatal(err)
	}
	err = zk.Retry(ctx, func(ctx context.Context) error {
		_, err := c.Create(ctx, "/x", nil, zk.OpenACL, zk.ModePersistent)
		return err
	})
	c.Close()
	if err != nil {
		ens.Close()
		t.Fatal(err)
	}
	ens.Cut(1, 2)
	ens.Member(3).Pause()
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	if held, err := zk.Connect(short, ens.Member(3).ClientAddr()); err == nil {
		t.Error("connected through a paused member")
		held.Close()
	}
	cancelShort()
	if err := ens.Member(4).Kill(); err != nil {
		t.Error(err)
	}
	if n := runtime.NumGoroutine(); n <= before {
		t.Fatalf("%d goroutines with an ensemble running, %d before: the count proves nothing", n, before)
	}
	if len(leftovers()) == 0 {
		t.Fatal("no goroutine of the ensemble found while it runs: leftovers looks for the wrong names")
	}

	if err := ens.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ens.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := os.Stat(ens.dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("data directory %s after Close: %v", ens.dir, err)
	}
	if err := ens.Member(4).Restart(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Restart after Close: %v, want ErrClosed", err)
	}
	// Close waited for the package's goroutines; the runtime may take a
	// moment to retire those of the client and of closed connections.
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := leftovers()
		n := runtime.NumGoroutine()
		if len(left) == 0 && n <= before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after Close, %d before; still running:\n%s", n, before, strings.Join(left, "\n\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
