package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/zk"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(c *Config)
		want   string // "" for valid; else a substring of the error
	}{
		{"defaults", func(*Config) {}, ""},
		{"ops instead of duration", func(c *Config) { c.Duration, c.Ops = 0, 10 }, ""},
		{"populate needs neither", func(c *Config) { c.Workload, c.Duration = WorkloadPopulate, 0 }, ""},
		{"no servers", func(c *Config) { c.Servers = "" }, "servers"},
		{"unknown workload", func(c *Config) { c.Workload = "delete" }, `workload: "delete" is not one of create, set`},
		{"no sessions", func(c *Config) { c.Sessions = 0 }, "sessions: 0"},
		{"no inflight", func(c *Config) { c.Inflight = 0 }, "inflight: 0"},
		{"no duration nor ops", func(c *Config) { c.Duration = 0 }, "duration"},
		{"negative ops", func(c *Config) { c.Ops = -1 }, "ops: -1"},
		{"negative warmup", func(c *Config) { c.Warmup = -time.Second }, "warmup"},
		{"negative value size", func(c *Config) { c.ValueSize = -1 }, "value-size"},
		{"no keys", func(c *Config) { c.Keys = 0 }, "keys: 0"},
		{"read ratio above 1", func(c *Config) { c.ReadRatio = 1.5 }, "read-ratio"},
		{"read ratio below 0", func(c *Config) { c.ReadRatio = -0.1 }, "read-ratio"},
		{"empty multi", func(c *Config) { c.MultiOps = 0 }, "multi-ops"},
		{"no watchers", func(c *Config) { c.Watchers = 0 }, "watchers"},
		{"no znodes", func(c *Config) { c.Znodes = 0 }, "znodes"},
		{"bad pid", func(c *Config) { c.ServerPIDs = []int{0} }, "server-pid: 0"},
		{"pid twice", func(c *Config) { c.ServerPIDs = []int{7, 7} }, "given twice"},
		{"no session timeout", func(c *Config) { c.SessionTimeout = 0 }, "session timeout"},
		{"open loop", func(c *Config) { c.Rate = 5000 }, ""},
		{"negative rate", func(c *Config) { c.Rate = -1 }, "rate: -1"},
		{"open loop sessions", func(c *Config) { c.Workload, c.Rate = WorkloadSessions, 10 }, "rate: the sessions workload"},
		{"open loop fan-out", func(c *Config) { c.Workload, c.Rate = WorkloadWatchFanout, 10 }, "closed loops only"},
		{"several at once", func(c *Config) { c.Sessions, c.Keys = 0, 0 }, "keys: 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig("127.0.0.1:2181", WorkloadSet)
			tt.change(&c)
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate: %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestKeepDefault(t *testing.T) {
	for _, w := range Workloads {
		if got := DefaultConfig("x", w).Keep; got != (w == WorkloadPopulate) {
			t.Errorf("%s keeps its root by default: %v", w, got)
		}
	}
}

func TestErrorKey(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&zk.OpError{Op: "setData", Path: "/bench-1/k-7", Err: zk.ErrBadVersion}, "setData: zk: bad version"},
		{&zk.OpError{Op: "multi", Err: &zk.MultiError{Index: 2, Op: "delete", Path: "/a", Err: zk.ErrNotEmpty}}, "multi: delete: zk: node has children"},
		{errFanoutTimeout, errFanoutTimeout.Error()},
		{fmt.Errorf("%w 127.0.0.1:2181: context deadline exceeded (last error: dial tcp 127.0.0.1:40123: refused)", zk.ErrNoServer),
			"connect: zk: could not connect to a server"},
	}
	for _, tt := range tests {
		if got := errorKey(tt.err); got != tt.want {
			t.Errorf("errorKey(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
	if !final(&zk.OpError{Op: "getData", Err: zk.ErrSessionExpired}) || !final(zk.ErrClosed) || final(zk.ErrConnectionLoss) {
		t.Error("final: want true for expired and closed sessions only")
	}
}

// TestResultOutput checks the JSON field names the --json output promises
// and the table's sections.
func TestResultOutput(t *testing.T) {
	cpu, clientCPU, rss := 12.5, 7.25, int64(64<<20)
	fan := Percentiles{P50: 300, P90: 400, P99: 500, P999: 600, Max: 700}
	r := &Result{
		Workload: WorkloadWatchFanout, Servers: "127.0.0.1:2181", Sessions: 9, Inflight: 1, ValueSize: 100,
		Watchers: 8, DurationS: 2, Ops: 1000, OpsPerS: 500, Errors: 1,
		ErrorCounts:      map[string]int64{"setData: zk: connection loss": 1},
		Latency:          Percentiles{P50: 100, P90: 200, P99: 300, P999: 400, Max: 500, Mean: 120},
		FanoutLatency:    &fan,
		NotifyLatency:    &fan,
		RoundLatency:     &fan,
		ServerCPUUsPerOp: &cpu, ServerRSSBytes: &rss, ClientCPUUsPerOp: &clientCPU,
		ServerProcs: []ServerProc{{PID: 1, CPUUs: 12500, RSSBytes: rss}},
		Root:        "/bench-00", CleanupErrors: 0,
	}
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\n"); n != 1 || !strings.HasSuffix(b.String(), "\n") {
		t.Fatalf("JSON is %d lines, want one: %q", n, b.String())
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"workload", "servers", "sessions", "inflight", "value_size", "duration_s", "ops",
		"ops_per_s", "errors", "error_counts", "latency_us", "fanout_latency_us", "notify_latency_us", "round_latency_us",
		"server_cpu_us_per_op", "server_rss_bytes", "server_procs", "client_cpu_us_per_op", "root", "kept", "cleanup_errors"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON has no %q: %s", k, b.String())
		}
	}
	lat, _ := m["latency_us"].(map[string]any)
	for _, k := range []string{"p50", "p90", "p99", "p999", "max"} {
		if _, ok := lat[k]; !ok {
			t.Errorf("latency_us has no %q", k)
		}
	}

	b.Reset()
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ops/s", "500", "1 setData: zk: connection loss", "all notified", "round over",
		"p99.9", "server CPU", "12.5 µs/op", "client CPU", "7.2 µs/op", "64.0 MiB", "/bench-00 (deleted)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
