package zk_test

import (
	"bytes"
	"context"
	"io"
	"log"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"

	"github.com/paddockhq/paddock/internal/zktest"
	"github.com/paddockhq/paddock/zk"
)

// The benchmarks compare this client with github.com/go-zookeeper/zk on the
// same Paddock server in the same run. Each scenario is one top-level
// benchmark that starts the server and creates the znode; its sub-benchmarks
// paddock-zk and go-zookeeper each open one session and share the server.
// Allocations are the benchmark process's, that is the client's only (the
// server is another process).
//
//	go test -run '^$' -bench . -benchmem -count 3 ./zk/
//
// Shapes:
//
//   - sync-parallel: benchParallelism×GOMAXPROCS goroutines share one
//     connection, each making synchronous calls (b.RunParallel); for writes
//     benchWriteParallelism×GOMAXPROCS, enough calls in flight that the
//     server's commit latency does not set the rate for both clients alike.
//   - pipelined: one connection with benchWindow requests in flight. This
//     client keeps the window with ...Async calls from one goroutine;
//     go-zookeeper has no asynchronous API, so its users pipeline by making
//     synchronous calls from many goroutines: benchWindow goroutines share
//     its connection. paddock-zk-goroutines is this client driven the same
//     way, for comparison.
//   - serial: one goroutine, one synchronous call at a time (latency).
//
// docs/benchmarks.md ("Go client") records the results.

const (
	benchParallelism      = 16
	benchWriteParallelism = 128
	benchWindow           = 256
	benchValueSize        = 100
	benchPath             = "/bench"
)

var benchValue = bytes.Repeat([]byte("v"), benchValueSize)

