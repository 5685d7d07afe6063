package metrics_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/metrics/metricstest"
	"github.com/paddockhq/paddock/internal/zktest"
	"github.com/paddockhq/paddock/zk"
)

const prometheusProvider = "metricsProvider.className=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider"

// TestBinaryServesMetrics starts the binary with ZooKeeper's Prometheus
// settings, with and without the runtime metrics (exportJvmInfo), and
// checks the families and that they follow the traffic.
func TestBinaryServesMetrics(t *testing.T) {
	tests := []struct {
		name    string
		runtime bool
	}{{"exportJvmInfo=true", true}, {"exportJvmInfo=false", false}}
	names := metricstest.Names(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			port := zktest.FreePort(t)
			p := zktest.StartPaddock(t, zktest.PaddockOptions{ExtraConfig: []string{
				prometheusProvider,
				"metricsProvider.httpPort=" + strconv.Itoa(port),
				"metricsProvider.exportJvmInfo=" + strconv.FormatBool(tt.runtime),
			}})
			addr := "127.0.0.1:" + strconv.Itoa(port)
			before := metricstest.Scrape(t, addr)

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := zk.Connect(ctx, p.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			const n = 5
			for i := 0; i < n; i++ {
				path := fmt.Sprintf("/metrics-%d", i)
				if _, err := c.Create(ctx, path, []byte("v"), zk.OpenACL, zk.ModePersistent); err != nil {
					t.Fatal(err)
				}
				if _, _, err := c.Get(ctx, path); err != nil {
					t.Fatal(err)
				}
			}
			// A reply can reach the client just before its request is
			// recorded: poll until the counts have caught up.
			var after metricstest.Families
			deadline := time.Now().Add(10 * time.Second)
			for {
				after = metricstest.Scrape(t, addr)
				r, _ := after.Value("readlatency")
				u, _ := after.Value("updatelatency")
				if r >= n && u >= n {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("readlatency count %v, updatelatency count %v: want at least %d each", r, u, n)
				}
				time.Sleep(20 * time.Millisecond)
			}
			scopes := []string{"all"}
			if tt.runtime {
				scopes = append(scopes, "runtime")
			}
			metricstest.Check(t, after, names, scopes...)
			if got, want := after.Must(t, "znode_count")-before.Must(t, "znode_count"), float64(n); got != want {
				t.Errorf("znode_count grew by %v, want %v", got, want)
			}
			if v := after.Must(t, "paddock_request_duration_seconds", "op", "getData"); v != n {
				t.Errorf("getData requests recorded: %v, want %v", v, n)
			}
			if v := after.Must(t, "global_sessions"); v != 1 {
				t.Errorf("global_sessions = %v, want 1", v)
			}
		})
	}
}
