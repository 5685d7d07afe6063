package bench

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
	"github.com/paddockhq/paddock/zk"
)

// testCtx bounds a test's calls.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func connect(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	c, err := zk.Connect(testCtx(t), addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// stat returns the Stat of path, failing t if it does not exist.
func stat(t *testing.T, c *zk.Conn, path string) *zk.Stat {
	t.Helper()
	ok, st, err := c.Exists(testCtx(t), path)
	if err != nil || !ok {
		t.Fatalf("exists %s: %v, %v", path, ok, err)
	}
	return st
}

// sumStats adds up f over the Stats of root/<prefix><i> for i < n.
func sumStats(t *testing.T, c *zk.Conn, root, prefix string, n int, f func(*zk.Stat) int64) int64 {
	t.Helper()
	var sum int64
	for i := range n {
		sum += f(stat(t, c, root+"/"+prefix+strconv.Itoa(i)))
	}
	return sum
}

func version(s *zk.Stat) int64     { return int64(s.Version) }
func cversion(s *zk.Stat) int64    { return int64(s.Cversion) }
func numChildren(s *zk.Stat) int64 { return int64(s.NumChildren) }

// checkResult checks what every successful run must show.
func checkResult(t *testing.T, cfg Config, res *Result) {
	t.Helper()
	if res.Ops <= 0 || res.OpsPerS <= 0 || res.DurationS <= 0 {
		t.Errorf("ops %d, ops/s %v, duration %v s: want all positive", res.Ops, res.OpsPerS, res.DurationS)
	}
	if cfg.Ops > 0 && res.Ops != cfg.Ops {
		t.Errorf("ops %d, want exactly %d", res.Ops, cfg.Ops)
	}
	if res.Errors != 0 || len(res.ErrorCounts) != 0 || res.WarmupErrors != 0 || res.CleanupErrors != 0 {
		t.Errorf("errors %d %v, warm-up errors %d, cleanup errors %d; want none",
			res.Errors, res.ErrorCounts, res.WarmupErrors, res.CleanupErrors)
	}
	checkOrdered(t, "latency", res.Latency)
	if res.Latency.P50 <= 0 {
		t.Errorf("latency p50 %d µs, want positive", res.Latency.P50)
	}
	// The load generator's own CPU: some, and no more than the window's
	// length on every CPU (a figure per op that was not divided, or summed
	// from the wrong samples, fails one bound or the other).
	if res.ClientCPUUsPerOp == nil || *res.ClientCPUUsPerOp <= 0 {
		t.Errorf("client CPU per op %v, want positive", res.ClientCPUUsPerOp)
	} else if total, most := *res.ClientCPUUsPerOp*float64(res.Ops), (res.DurationS*1.05+0.01)*1e6*float64(runtime.NumCPU()); total > most {
		t.Errorf("client CPU %.0f µs over a %.3f s window on %d CPUs: more than the window allows", total, res.DurationS, runtime.NumCPU())
	}
	if len(cfg.ServerPIDs) > 0 {
		if res.ServerCPUUsPerOp == nil || *res.ServerCPUUsPerOp <= 0 {
			t.Errorf("server CPU per op %v, want positive", res.ServerCPUUsPerOp)
		}
		if res.ServerRSSBytes == nil || *res.ServerRSSBytes < 1<<20 {
			t.Errorf("server RSS %v, want at least 1 MiB", res.ServerRSSBytes)
		}
	}
	if res.Workload != cfg.Workload || res.Servers != cfg.Servers || !strings.HasPrefix(res.Root, "/bench-") {
		t.Errorf("result describes %q on %q under %q", res.Workload, res.Servers, res.Root)
	}
}

