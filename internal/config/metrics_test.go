package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestParseMetricsKeys covers the metricsProvider.* keys and
// fsync.warningthresholdms: which settings turn the endpoint on, where it
// listens, and the fsync warning threshold.
func TestParseMetricsKeys(t *testing.T) {
	const prom = "metricsProvider.className=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider\n"
	tests := []struct {
		name      string
		in        string
		enabled   bool
		addr      string
		runtime   bool
		threshold time.Duration
	}{
		{"defaults", "tickTime=2000", false, "127.0.0.1:7000", true, time.Second},
		{"prometheus class", prom, true, "127.0.0.1:7000", true, time.Second},
		{"class, host and port", prom + "metricsProvider.httpHost=0.0.0.0\nmetricsProvider.httpPort=7001",
			true, "0.0.0.0:7001", true, time.Second},
		{"port alone enables", "metricsProvider.httpPort=7002", true, "127.0.0.1:7002", true, time.Second},
		{"port zero picks one", "metricsProvider.httpPort=0", true, "127.0.0.1:0", true, time.Second},
		{"bracketed IPv6 host", "metricsProvider.httpPort=7003\nmetricsProvider.httpHost=[::1]", true, "[::1]:7003", true, time.Second},
		{"default provider disables", "metricsProvider.className=org.apache.zookeeper.metrics.impl.DefaultMetricsProvider\nmetricsProvider.httpPort=7004",
			false, "127.0.0.1:7004", true, time.Second},
		{"host alone does not enable", "metricsProvider.httpHost=0.0.0.0", false, "0.0.0.0:7000", true, time.Second},
		{"no runtime metrics", prom + "metricsProvider.exportJvmInfo=FALSE", true, "127.0.0.1:7000", false, time.Second},
		{"fsync threshold", "fsync.warningthresholdms=50", false, "127.0.0.1:7000", true, 50 * time.Millisecond},
		{"fsync threshold, system property spelling", "zookeeper.fsync.warningthresholdms=0", false, "127.0.0.1:7000", true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, warnings := mustParse(t, tt.in)
			if len(warnings) != 0 {
				t.Errorf("warnings: %q", warnings)
			}
			if len(cfg.IgnoredKeys) != 0 {
				t.Errorf("IgnoredKeys = %q, want none", cfg.IgnoredKeys)
			}
			if cfg.MetricsEnabled != tt.enabled {
				t.Errorf("MetricsEnabled = %v, want %v", cfg.MetricsEnabled, tt.enabled)
			}
			if got := cfg.MetricsAddr(); got != tt.addr {
				t.Errorf("MetricsAddr() = %q, want %q", got, tt.addr)
			}
			if cfg.MetricsExportRuntime != tt.runtime {
				t.Errorf("MetricsExportRuntime = %v, want %v", cfg.MetricsExportRuntime, tt.runtime)
			}
			if cfg.FsyncWarningThreshold != tt.threshold {
				t.Errorf("FsyncWarningThreshold = %v, want %v", cfg.FsyncWarningThreshold, tt.threshold)
			}
		})
	}
}

// TestParseMetricsOverride checks that an override enables metrics as the
// zoo.cfg line would.
func TestParseMetricsOverride(t *testing.T) {
	cfg, _ := mustParse(t, "tickTime=2000", Setting{Key: "metricsProvider.httpPort", Value: "0", Source: "flag --metrics-port"})
	if !cfg.MetricsEnabled || cfg.MetricsPort != 0 {
		t.Errorf("MetricsEnabled %v MetricsPort %d, want true 0", cfg.MetricsEnabled, cfg.MetricsPort)
	}
}

// TestParseMetricsOtherKeys checks that the provider's tuning knobs are
// ignored quietly and its TLS settings are reported as unsupported.
func TestParseMetricsOtherKeys(t *testing.T) {
	cfg, warnings := mustParse(t, "metricsProvider.numWorkerThreads=4\nmetricsProvider.maxQueueSize=10\n"+
		"metricsProvider.httpsPort=7443\nmetricsProvider.ssl.keyStore.location=/k\nmetricsProvider.colour=blue")
	want := []string{
		"line 3: metricsProvider.httpsPort is not supported by Paddock; ignored",
		"line 4: metricsProvider.ssl.keyStore.location is not supported by Paddock; ignored",
		`line 5: unknown key "metricsProvider.colour" ignored`,
	}
	if strings.Join(warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(want, "\n"))
	}
	if got := strings.Join(cfg.IgnoredKeys, ","); got != "metricsProvider.maxQueueSize,metricsProvider.numWorkerThreads" {
		t.Errorf("IgnoredKeys = %s", got)
	}
	if cfg.MetricsEnabled {
		t.Error("tuning knobs alone enabled metrics")
	}
}

// TestParseMetricsErrors checks that every bad value is an error naming its
// key.
func TestParseMetricsErrors(t *testing.T) {
	tests := []struct {
		in, key, reason string
	}{
		{"metricsProvider.className=com.example.MyProvider", "metricsProvider.className", "is not a metrics provider"},
		{"metricsProvider.httpPort=seven", "metricsProvider.httpPort", "is not an integer"},
		{"metricsProvider.httpPort=70000", "metricsProvider.httpPort", "must be in [0, 65535]"},
		{"metricsProvider.httpPort=-1", "metricsProvider.httpPort", "must be in [0, 65535]"},
		{"metricsProvider.httpPort=7000\nmetricsProvider.httpHost=bad host", "metricsProvider.httpHost", "is not a host name"},
		{"metricsProvider.httpPort=7000\nmetricsProvider.httpHost=", "metricsProvider.httpHost", "is not a host name"},
		{"metricsProvider.exportJvmInfo=yes", "metricsProvider.exportJvmInfo", "is not true or false"},
		{"fsync.warningthresholdms=1s", "fsync.warningthresholdms", "is not an integer"},
		{"fsync.warningthresholdms=-5", "fsync.warningthresholdms", "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, _, err := Parse(strings.NewReader(tt.in))
			var ke *KeyError
			if !errors.As(err, &ke) {
				t.Fatalf("Parse: %v, want a *KeyError", err)
			}
			if ke.Key != tt.key || !strings.Contains(ke.Reason, tt.reason) {
				t.Errorf("error %q: key %q reason %q, want key %q reason containing %q", err, ke.Key, ke.Reason, tt.key, tt.reason)
			}
		})
	}
}
