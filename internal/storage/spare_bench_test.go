//go:build linux

package storage

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSpareFill fills a 64 MiB spare WAL segment with direct I/O (as
// the WAL does on Linux) and through the page cache (as before), and
// reports the CPU time one fill takes: the filling sleeps between chunks,
// so its wall time says little.
//
//	go test -run '^$' -bench SpareFill -benchtime 3x ./internal/storage
func BenchmarkSpareFill(b *testing.B) {
	for _, direct := range []bool{true, false} {
		name := "direct"
		if !direct {
			name = "page-cache"
		}
		b.Run(name, func(b *testing.B) {
			if !direct {
				orig := setDirect
				setDirect = func(*os.File, bool) error { return errInvalid }
				b.Cleanup(func() { setDirect = orig })
			}
			dir := b.TempDir()
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				c0 := cpuTime(b)
				s := startSpare(filepath.Join(dir, spareName), DefaultSegmentBytes, nil)
				<-s.done
				cpu += cpuTime(b) - c0
				if s.err != nil {
					b.Fatal(s.err)
				}
				s.f.Close()
			}
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/fill")
		})
	}
}
