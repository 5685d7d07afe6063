package main

import (
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/config"
)

// gogcPercent reads the GOGC percentage in force.
func gogcPercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// TestTuneGC checks that the server raises GOGC for a small heap when
// paddock.gcHeadroomMB asks for it, and leaves it alone when the headroom
// is 0 or the GOGC environment variable is set.
func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	logger := slog.New(slog.DiscardHandler)
	// settle collects until a tuner has had the chance to act.
	settle := func() {
		for range 3 {
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
		}
	}
	tests := []struct {
		name     string
		headroom uint64
		gogc     string // "" leaves the variable unset
		tuned    bool
	}{
		{"headroom applied", 1 << 30, "", true},
		{"GOGC set wins", 1 << 30, "100", false},
		{"headroom 0", 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GOGC", tt.gogc)
			if tt.gogc == "" {
				os.Unsetenv("GOGC")
			}
			debug.SetGCPercent(100)
			stop := tuneGC(&config.Config{GCHeadroom: tt.headroom}, logger)
			deadline := time.Now().Add(10 * time.Second)
			for {
				settle()
				if p := gogcPercent(); p > 100 || !tt.tuned || time.Now().After(deadline) {
					break
				}
			}
			got := gogcPercent()
			stop()
			if tt.tuned && got <= 100 {
				t.Fatalf("GOGC is %d with 1 GiB of headroom and a small heap; want it raised", got)
			}
			if !tt.tuned && got != 100 {
				t.Fatalf("GOGC is %d; want it left at 100", got)
			}
			if after := gogcPercent(); after != 100 {
				t.Fatalf("GOGC is %d after stop; want 100 back", after)
			}
		})
	}
}
