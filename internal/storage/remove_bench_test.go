package storage

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkFsyncDuringRemove measures what deleting a large file costs the
// fsyncs of another file on the same disk: a goroutine writes 4 KiB and
// fdatasyncs in a loop (as the WAL does under load) while a 128 MiB file
// is deleted at once (os.Remove) or in steps (removeInSteps). It reports
// the slowest fdatasync and the 99th percentile of those around the
// removal; the time per op is the whole iteration's (file written and
// synced first). docs/benchmarks.md, thirteenth session:
//
//	go test -run '^$' -bench FsyncDuringRemove -benchtime 5x ./internal/storage/
func BenchmarkFsyncDuringRemove(b *testing.B) {
	const size = 128 << 20
	for _, bm := range []struct {
		name   string
		remove func(string) error
	}{
		{"unlink", os.Remove},
		{"steps", func(p string) error { return removeInSteps(p, removeStep, time.Sleep) }},
	} {
		b.Run(bm.name, func(b *testing.B) {
			dir := b.TempDir()
			wal, err := os.Create(filepath.Join(dir, "wal"))
			if err != nil {
				b.Fatal(err)
			}
			defer wal.Close()
			page := make([]byte, 4096)
			chunk := make([]byte, 1<<20)
			var worst, p99 []time.Duration
			for range b.N {
				p := filepath.Join(dir, "big")
				f, err := os.Create(p)
				if err != nil {
					b.Fatal(err)
				}
				for off := int64(0); off < size; off += int64(len(chunk)) {
					if _, err := f.WriteAt(chunk, off); err != nil {
						b.Fatal(err)
					}
				}
				if err := f.Sync(); err != nil {
					b.Fatal(err)
				}
				f.Close()

				var lats []time.Duration
				stop := make(chan struct{})
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := int64(0); ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						t0 := time.Now()
						if _, err := wal.WriteAt(page, (i%256)*4096); err != nil {
							b.Error(err)
							return
						}
						if err := datasync(wal); err != nil {
							b.Error(err)
							return
						}
						lats = append(lats, time.Since(t0))
						time.Sleep(500 * time.Microsecond)
					}
				}()
				time.Sleep(100 * time.Millisecond)
				if err := bm.remove(p); err != nil {
					b.Fatal(err)
				}
				if err := syncDir(dir); err != nil {
					b.Fatal(err)
				}
				time.Sleep(300 * time.Millisecond)
				close(stop)
				wg.Wait()
				slices.Sort(lats)
				if len(lats) > 0 {
					worst = append(worst, lats[len(lats)-1])
					p99 = append(p99, lats[len(lats)*99/100])
				}
			}
			slices.Sort(worst)
			slices.Sort(p99)
			if len(worst) > 0 {
				b.ReportMetric(float64(worst[len(worst)/2].Microseconds())/1000, "median-max-fsync-ms")
				b.ReportMetric(float64(worst[len(worst)-1].Microseconds())/1000, "max-fsync-ms")
				b.ReportMetric(float64(p99[len(p99)/2].Microseconds())/1000, "median-p99-fsync-ms")
			}
		})
	}
}
