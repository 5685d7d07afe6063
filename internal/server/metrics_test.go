package server

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/metrics/metricstest"
	"github.com/paddockhq/paddock/internal/proto"
)

// withMetrics turns metrics on, on a free loopback port.
func withMetrics(c *config.Config) {
	c.MetricsEnabled, c.MetricsHost, c.MetricsPort = true, "127.0.0.1", 0
}

// waitMetric scrapes addr until ok accepts the scrape, or fails after 10 s.
func waitMetric(t *testing.T, addr, what string, ok func(metricstest.Families) bool) metricstest.Families {
	t.Helper()
	return waitMetricWhy(t, addr, what, func(f metricstest.Families) string {
		if ok(f) {
			return ""
		}
		return "not yet"
	})
}

// waitMetricWhy scrapes addr until check finds nothing wrong (returns ""),
// or fails after 10 s with what check found last.
func waitMetricWhy(t *testing.T, addr, what string, check func(metricstest.Families) string) metricstest.Families {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		fams := metricstest.Scrape(t, addr)
		why := check(fams)
		if why == "" {
			return fams
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %s", what, why)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMetricsStandalone scrapes a standalone server before and after
// traffic: every listed family is there, and the values move as they must.
func TestMetricsStandalone(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		withMetrics(c)
		c.SnapCount = 20 // so the writes below take a snapshot
		c.MaxClientCnxns = 1
	})
	addr := s.MetricsAddr().String()
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("MetricsAddr %s, want loopback", addr)
	}
	before := metricstest.Scrape(t, addr)
	names := metricstest.Names(t)

	c := dial(t, s.Addr().String())
	const creates, reads = 30, 25
	for i := 0; i < creates; i++ {
		c.mustCreate(fmt.Sprintf("/m%d", i), "some data", 0)
	}
	for i := 0; i < reads; i++ {
		if h, _ := c.call(proto.OpGetData, &proto.GetDataRequest{Path: "/m1"}, nil); h.Err != proto.ErrOK {
			t.Fatalf("getData: %v", h.Err)
		}
	}
	grew := []struct {
		name   string
		labels []string
		by     float64 // at least
	}{
		{"znode_count", nil, creates},
		{"approximate_data_size", nil, creates * 9},
		{"readlatency", nil, reads},
		{"paddock_request_duration_seconds", []string{"op", "getData"}, reads},
		{"updatelatency", nil, creates},
		{"paddock_request_duration_seconds", []string{"op", "create"}, creates},
		{"proposal_latency", nil, creates},
		{"paddock_raft_proposal_duration_seconds", nil, creates},
		{"fsynctime", nil, 1},
		{"paddock_wal_fsync_duration_seconds", nil, 1},
		{"paddock_raft_applied_index", nil, creates},
		{"paddock_raft_commit_index", nil, creates},
		{"packets_received", nil, creates + reads},
		{"packets_sent", nil, creates + reads},
		{"bytes_received_count", nil, (creates + reads) * 20},
		{"connection_request_count", nil, 1},
		{"global_sessions", nil, 1},
		{"paddock_sessions", nil, 1},
		{"num_alive_connections", nil, 1},
		{"paddock_snapshot_duration_seconds", nil, 1},
		{"paddock_wal_written_bytes_total", nil, creates * 20},
	}
	// A snapshot follows the writes in the background, and a reply may
	// reach the client just before its request is recorded: wait until
	// every value has grown. One scrape may read the raft status before
	// a snapshot is recorded there and its duration after: wait for the
	// status too.
	after := waitMetricWhy(t, addr, "every value to grow", func(f metricstest.Families) string {
		for _, g := range grew {
			b, _ := before.Value(g.name, g.labels...)
			if a, _ := f.Value(g.name, g.labels...); a-b < g.by {
				return fmt.Sprintf("%s%v went from %v to %v, want it to grow by at least %v", g.name, g.labels, b, a, g.by)
			}
		}
		if v, _ := f.Value("paddock_raft_snapshot_index"); v == 0 {
			return "paddock_raft_snapshot_index is still 0"
		}
		return ""
	})
	metricstest.Check(t, after, names, "all", "runtime")
	sane := []struct {
		name    string
		lo, hi  float64
		labels  []string
		comment string
	}{
		{"paddock_serving", 1, 1, nil, "a standalone server serves"},
		{"paddock_raft_is_leader", 1, 1, nil, "a standalone server leads its raft group of one"},
		{"paddock_raft_term", 1, 1e6, nil, ""},
		{"uptime", 1, 3600e3, nil, "ms"},
		{"open_file_descriptor_count", 5, 1e6, nil, ""},
		{"max_file_descriptor_count", 5, 1e12, nil, ""},
		{"outstanding_requests", 0, 0, nil, "nothing in flight"},
		{"paddock_snapshot_size_bytes", 100, 1e9, nil, ""},
		{"paddock_raft_snapshot_index", 11, 1e6, nil, "snapCount 20 draws 11 to 20 entries"},
		{"paddock_wal_slow_fsyncs_total", 0, 0, nil, "the default threshold is 1 s"},
		{"paddock_wal_fsync_warning_threshold_seconds", 1, 1, nil, ""},
		{"stale_sessions_expired", 0, 0, nil, ""},
		{"election_time", 0, 0, nil, "no election in standalone mode"},
	}
	for _, c := range sane {
		if v := after.Must(t, c.name, c.labels...); v < c.lo || v > c.hi {
			t.Errorf("%s = %v, want it in [%v, %v] (%s)", c.name, v, c.lo, c.hi, c.comment)
		}
	}
	if _, ok := after.Value("quorum_size"); ok {
		t.Error("a standalone server reports quorum_size")
	}

	// A second connection from the same address is over maxClientCnxns.
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	waitMetric(t, addr, "connection_rejected", func(f metricstest.Families) bool { v, _ := f.Value("connection_rejected"); return v == 1 })
	// A client that goes away without closing its session is a dropped
	// connection.
	c.nc.Close()
	waitMetric(t, addr, "connection_drop_count", func(f metricstest.Families) bool { v, _ := f.Value("connection_drop_count"); return v == 1 })
}