// TestWorkloads runs every workload briefly against Paddock and checks
// both the figures and what the workload did to the tree (the runs keep
// their root for that).
func TestWorkloads(t *testing.T) {
	p := zktest.StartPaddock(t, zktest.PaddockOptions{})
	c := connect(t, p.Addr)
	tests := []struct {
		workload string
		change   func(cfg *Config)
		check    func(t *testing.T, cfg Config, res *Result)
	}{
		{WorkloadSet, func(cfg *Config) { cfg.Ops = 2000 }, func(t *testing.T, cfg Config, res *Result) {
			if got := sumStats(t, c, res.Root, "k-", cfg.Keys, version); got != cfg.Ops {
				t.Errorf("keys changed %d times, want %d", got, cfg.Ops)
			}
		}},
		{WorkloadGet, nil, func(t *testing.T, cfg Config, res *Result) {
			if got := sumStats(t, c, res.Root, "k-", cfg.Keys, version); got != 0 {
				t.Errorf("get changed the keys %d times", got)
			}
		}},
		{WorkloadExists, nil, func(t *testing.T, cfg Config, res *Result) {
			if got := sumStats(t, c, res.Root, "k-", cfg.Keys, version); got != 0 {
				t.Errorf("exists changed the keys %d times", got)
			}
		}},
		{WorkloadChildren, nil, func(t *testing.T, cfg Config, res *Result) {
			if got := sumStats(t, c, res.Root, "k-", cfg.Keys, numChildren); got != int64(cfg.Keys*childrenPerKey) {
				t.Errorf("keys have %d children, want %d", got, cfg.Keys*childrenPerKey)
			}
		}},
		{WorkloadMixed, func(cfg *Config) { cfg.Ops, cfg.ReadRatio = 3000, 0.5 }, func(t *testing.T, cfg Config, res *Result) {
			// About half the calls are sets; all of them or none would
			// happen with probability 2^-2999.
			if got := sumStats(t, c, res.Root, "k-", cfg.Keys, version); got <= 0 || got >= cfg.Ops {
				t.Errorf("keys changed %d times in %d mixed calls, want some but not all", got, cfg.Ops)
			}
			if res.ReadRatio == nil || *res.ReadRatio != 0.5 {
				t.Errorf("read_ratio %v, want 0.5", res.ReadRatio)
			}
		}},
		{WorkloadMulti, func(cfg *Config) { cfg.Ops, cfg.MultiOps = 1000, 4 }, func(t *testing.T, cfg Config, res *Result) {
			if got := sumStats(t, c, res.Root, "k-", cfg.Keys, version); got != cfg.Ops*4 {
				t.Errorf("keys changed %d times, want %d multis x 4", got, cfg.Ops)
			}
		}},
		{WorkloadCreate, func(cfg *Config) { cfg.Ops = 2000 }, func(t *testing.T, cfg Config, res *Result) {
			if got := sumStats(t, c, res.Root, "s", cfg.Sessions, numChildren); got != cfg.Ops {
				t.Errorf("%d znodes created, want %d", got, cfg.Ops)
			}
		}},
		{WorkloadEphemeralChurn, func(cfg *Config) { cfg.Ops = 2000 }, func(t *testing.T, cfg Config, res *Result) {
			// Each ephemeral znode changes its parent twice: created, then
			// deleted by a call or, for those left when the run ended, by
			// the end of the session.
			chains := int64(cfg.Sessions * cfg.Inflight)
			if got := sumStats(t, c, res.Root, "s", cfg.Sessions, cversion); got < cfg.Ops || got > cfg.Ops+2*chains {
				t.Errorf("parents changed %d times in %d calls, want %d to %d", got, cfg.Ops, cfg.Ops, cfg.Ops+2*chains)
			}
			if got := sumStats(t, c, res.Root, "s", cfg.Sessions, numChildren); got != 0 {
				t.Errorf("%d ephemeral znodes outlived their sessions", got)
			}
		}},
		{WorkloadSessions, nil, func(t *testing.T, cfg Config, res *Result) {
			if res.Inflight != 1 || res.Sessions != cfg.Sessions {
				t.Errorf("sessions %d, inflight %d; want %d, 1", res.Sessions, res.Inflight, cfg.Sessions)
			}
		}},
		{WorkloadWatchFanout, func(cfg *Config) { cfg.Ops, cfg.Watchers = 150, 4 }, func(t *testing.T, cfg Config, res *Result) {
			if got := stat(t, c, res.Root+"/w").Version; int64(got) != cfg.Ops {
				t.Errorf("watched znode written %d times, want %d", got, cfg.Ops)
			}
			if res.FanoutLatency == nil || res.NotifyLatency == nil || res.RoundLatency == nil {
				t.Fatal("no fanout percentiles")
			}
			f, n, rd := *res.FanoutLatency, *res.NotifyLatency, *res.RoundLatency
			checkOrdered(t, "fanout latency", f)
			checkOrdered(t, "notify latency", n)
			checkOrdered(t, "round latency", rd)
			// The last notification of a round is the round's fanout.
			if f.P50 <= 0 || n.P50 > f.P50 || n.Max != f.Max {
				t.Errorf("fanout %+v, notify %+v: want notifications within their rounds", f, n)
			}
			// A round ends after its last notification and its write's
			// reply: once every watcher is watching again.
			if rd.P50 < f.P50 || rd.Max < f.Max || rd.P50 < res.Latency.P50 || rd.Max < res.Latency.Max {
				t.Errorf("round %+v, fanout %+v, write %+v: want rounds to end after their notifications and writes", rd, f, res.Latency)
			}
			if res.Sessions != 5 || res.Watchers != 4 {
				t.Errorf("sessions %d, watchers %d; want 5, 4", res.Sessions, res.Watchers)
			}
		}},
		{WorkloadPopulate, func(cfg *Config) { cfg.Znodes = 2500 }, func(t *testing.T, cfg Config, res *Result) {
			n, err := c.GetAllChildrenNumber(testCtx(t), res.Root)
			if err != nil || n != 2500+3 {
				t.Errorf("root has %d descendants (%v), want 2500 znodes and 3 parents", n, err)
			}
			if res.Znodes != 2500 || !res.Kept {
				t.Errorf("znodes %d, kept %v; want 2500, true", res.Znodes, res.Kept)
			}
			if got := stat(t, c, res.Root+"/p-2/n-499").DataLength; got != int32(cfg.ValueSize) {
				t.Errorf("the last znode holds %d bytes, want %d", got, cfg.ValueSize)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.workload, func(t *testing.T) {
			cfg := DefaultConfig(p.Addr, tt.workload)
			cfg.Sessions, cfg.Inflight, cfg.Keys = 3, 4, 20
			cfg.Duration = 300 * time.Millisecond
			cfg.ServerPIDs = []int{p.Pid()}
			cfg.Keep = true
			if tt.change != nil {
				tt.change(&cfg)
			}
			res, err := Run(testCtx(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			checkResult(t, cfg, res)
			tt.check(t, cfg, res)
		})
	}
}

// cancelWriter is a progress writer that calls cancel once a progress line
// shows measured calls.
type cancelWriter struct {
	mu     sync.Mutex
	out    strings.Builder
	cancel func()
}

func (w *cancelWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.out.Write(b)
	if s := string(b); strings.Contains(s, " run ") && !strings.Contains(s, " ops 0 ") {
		w.cancel()
	}
	return len(b), nil
}

func (w *cancelWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.String()
}

// TestRunBehaviour covers the warm-up, the cleanup, interruption and
// unreachable servers.
func TestRunBehaviour(t *testing.T) {
	p := zktest.StartPaddock(t, zktest.PaddockOptions{})
	c := connect(t, p.Addr)
	base := func(w string) Config {
		cfg := DefaultConfig(p.Addr, w)
		cfg.Sessions, cfg.Inflight, cfg.Keys = 2, 4, 10
		return cfg
	}

	t.Run("warmup is not measured", func(t *testing.T) {
		cfg := base(WorkloadSet)
		cfg.Warmup, cfg.Ops, cfg.Keep = 200*time.Millisecond, 500, true
		res, err := Run(testCtx(t), cfg)
		if err != nil {
			t.Fatal(err)
		}
		checkResult(t, cfg, res)
		if got := sumStats(t, c, res.Root, "k-", cfg.Keys, version); got <= cfg.Ops {
			t.Errorf("keys changed %d times, want the %d measured sets and the warm-up's", got, cfg.Ops)
		}
		if res.WarmupS != 0.2 {
			t.Errorf("warmup_s %v, want 0.2", res.WarmupS)
		}
	})

	t.Run("open loop", func(t *testing.T) {
		// 400 sets at 2000/s: the last is due 0.1995 s after the start, so
		// the window cannot be shorter; in a closed loop they take a few
		// milliseconds here.
		cfg := base(WorkloadSet)
		cfg.Rate, cfg.Ops = 2000, 400
		res, err := Run(testCtx(t), cfg)
		if err != nil {
			t.Fatal(err)
		}
		checkResult(t, cfg, res)
		if res.Rate != 2000 || res.DurationS < 0.199 {
			t.Errorf("rate %v, window %v s: want 2000 and at least 0.199 s", res.Rate, res.DurationS)
		}
	})

	t.Run("samples", func(t *testing.T) {
		// Every measured call is a line "start_us,latency_us", by start;
		// the warm-up's calls are not.
		var buf bytes.Buffer
		cfg := base(WorkloadSet)
		cfg.Warmup, cfg.Ops, cfg.Samples = 100*time.Millisecond, 300, &buf
		before := time.Now().UnixMicro()
		res, err := Run(testCtx(t), cfg)
		if err != nil {
			t.Fatal(err)
		}
		checkResult(t, cfg, res)
		lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		if len(lines) != 300 {
			t.Fatalf("%d sample lines, want one per measured call (300)", len(lines))
		}
		prev := before + 100_000 // the window begins after the warm-up
		for _, l := range lines {
			start, lat, ok := strings.Cut(l, ",")
			s, err1 := strconv.ParseInt(start, 10, 64)
			d, err2 := strconv.ParseInt(lat, 10, 64)
			if !ok || err1 != nil || err2 != nil || s < prev || d < 0 || s+d > time.Now().UnixMicro() {
				t.Fatalf("sample %q after start %d: want start_us,latency_us in order, within the window", l, prev)
			}
			prev = s
		}
	})

	t.Run("root is deleted", func(t *testing.T) {
		for _, w := range []string{WorkloadChildren, WorkloadCreate} {
			cfg := base(w)
			cfg.Duration = 200 * time.Millisecond
			res, err := Run(testCtx(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			checkResult(t, cfg, res)
			ok, _, err := c.Exists(testCtx(t), res.Root)
			if err != nil || ok || res.Kept {
				t.Errorf("%s: root %s exists: %v (%v), kept %v; want it deleted", w, res.Root, ok, err, res.Kept)
			}
		}
	})

	t.Run("interrupt", func(t *testing.T) {
		ctx, cancel := context.WithCancel(testCtx(t))
		defer cancel()
		progress := &cancelWriter{cancel: cancel}
		cfg := base(WorkloadSet)
		cfg.Duration, cfg.Progress, cfg.ProgressInterval = time.Minute, progress, 20*time.Millisecond
		start := time.Now()
		res, err := Run(ctx, cfg)
		if !errors.Is(err, context.Canceled) || res == nil {
			t.Fatalf("Run = %v, %v; want a result and context.Canceled", res, err)
		}
		if !res.Interrupted || res.Ops <= 0 || res.Errors != 0 || time.Since(start) > 30*time.Second {
			t.Errorf("interrupted %v, ops %d, errors %d after %v", res.Interrupted, res.Ops, res.Errors, time.Since(start))
		}
		if ok, _, err := c.Exists(testCtx(t), res.Root); err != nil || ok {
			t.Errorf("root of the interrupted run exists: %v (%v)", ok, err)
		}
		out := progress.String()
		if !strings.Contains(out, "ops/s") || !strings.HasSuffix(out, "\r") {
			t.Errorf("progress output %q: want progress lines, then the line cleared", out)
		}
	})

	t.Run("no server", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(testCtx(t), time.Second)
		defer cancel()
		cfg := base(WorkloadSet)
		cfg.Servers = "127.0.0.1:" + strconv.Itoa(zktest.FreePort(t))
		if res, err := Run(ctx, cfg); !errors.Is(err, zk.ErrNoServer) || res != nil {
			t.Errorf("Run = %v, %v; want no result and ErrNoServer", res, err)
		}
	})

	t.Run("invalid config", func(t *testing.T) {
		cfg := base("bogus")
		if _, err := Run(testCtx(t), cfg); err == nil || !strings.Contains(err.Error(), "bogus") {
			t.Errorf("Run = %v, want the validation error", err)
		}
	})
}

// TestServerDies kills the server during a run: the calls fail, are
// counted by cause, and the run still ends and reports.
func TestServerDies(t *testing.T) {
	res := runServerKilled(t, 2, 4, 2*time.Second)
	if res.Ops <= 0 || res.Errors <= 0 || res.Errors != sumCounts(res.ErrorCounts) {
		t.Errorf("ops %d, errors %d %v: want calls before the kill and errors after it", res.Ops, res.Errors, res.ErrorCounts)
	}
	for k := range res.ErrorCounts {
		if !strings.HasPrefix(k, "getData: zk: ") {
			t.Errorf("error cause %q, want a getData error", k)
		}
	}
	if res.CleanupErrors == 0 {
		t.Error("no cleanup errors with the server gone")
	}
}

// runServerKilled runs the get workload with sessions sessions of inflight
// calls each for d against a Paddock server that is killed at the first
// progress line, and returns the result.
func runServerKilled(t *testing.T, sessions, inflight int, d time.Duration) *Result {
	t.Helper()
	p := zktest.StartPaddock(t, zktest.PaddockOptions{})
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	var once sync.Once
	progress := &cancelWriter{cancel: func() { once.Do(func() { go p.Kill() }) }}
	cfg := DefaultConfig(p.Addr, WorkloadGet)
	cfg.Sessions, cfg.Inflight, cfg.Keys = sessions, inflight, 10
	cfg.Duration, cfg.SessionTimeout = d, 2*time.Second
	cfg.Progress, cfg.ProgressInterval = progress, 20*time.Millisecond
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func sumCounts(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// TestAgainstZooKeeper runs a few workloads against Apache ZooKeeper: the
// tool is for any ZooKeeper-protocol server.
func TestAgainstZooKeeper(t *testing.T) {
	p := zktest.StartZooKeeper(t, zktest.ZKOptions{})
	c := connect(t, p.Addr)
	for _, w := range []string{WorkloadMulti, WorkloadEphemeralChurn, WorkloadWatchFanout} {
		t.Run(w, func(t *testing.T) {
			cfg := DefaultConfig(p.Addr, w)
			cfg.Sessions, cfg.Inflight, cfg.Keys, cfg.Watchers = 2, 4, 10, 3
			cfg.Ops, cfg.MultiOps = 300, 3
			cfg.ServerPIDs = []int{p.Pid()}
			res, err := Run(testCtx(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			checkResult(t, cfg, res)
			if ok, _, err := c.Exists(testCtx(t), res.Root); err != nil || ok {
				t.Errorf("root %s exists: %v (%v), want it deleted", res.Root, ok, err)
			}
		})
	}
}
