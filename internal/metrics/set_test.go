package metrics

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape serves h once and parses the text exposition it returns.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), "GET", "/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{header: http.Header{}}
	h.ServeHTTP(rec, req)
	if rec.code != 0 && rec.code != http.StatusOK {
		t.Fatalf("scrape: status %d: %s", rec.code, rec.body.String())
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(&rec.body)
	if err != nil {
		t.Fatalf("parsing the exposition: %v", err)
	}
	return fams
}

// recorder is a minimal http.ResponseWriter.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.code = code }

// logBuffer collects log records for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("metric %s missing", name)
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.Label {
				if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		return m
	}
	t.Fatalf("metric %s%v missing", name, labels)
	return nil
}

func TestSetRequests(t *testing.T) {
	s, err := NewSet(Options{Ops: map[int32]string{4: "getData", 1: "create", -11: "closeSession"}})
	if err != nil {
		t.Fatal(err)
	}
	s.ObserveRequest(4, false, 2*time.Millisecond)
	s.ObserveRequest(4, false, 4*time.Millisecond)
	s.ObserveRequest(1, true, 10*time.Millisecond)
	s.ObserveRequest(-11, true, time.Millisecond)
	s.ObserveRequest(77, false, time.Millisecond)    // unnamed, inside the table
	s.ObserveRequest(-5000, false, time.Millisecond) // outside it
	fams := scrape(t, s.Handler())

	tests := []struct {
		op    string
		count uint64
	}{{"getData", 2}, {"create", 1}, {"closeSession", 1}, {"other", 2}}
	for _, tt := range tests {
		h := value(t, fams, "paddock_request_duration_seconds", "op", tt.op).GetHistogram()
		if h.GetSampleCount() != tt.count {
			t.Errorf("op %s: count %d, want %d", tt.op, h.GetSampleCount(), tt.count)
		}
	}
	read := value(t, fams, "readlatency").GetSummary()
	if read.GetSampleCount() != 4 || read.GetSampleSum() < 7.99 || read.GetSampleSum() > 8.01 {
		t.Errorf("readlatency count %d sum %v ms, want 4 and 8", read.GetSampleCount(), read.GetSampleSum())
	}
	if len(read.Quantile) != 3 {
		t.Errorf("readlatency has %d quantiles, want ZooKeeper's advanced three", len(read.Quantile))
	}
	if upd := value(t, fams, "updatelatency").GetSummary(); upd.GetSampleCount() != 2 {
		t.Errorf("updatelatency count %d, want 2", upd.GetSampleCount())
	}
	if fams["go_goroutines"] != nil || fams["process_open_fds"] != nil {
		t.Error("runtime collectors registered without ExportRuntime")
	}
}

func TestSetRejectsBadOps(t *testing.T) {
	for _, ops := range []map[int32]string{{5000: "big"}, {3: ""}, {3: "other"}} {
		if _, err := NewSet(Options{Ops: ops}); err == nil {
			t.Errorf("NewSet(Ops %v) accepted", ops)
		}
	}
}

func TestObserveRequestAllocs(t *testing.T) {
	s, err := NewSet(Options{Ops: map[int32]string{4: "getData"}})
	if err != nil {
		t.Fatal(err)
	}
	s.ObserveRequest(4, false, time.Millisecond) // resolves the child
	s.ObserveRequest(9, false, time.Millisecond)
	for _, op := range []int32{4, 9} {
		if n := testing.AllocsPerRun(1000, func() { s.ObserveRequest(op, op == 9, 300*time.Microsecond) }); n != 0 {
			t.Errorf("ObserveRequest(%d) allocates %v times", op, n)
		}
	}
}

// TestNilSet checks that a server without metrics may call everything.
func TestNilSet(t *testing.T) {
	var s *Set
	s.ObserveRequest(4, true, time.Second)
	s.ObserveFsync(time.Hour)
	s.ObserveSnapshot(time.Second, 10)
	s.ObserveProposal(time.Second)
	s.ObserveElection(time.Second)
	s.Looking()
	s.ConnectionRequested()
	s.ConnectionRejected()
	s.ConnectionDropped()
	s.BytesReceived(10)
	s.SessionExpired()
}

func TestSlowFsync(t *testing.T) {
	var logs logBuffer
	s, err := NewSet(Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), FsyncWarningThreshold: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s.ObserveFsync(5 * time.Millisecond)
	s.ObserveFsync(20 * time.Millisecond) // not longer than the threshold
	if logs.String() != "" {
		t.Fatalf("fast fsyncs logged: %s", logs.String())
	}
	s.ObserveFsync(1500 * time.Millisecond)
	out := logs.String()
	for _, want := range []string{"level=WARN", "fsync-ing the write ahead log", "took_ms=1500", "threshold_ms=20"} {
		if !strings.Contains(out, want) {
			t.Errorf("log %q lacks %q", out, want)
		}
	}
	fams := scrape(t, s.Handler())
	if got := value(t, fams, "paddock_wal_slow_fsyncs_total").GetCounter().GetValue(); got != 1 {
		t.Errorf("paddock_wal_slow_fsyncs_total = %v, want 1", got)
	}
	if got := value(t, fams, "fsynctime").GetSummary(); got.GetSampleCount() != 3 || len(got.Quantile) != 1 {
		t.Errorf("fsynctime count %d quantiles %d, want 3 and ZooKeeper's basic one", got.GetSampleCount(), len(got.Quantile))
	}
	if got := value(t, fams, "paddock_wal_fsync_duration_seconds").GetHistogram().GetSampleCount(); got != 3 {
		t.Errorf("fsync histogram count %d, want 3", got)
	}
	if got := value(t, fams, "paddock_wal_fsync_warning_threshold_seconds").GetGauge().GetValue(); got != 0.02 {
		t.Errorf("threshold gauge %v, want 0.02", got)
	}
}

