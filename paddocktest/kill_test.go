package paddocktest_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/paddocktest"
)

// logRecorder is a slog.Handler that keeps every message logged.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *logRecorder) WithGroup(string) slog.Handler            { return r }
func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	r.msgs = append(r.msgs, rec.Message)
	r.mu.Unlock()
	return nil
}

func (r *logRecorder) logged(substr string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.msgs {
		if strings.Contains(m, substr) {
			return true
		}
	}
	return false
}

// A killed leader's ports refuse connections, as a dead process's do, so
// its followers elect a new leader at once instead of after an election
// timeout (internal/raftnode's failover), and the killed member comes back
// on the same ports.
func TestKillLeaderElectsAtOnce(t *testing.T) {
	// A long election timeout: a follower that waited it out would have
	// no new leader for at least this long after the kill.
	const electionTimeout = 4 * time.Second
	rec := &logRecorder{}
	ens := paddocktest.Start(t, paddocktest.Options{
		Logger: slog.New(rec),
		ExtraConfig: map[string]string{
			"paddock.raft.electionTimeoutMs": "4000",
			"paddock.raft.heartbeatMs":       "100",
		},
	})
	ctx := testCtx(t)
	old, err := ens.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	addr := old.ClientAddr()
	if err := old.Kill(); err != nil {
		t.Fatal(err)
	}
	if c, err := net.Dial("tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			c.Close()
		}
		t.Errorf("dialing the killed member's client address: %v, want connection refused", err)
	}
	// The wait is bounded well below the election timeout (the followers
	// heard the leader at most a heartbeat before the kill); the fast
	// election takes milliseconds.
	fast, cancel := context.WithTimeout(ctx, electionTimeout*3/4)
	defer cancel()
	leader, err := ens.Leader(fast)
	if err != nil {
		t.Fatalf("no new leader within %v of the kill, under an election timeout of %v: %v", electionTimeout*3/4, electionTimeout, err)
	}
	if leader == old {
		t.Fatalf("member %d still leads after it was killed", old.ID())
	}
	if !rec.logged("the leader's process is gone") {
		t.Error("no follower logged that the leader's process is gone")
	}

	if err := old.Restart(); err != nil {
		t.Fatal(err)
	}
	if old.ClientAddr() != addr {
		t.Fatalf("client address moved from %s to %s", addr, old.ClientAddr())
	}
	waitFor(t, catchUp, "the restarted member does not follow", func() bool { return old.Mode() == "follower" })
	oc := connect(t, ctx, addr)
	create(t, ctx, oc, "/after-restart", "x")
	if got := readAfterSync(t, ctx, oc, "/after-restart"); got != "x" {
		t.Fatalf("restarted member read %q", got)
	}
	if err := ens.WaitServing(ctx); err != nil {
		t.Fatal(err)
	}
}

// A stopped member's ports refuse connections until Restart.
func TestStopRefusesConnections(t *testing.T) {
	ens := paddocktest.Start(t, paddocktest.Options{})
	ctx := testCtx(t)
	m := ens.Member(3)
	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	if c, err := net.Dial("tcp", m.ClientAddr()); !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("dialing the stopped member's client address: %v, want connection refused", err)
	}
	if err := m.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := ens.WaitServing(ctx); err != nil {
		t.Fatal(err)
	}
	c := connect(t, ctx, m.ClientAddr())
	create(t, ctx, c, "/back", "")
}