// TestMetricsSessionExpiry checks that an expired session is counted.
func TestMetricsSessionExpiry(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		withMetrics(c)
		c.TickTime = 50 * time.Millisecond
		c.MinSessionTimeout, c.MaxSessionTimeout = 100*time.Millisecond, 200*time.Millisecond
	})
	c := dial(t, s.Addr().String())
	c.nc.Close()
	waitMetric(t, s.MetricsAddr().String(), "stale_sessions_expired", func(f metricstest.Families) bool {
		v, _ := f.Value("stale_sessions_expired")
		return v == 1
	})
}

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestMetricsSlowFsync sets a zero threshold, so every WAL fsync is slow:
// each is logged as a warning naming the duration and threshold, with or
// without the metrics endpoint, and counted when metrics are on.
func TestMetricsSlowFsync(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("metrics=%v", on), func(t *testing.T) {
			var logs syncBuffer
			cfg := config.Default()
			cfg.ClientPort, cfg.DataDir = 0, t.TempDir()
			cfg.DataLogDir = cfg.DataDir
			if on {
				withMetrics(cfg)
			}
			cfg.FsyncWarningThreshold = 0
			s, err := New(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			c := dial(t, s.Addr().String())
			c.mustCreate("/slow", "", 0)
			out := logs.String()
			if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "fsync-ing the write ahead log") ||
				!strings.Contains(out, "threshold_ms=0") || !strings.Contains(out, "took_ms=") {
				t.Errorf("no slow-fsync warning with duration and threshold in the log:\n%s", out)
			}
			if !on {
				return
			}
			fams := metricstest.Scrape(t, s.MetricsAddr().String())
			slow, fsyncs := fams.Must(t, "paddock_wal_slow_fsyncs_total"), fams.Must(t, "fsynctime")
			if slow < 1 || slow != fsyncs {
				t.Errorf("paddock_wal_slow_fsyncs_total = %v, fsynctime count %v: want every fsync counted as slow", slow, fsyncs)
			}
			if warnings := float64(strings.Count(logs.String(), "fsync-ing the write ahead log")); warnings < slow {
				t.Errorf("%v warnings logged for %v slow fsyncs", warnings, slow)
			}
		})
	}
}