func TestStateCollector(t *testing.T) {
	var leading bool
	var mu sync.Mutex
	s, err := NewSet(Options{ExportRuntime: true, State: func(st *State) {
		mu.Lock()
		defer mu.Unlock()
		st.ZnodeCount, st.WatchCount, st.DataWatches, st.ChildWatches = 7, 3, 2, 1
		st.Uptime = 1500 * time.Millisecond
		st.Raft = RaftState{Term: 4, CommitIndex: 10, AppliedIndex: 9, IsLeader: leading}
		st.Quorum = &QuorumState{Size: 3, Leading: leading, Learners: 2, SyncedFollowers: 2, LeaderUptime: time.Second}
	}})
	if err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, s.Handler())
	checks := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"znode_count", nil, 7}, {"watch_count", nil, 3}, {"uptime", nil, 1500},
		{"paddock_watches", []string{"kind", "data"}, 2}, {"paddock_watches", []string{"kind", "child"}, 1},
		{"paddock_raft_term", nil, 4}, {"paddock_raft_commit_index", nil, 10}, {"paddock_raft_applied_index", nil, 9},
		{"quorum_size", nil, 3}, {"paddock_raft_is_leader", nil, 0},
	}
	for _, c := range checks {
		if got := value(t, fams, c.name, c.labels...).GetGauge().GetValue(); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	for _, name := range []string{"learners", "synced_followers", "leader_uptime"} {
		if fams[name] != nil {
			t.Errorf("follower reports the leader-only %s", name)
		}
	}
	if fams["go_goroutines"] == nil || fams["process_open_fds"] == nil {
		t.Error("ExportRuntime did not add the runtime and process collectors")
	}
	mu.Lock()
	leading = true
	mu.Unlock()
	fams = scrape(t, s.Handler())
	for name, want := range map[string]float64{"learners": 2, "synced_followers": 2, "leader_uptime": 1000, "paddock_raft_is_leader": 1} {
		if got := value(t, fams, name).GetGauge().GetValue(); got != want {
			t.Errorf("leader: %s = %v, want %v", name, got, want)
		}
	}
}

func TestEndpoint(t *testing.T) {
	s, err := NewSet(Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.SessionExpired()
	ep, err := Listen("127.0.0.1:0", s.Handler(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	base := "http://" + ep.Addr().String()
	get := func(method, path string) (int, string) {
		req, err := http.NewRequest(method, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get("GET", "/metrics"); code != 200 || !strings.Contains(body, "stale_sessions_expired 1") {
		t.Errorf("GET /metrics: %d %q", code, body)
	}
	if code, _ := get("HEAD", "/metrics"); code != 200 {
		t.Errorf("HEAD /metrics: %d", code)
	}
	if code, _ := get("POST", "/metrics"); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: %d, want 405", code)
	}
	if code, _ := get("GET", "/"); code != http.StatusNotFound {
		t.Errorf("GET /: %d, want 404", code)
	}

	// A second endpoint on the same address fails at once, naming it.
	if _, err := Listen(ep.Addr().String(), s.Handler(), nil); err == nil || !strings.Contains(err.Error(), ep.Addr().String()) {
		t.Errorf("Listen on a bound address: %v", err)
	}
	addr := ep.Addr().String()
	if err := ep.Close(); err != nil {
		t.Fatal(err)
	}
	ep.Close()
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Error("endpoint still accepts connections after Close")
	}
}

func TestSlowFsyncsThreshold(t *testing.T) {
	tests := []struct {
		threshold, took time.Duration
		slow            bool
	}{
		{0, time.Nanosecond, true},
		{0, 0, false},
		{time.Second, time.Second, false},
		{time.Second, time.Second + time.Microsecond, true},
		{time.Second, 10 * time.Millisecond, false},
	}
	for _, tt := range tests {
		f := NewSlowFsyncs(nil, tt.threshold)
		if got := f.Observe(tt.took); got != tt.slow {
			t.Errorf("threshold %v, took %v: slow %v, want %v", tt.threshold, tt.took, got, tt.slow)
		}
		if want := map[bool]uint64{true: 1}[tt.slow]; f.Count() != want {
			t.Errorf("threshold %v, took %v: count %d, want %d", tt.threshold, tt.took, f.Count(), want)
		}
	}
}
