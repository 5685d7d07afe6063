package consistency_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/paddocktest"
	"github.com/paddockhq/paddock/zk"
)

var seedFlag = flag.Uint64("seed", 0, "seed of the nemesis and the clients' random choices (0: a new one each run)")

const (
	// sessionTimeout is every client's session timeout: the longest the
	// default 200 ms tick allows, so that faults of a second or two do not
	// expire sessions, while a client that hears nothing from its member
	// gives up on it (after two thirds of it) within three seconds.
	sessionTimeout = 4 * time.Second
	// callTimeout bounds one client call.
	callTimeout = 5 * time.Second
	// recoverTimeout bounds how long the ensemble may take to serve again
	// once a fault is healed, and every wait at the end of a test.
	recoverTimeout = 30 * time.Second
	// pollEvery is the interval between checks of a polled condition.
	pollEvery = 20 * time.Millisecond
)

// electionTimeout is set explicitly: the default for a 200 ms tick (100 ms)
// makes elections happen on their own on a busy two-core machine running
// the race detector, which slows the workloads without testing more.
var ensembleConfig = map[string]string{"paddock.raft.electionTimeoutMs": "300"}

// workloadDuration is how long the workloads run under the nemesis.
func workloadDuration() time.Duration {
	switch {
	case testing.Short():
		return 4 * time.Second
	case raceEnabled:
		return 6 * time.Second
	default:
		return 12 * time.Second
	}
}

// env is one test's ensemble with its seed, its random source and the
// members' logs.
type env struct {
	t    *testing.T
	ens  *paddocktest.Ensemble
	seed uint64
	logs *logBuffer

	logSeed sync.Once
}

// newEnv starts an ensemble of members voting members for t. On failure the members' logs are written to an artifact
// directory named in the log.
func newEnv(t *testing.T, members int) *env {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	logs := &logBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	e := &env{t: t, seed: seed, logs: logs}
	// Registered before Start, so it runs after the ensemble's Close and
	// the logs include the shutdown.
	t.Cleanup(func() {
		if t.Failed() {
			p := filepath.Join(artifactDir(t), "members.log")
			if err := os.WriteFile(p, logs.bytes(), 0o644); err != nil {
				t.Logf("writing members' logs: %v", err)
				return
			}
			t.Logf("members' logs: %s", p)
		}
	})
	e.ens = paddocktest.Start(t, paddocktest.Options{
		Members:     members,
		ExtraConfig: ensembleConfig,
		Logger:      logger,
	})
	return e
}

// rng returns a random source for one part of the test (the nemesis, a
// client), seeded by the test's seed and stream.
func (e *env) rng(stream uint64) *rand.Rand {
	e.logSeed.Do(func() {
		e.t.Logf("seed %d (replay: go test ./test/consistency -run '^%s$' -seed %d)", e.seed, topName(e.t), e.seed)
	})
	return rand.New(rand.NewPCG(e.seed, stream))
}

func topName(t *testing.T) string {
	name, _, _ := strings.Cut(t.Name(), "/")
	return name
}

// artifactDir returns a directory that outlives the test (t.TempDir is
// removed when it ends), for files that explain a failure.
func artifactDir(t *testing.T) string {
	name := regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(t.Name(), "_")
	dir, err := os.MkdirTemp("", "paddock-consistency-"+name+"-")
	if err != nil {
		t.Fatalf("artifact directory: %v", err)
	}
	return dir
}

// logBuffer collects the members' logs.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

// dial opens a session that tries member prefer first and the others, in
// id order, after it: a client "of" that member, which moves elsewhere
// only when it must.
func (e *env) dial(ctx context.Context, prefer int, opts ...zk.Option) (*zk.Conn, error) {
	addrs := []string{e.ens.Member(prefer).ClientAddr()}
	for _, m := range e.ens.Members() {
		if m.ID() != prefer {
			addrs = append(addrs, m.ClientAddr())
		}
	}
	opts = append([]zk.Option{
		zk.WithSessionTimeout(sessionTimeout),
		zk.WithHostProvider(func(hosts []string) zk.HostProvider { return &orderedHosts{addrs: hosts} }),
	}, opts...)
	return zk.Connect(ctx, strings.Join(addrs, ","), opts...)
}

// dialOnly opens a session with member id alone.
func (e *env) dialOnly(ctx context.Context, id int, opts ...zk.Option) (*zk.Conn, error) {
	opts = append([]zk.Option{zk.WithSessionTimeout(sessionTimeout)}, opts...)
	return zk.Connect(ctx, e.ens.Member(id).ClientAddr(), opts...)
}

// mustDial is dial that fails t on error and closes the session at cleanup.
func (e *env) mustDial(prefer int, opts ...zk.Option) *zk.Conn {
	e.t.Helper()
	c, err := e.dial(callCtx(e.t), prefer, opts...)
	if err != nil {
		e.t.Fatalf("connect preferring member %d: %v", prefer, err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// healEverything undoes every fault and waits until every member serves.
func (e *env) healEverything() {
	e.t.Helper()
	e.ens.HealAll()
	for _, m := range e.ens.Members() {
		m.Resume()
		if !m.Running() {
			if err := m.Restart(); err != nil {
				e.t.Fatalf("restart %v: %v", m, err)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), recoverTimeout)
	defer cancel()
	if err := e.ens.WaitServing(ctx); err != nil {
		e.t.Fatalf("ensemble does not serve after healing every fault: %v", err)
	}
}

// orderedHosts is zk.StaticHostProvider without the shuffle: the first
// address is tried first.
type orderedHosts struct {
	mu    sync.Mutex
	addrs []string
	next  int
	tried int
}

func (p *orderedHosts) Next(context.Context) (string, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	addr := p.addrs[p.next]
	p.next = (p.next + 1) % len(p.addrs)
	p.tried++
	round := p.tried > len(p.addrs)
	if round {
		p.tried = 1
	}
	return addr, round, nil
}

func (p *orderedHosts) Connected() {
	p.mu.Lock()
	p.tried = 0
	p.mu.Unlock()
}

func (p *orderedHosts) Len() int { return len(p.addrs) }

// callCtx returns a context for one call of the test goroutine.
func callCtx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(t.Context(), callTimeout)
	t.Cleanup(cancel)
	return c
}

// eventually polls cond every pollEvery until it returns nil or timeout
// passes, then fails t with cond's last error.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true after %v: %v", what, timeout, err)
		}
		<-tick.C
	}
}

// mustCreate creates path (persistent, no data unless given), retrying on
// connection loss and accepting that an earlier attempt made it.
func mustCreate(t testing.TB, c *zk.Conn, path string, data []byte) {
	t.Helper()
	err := zk.Retry(callCtx(t), func(ctx context.Context) error {
		_, err := c.Create(ctx, path, data, zk.OpenACL, zk.ModePersistent)
		if errors.Is(err, zk.ErrNodeExists) {
			return nil
		}
		return err
	})
	if err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
}

// sessionLost reports whether err means the Conn is done for and a new
// session is needed.
func sessionLost(err error) bool {
	return errors.Is(err, zk.ErrSessionExpired) || errors.Is(err, zk.ErrClosed) || errors.Is(err, zk.ErrAuthFailed)
}

// sleepCtx waits d or until ctx ends; it reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// clock gives times in nanoseconds since the start of a test's history.
type clock struct{ start time.Time }

func newClock() clock      { return clock{start: time.Now()} }
func (c clock) now() int64 { return int64(time.Since(c.start)) }

// fmtNs formats a clock time for messages.
func fmtNs(ns int64) string { return fmt.Sprintf("%.3fs", float64(ns)/1e9) }