// TestMetricsEnsemble scrapes every member of a three-member ensemble: the
// leader reports ZooKeeper's leader gauges with both followers synced, the
// followers do not, and all agree on the raft term and, after traffic, on
// the applied index.
func TestMetricsEnsemble(t *testing.T) {
	ens := startEnsembleWith(t, 3, 0, withMetrics)
	names := metricstest.Names(t)
	var leader *Server
	for _, s := range ens {
		if s.mode() == "leader" {
			leader = s
		}
	}
	if leader == nil {
		t.Fatal("no leader")
	}
	c := dial(t, leader.Addr().String())
	for i := 0; i < 10; i++ {
		c.mustCreate(fmt.Sprintf("/e%d", i), "x", 0)
	}
	want := float64(leader.node.Status().Commit)
	fams := waitMetric(t, leader.MetricsAddr().String(), "both followers synced and the writes recorded", func(f metricstest.Families) bool {
		synced, _ := f.Value("synced_followers")
		writes, _ := f.Value("updatelatency")
		return synced == 2 && writes >= 10
	})
	metricstest.Check(t, fams, names, "all", "ensemble", "leader", "runtime")
	for name, want := range map[string]float64{"quorum_size": 3, "learners": 2, "synced_observers": 0, "paddock_raft_is_leader": 1} {
		if v := fams.Must(t, name); v != want {
			t.Errorf("leader: %s = %v, want %v", name, v, want)
		}
	}
	if v := fams.Must(t, "leader_uptime"); v <= 0 || v > 600e3 {
		t.Errorf("leader_uptime = %v ms", v)
	}
	if v := fams.Must(t, "election_time"); v < 1 {
		t.Errorf("leader: election_time count %v, want the election that made it leader", v)
	}
	if v := fams.Must(t, "updatelatency"); v < 10 {
		t.Errorf("leader: updatelatency count %v, want at least 10", v)
	}
	term := fams.Must(t, "paddock_raft_term")
	for _, s := range ens {
		if s == leader {
			continue
		}
		waitMetric(t, s.MetricsAddr().String(), "the follower to apply the writes", func(f metricstest.Families) bool {
			v, _ := f.Value("paddock_raft_applied_index")
			return v >= want
		})
		fc := dial(t, s.Addr().String())
		if h, _ := fc.call(proto.OpGetData, &proto.GetDataRequest{Path: "/e9"}, nil); h.Err != proto.ErrOK {
			t.Fatalf("member %d: getData: %v", s.cfg.ServerID, h.Err)
		}
		// The reply may reach the client just before the request is
		// recorded.
		f := waitMetric(t, s.MetricsAddr().String(), "the getData to be recorded", func(f metricstest.Families) bool {
			v, _ := f.Value("paddock_request_duration_seconds", "op", "getData")
			return v == 1
		})
		metricstest.Check(t, f, names, "all", "ensemble", "runtime")
		for name, want := range map[string]float64{"quorum_size": 3, "paddock_raft_term": term, "paddock_raft_is_leader": 0,
			"paddock_serving": 1, "znode_count": fams.Must(t, "znode_count")} {
			if v := f.Must(t, name); v != want {
				t.Errorf("member %d: %s = %v, want %v", s.cfg.ServerID, name, v, want)
			}
		}
		if v := f.Must(t, "fsynctime"); v < 1 {
			t.Errorf("member %d: fsynctime count %v, want the followers' own fsyncs", s.cfg.ServerID, v)
		}
	}
}

// TestMetricsBindFailure checks that a taken metrics port fails Start with
// an error naming the keys and the address, and leaves nothing running.
func TestMetricsBindFailure(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg := config.Default()
	cfg.ClientPort, cfg.DataDir = 0, t.TempDir()
	cfg.DataLogDir = cfg.DataDir
	cfg.MetricsEnabled, cfg.MetricsPort = true, taken.Addr().(*net.TCPAddr).Port
	s, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Start()
	if err == nil {
		s.Close()
		t.Fatal("Start succeeded on a taken metrics port")
	}
	for _, want := range []string{"metricsProvider.httpPort", taken.Addr().String()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	// The data directory is free again: a new server on it starts.
	cfg2 := *cfg
	cfg2.MetricsEnabled = false
	s2, err := New(&cfg2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Start(); err != nil {
		t.Fatalf("restart after the failed start: %v", err)
	}
	s2.Close()
}

// TestMetricsOff checks that a server without metrics listens for none.
func TestMetricsOff(t *testing.T) {
	s := startServer(t, nil)
	if s.MetricsAddr() != nil || s.metrics != nil {
		t.Errorf("metrics on by default: %v", s.MetricsAddr())
	}
}
