package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name           string
		live, headroom uint64
		want           int
	}{
		{"small heap gets the headroom", 16 * mib, 64 * mib, 400},
		{"rounds up", 3 * mib, 64 * mib, 2134},
		{"heap as large as the headroom", 64 * mib, 64 * mib, 100},
		{"large heap keeps Go's default", 400 * mib, 64 * mib, 100},
		{"empty heap is capped", 0, 64 * mib, maxPercent},
		{"tiny heap is capped", 100, 64 * mib, maxPercent},
		{"no headroom", 16 * mib, 0, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Percent(tt.live, tt.headroom)
			if got != tt.want {
				t.Fatalf("Percent(%d, %d) = %d, want %d", tt.live, tt.headroom, got, tt.want)
			}
			if got < maxPercent && tt.live*uint64(got)/100 < tt.headroom {
				t.Fatalf("Percent(%d, %d) = %d leaves less than the headroom", tt.live, tt.headroom, got)
			}
		})
	}
}

// gogc reads the GOGC percentage in force.
func gogc(t *testing.T) int {
	t.Helper()
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// TestTunerFollowsLiveHeap keeps a known amount of memory live, collects,
// and checks that the tuner set GOGC from the live heap, and that Stop
// puts the previous setting back.
func TestTunerFollowsLiveHeap(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	const headroom = 256 << 20
	ballast := make([]byte, 32<<20)
	tu := Start(headroom)
	defer tu.Stop()

	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		if p, n := tu.Current(); n >= 2 && p > BasePercent {
			break
		}
		if time.Now().After(deadline) {
			p, n := tu.Current()
			t.Fatalf("after 10 s of collections: tuner saw %d collections, percent %d", n, p)
		}
		time.Sleep(10 * time.Millisecond)
	}
	p, _ := tu.Current()
	// The live heap holds the 32 MiB ballast and the test binary's own
	// few MiB: the headroom is 8 times the ballast at most.
	if p > 800 || p < 400 {
		t.Fatalf("tuner set GOGC=%d for a live heap of a little over 32 MiB and 256 MiB of headroom; want 400..800", p)
	}
	if got := gogc(t); got != p {
		t.Fatalf("runtime GOGC is %d, tuner says it set %d", got, p)
	}
	runtime.KeepAlive(ballast)

	tu.Stop()
	tu.Stop() // twice is fine
	if got := gogc(t); got != 150 {
		t.Fatalf("after Stop GOGC is %d, want the 150 in force before Start", got)
	}
	// A collection after Stop changes nothing.
	runtime.GC()
	time.Sleep(20 * time.Millisecond)
	if got := gogc(t); got != 150 {
		t.Fatalf("a collection after Stop set GOGC to %d", got)
	}
}

func TestZeroHeadroomIsInert(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(123))
	tu := Start(0)
	runtime.GC()
	if got := gogc(t); got != 123 {
		t.Fatalf("Start(0) changed GOGC to %d", got)
	}
	tu.Stop()
	if got := gogc(t); got != 123 {
		t.Fatalf("Stop after Start(0) changed GOGC to %d", got)
	}
}