// startBenchServer starts Paddock for one scenario and creates benchPath
// with a benchValueSize-byte value.
func startBenchServer(b *testing.B) string {
	b.Helper()
	p := zktest.StartPaddock(b, zktest.PaddockOptions{})
	c := benchConn(b, p.Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := c.Create(ctx, benchPath, benchValue, zk.OpenACL, zk.ModePersistent); err != nil {
		b.Fatalf("create %s: %v", benchPath, err)
	}
	return p.Addr
}

// benchConn opens a session of this client, closed when b ends.
func benchConn(b *testing.B, addr string) *zk.Conn {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := zk.Connect(ctx, addr, zk.WithSessionTimeout(10*time.Second))
	if err != nil {
		b.Fatalf("connect %s: %v", addr, err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

// goZKConn opens a go-zookeeper session, waits until it has a session and
// drains its event channel; the session is closed when b ends.
func goZKConn(b *testing.B, addr string) *gozk.Conn {
	b.Helper()
	c, ev, err := gozk.Connect([]string{addr}, 10*time.Second, gozk.WithLogInfo(false),
		gozk.WithLogger(log.New(io.Discard, "", 0)))
	if err != nil {
		b.Fatalf("go-zookeeper connect %s: %v", addr, err)
	}
	timeout := time.After(20 * time.Second)
	for established := false; !established; {
		select {
		case e := <-ev:
			established = e.State == gozk.StateHasSession
		case <-timeout:
			c.Close()
			b.Fatalf("go-zookeeper: no session with %s within 20s", addr)
		}
	}
	go func() {
		for range ev {
		}
	}()
	b.Cleanup(c.Close)
	return c
}

// checkGet fails b unless a Get returned the benchmark value.
func checkGet(b *testing.B, data []byte, err error) {
	if err != nil {
		b.Error(err)
	} else if len(data) != benchValueSize {
		b.Errorf("got %d bytes, want %d", len(data), benchValueSize)
	}
}

// reportOps reports the throughput of the b.N operations timed so far.
func reportOps(b *testing.B) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "ops/s")
	}
}

// benchParallel runs op from benchParallelism×GOMAXPROCS goroutines.
func benchParallel(b *testing.B, op func() error) {
	benchParallelN(b, benchParallelism, op)
}

// benchParallelN runs op from n×GOMAXPROCS goroutines.
func benchParallelN(b *testing.B, n int, op func() error) {
	b.ReportAllocs()
	b.SetParallelism(n)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := op(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	reportOps(b)
}

// benchGoroutines runs b.N calls of op spread over n goroutines, each
// taking the next call as soon as its previous one returns.
func benchGoroutines(b *testing.B, n int, op func() error) {
	b.ReportAllocs()
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	b.ResetTimer()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) && !failed.Load() {
				if err := op(); err != nil {
					failed.Store(true)
					b.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	reportOps(b)
}

// window keeps benchWindow asynchronous calls in flight from one goroutine.
// The benchmark makes its callback once, outside the timed loop, and the
// callback calls done, so that the loop allocates only what the client does.
type window struct {
	sem    chan struct{}
	failed atomic.Bool
	err    atomic.Value
}

func newWindow() *window { return &window{sem: make(chan struct{}, benchWindow)} }

// done records the outcome of one call and frees its slot.
func (w *window) done(err error) {
	if err != nil && w.failed.CompareAndSwap(false, true) {
		w.err.Store(err)
	}
	<-w.sem
}

// run makes b.N calls with issue, each once a slot is free, and waits for
// the last of them.
func (w *window) run(b *testing.B, issue func()) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N && !w.failed.Load(); i++ {
		w.sem <- struct{}{}
		issue()
	}
	for range benchWindow {
		w.sem <- struct{}{}
	}
	b.StopTimer()
	if w.failed.Load() {
		b.Fatal(w.err.Load())
	}
	reportOps(b)
}

func BenchmarkGetSyncParallel(b *testing.B) {
	addr := startBenchServer(b)
	b.Run("paddock-zk", func(b *testing.B) {
		c := benchConn(b, addr)
		ctx := context.Background()
		benchParallel(b, func() error {
			data, _, err := c.Get(ctx, benchPath)
			checkGet(b, data, err)
			return err
		})
	})
	b.Run("go-zookeeper", func(b *testing.B) {
		c := goZKConn(b, addr)
		benchParallel(b, func() error {
			data, _, err := c.Get(benchPath)
			checkGet(b, data, err)
			return err
		})
	})
}

func BenchmarkGetPipelined(b *testing.B) {
	addr := startBenchServer(b)
	b.Run("paddock-zk", func(b *testing.B) {
		c := benchConn(b, addr)
		ctx := context.Background()
		w := newWindow()
		cb := func(data []byte, _ *zk.Stat, err error) {
			if err == nil && len(data) != benchValueSize {
				b.Errorf("got %d bytes, want %d", len(data), benchValueSize)
			}
			w.done(err)
		}
		w.run(b, func() { c.GetAsync(ctx, benchPath, nil, cb) })
	})
	b.Run("go-zookeeper", func(b *testing.B) {
		c := goZKConn(b, addr)
		benchGoroutines(b, benchWindow, func() error {
			data, _, err := c.Get(benchPath)
			checkGet(b, data, err)
			return err
		})
	})
	b.Run("paddock-zk-goroutines", func(b *testing.B) {
		c := benchConn(b, addr)
		ctx := context.Background()
		benchGoroutines(b, benchWindow, func() error {
			data, _, err := c.Get(ctx, benchPath)
			checkGet(b, data, err)
			return err
		})
	})
}

func BenchmarkSetSyncParallel(b *testing.B) {
	addr := startBenchServer(b)
	b.Run("paddock-zk", func(b *testing.B) {
		c := benchConn(b, addr)
		ctx := context.Background()
		benchParallelN(b, benchWriteParallelism, func() error {
			_, err := c.Set(ctx, benchPath, benchValue, -1)
			return err
		})
	})
	b.Run("go-zookeeper", func(b *testing.B) {
		c := goZKConn(b, addr)
		benchParallelN(b, benchWriteParallelism, func() error {
			_, err := c.Set(benchPath, benchValue, -1)
			return err
		})
	})
}

func BenchmarkSetPipelined(b *testing.B) {
	addr := startBenchServer(b)
	b.Run("paddock-zk", func(b *testing.B) {
		c := benchConn(b, addr)
		ctx := context.Background()
		w := newWindow()
		cb := func(_ *zk.Stat, err error) { w.done(err) }
		w.run(b, func() { c.SetAsync(ctx, benchPath, benchValue, -1, cb) })
	})
	b.Run("go-zookeeper", func(b *testing.B) {
		c := goZKConn(b, addr)
		benchGoroutines(b, benchWindow, func() error {
			_, err := c.Set(benchPath, benchValue, -1)
			return err
		})
	})
	b.Run("paddock-zk-goroutines", func(b *testing.B) {
		c := benchConn(b, addr)
		ctx := context.Background()
		benchGoroutines(b, benchWindow, func() error {
			_, err := c.Set(ctx, benchPath, benchValue, -1)
			return err
		})
	})
}

// BenchmarkGetSerial is one goroutine making one synchronous call at a
// time: the round-trip latency of each client.
func BenchmarkGetSerial(b *testing.B) {
	addr := startBenchServer(b)
	b.Run("paddock-zk", func(b *testing.B) {
		c := benchConn(b, addr)
		ctx := context.Background()
		benchGoroutines(b, 1, func() error {
			data, _, err := c.Get(ctx, benchPath)
			checkGet(b, data, err)
			return err
		})
	})
	b.Run("go-zookeeper", func(b *testing.B) {
		c := goZKConn(b, addr)
		benchGoroutines(b, 1, func() error {
			data, _, err := c.Get(benchPath)
			checkGet(b, data, err)
			return err
		})
	})
}
