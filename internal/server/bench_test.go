package server

import (
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// benchClients runs b.N synchronous requests spread over n raw connections
// against an in-process server (the request path without client overhead).
func benchClients(b *testing.B, n int, req func(c *rawClient, i int)) {
	s := startServer(b, func(c *configT) { c.MaxClientCnxns = 0 })
	syncs0, applied0 := s.node.WALStats().Syncs, s.node.AppliedIndex()
	defer func() {
		if syncs := s.node.WALStats().Syncs - syncs0; syncs > 0 && s.node.AppliedIndex()-applied0 > 100 {
			b.ReportMetric(float64(s.node.AppliedIndex()-applied0)/float64(syncs), "entries/fsync")
		}
	}()
	setup := dial(b, s.Addr().String())
	setup.mustCreate("/b", "", 0)
	for i := 0; i < 100; i++ {
		setup.mustCreate("/b/"+string(rune('a'+i%26))+string(rune('a'+i/26)), string(make([]byte, 100)), 0)
	}
	clients := make([]*rawClient, n)
	for i := range clients {
		clients[i] = dial(b, s.Addr().String())
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	// cpu-µs/op is the whole process's CPU time per request, server and
	// raw clients together: on a shared machine it moves less than the
	// elapsed time, which waits on fsyncs and on other processes.
	cpu0 := processCPU()
	defer func() {
		if cpu := processCPU() - cpu0; cpu > 0 && b.N > 0 {
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
		}
	}()
	b.ResetTimer()
	for _, c := range clients {
		wg.Add(1)
		go func(c *rawClient) {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				req(c, i)
			}
		}(c)
	}
	wg.Wait()
}

func key(i int) string { i %= 100; return "/b/" + string(rune('a'+i%26)) + string(rune('a'+i/26)) }

func BenchmarkGetData64(b *testing.B) {
	benchClients(b, 64, func(c *rawClient, i int) {
		c.send(proto.OpGetData, &proto.GetDataRequest{Path: key(i)})
		if f := c.next(); f.hdr.Err != 0 {
			b.Error(f.hdr.Err)
		}
	})
}

func BenchmarkSetData64(b *testing.B) {
	data := make([]byte, 100)
	benchClients(b, 64, func(c *rawClient, i int) {
		c.send(proto.OpSetData, &proto.SetDataRequest{Path: key(i), Data: data, Version: -1})
		if f := c.next(); f.hdr.Err != 0 {
			b.Error(f.hdr.Err)
		}
	})
}

// BenchmarkCreate64 creates a new znode per request (as the bench tool's
// create workload does), from 64 connections.
func BenchmarkCreate64(b *testing.B) {
	data := make([]byte, 100)
	open := []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}
	benchClients(b, 64, func(c *rawClient, i int) {
		c.send(proto.OpCreate, &proto.CreateRequest{Path: "/b/c" + strconv.Itoa(i), Data: data, ACL: open})
		if f := c.next(); f.hdr.Err != 0 {
			b.Error(f.hdr.Err)
		}
	})
}

// BenchmarkMulti64 sends multis of 10 setData ops (the bench tool's multi
// workload) from 64 connections.
func BenchmarkMulti64(b *testing.B) {
	data := make([]byte, 100)
	benchClients(b, 64, func(c *rawClient, i int) {
		ops := make([]proto.MultiOp, 10)
		for j := range ops {
			ops[j] = proto.MultiOp{Op: proto.OpSetData, Path: key(i*10 + j), Data: data, Version: -1}
		}
		c.send(proto.OpMulti, &proto.MultiRequest{Ops: ops})
		if f := c.next(); f.hdr.Err != 0 {
			b.Error(f.hdr.Err)
		}
	})
}

// BenchmarkWatchMemory reports the server's heap per watch: 64 sessions
// each set one-time data watches on distinct nodes (200,000 in all), and the
// live heap after a full GC is compared with the heap before the watches.
// Run with -benchtime=1x.
func BenchmarkWatchMemory(b *testing.B) {
	const sessions, perSession = 64, 3125
	// No snapshot may compact the raft log between the two measurements.
	s := startServer(b, func(c *configT) { c.MaxClientCnxns = 0; c.SnapCount = 10_000_000 })
	setup := dial(b, s.Addr().String())
	open := []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}
	for i := 0; i < sessions*perSession; i += 500 {
		for j := i; j < i+500; j++ {
			setup.send(proto.OpCreate, &proto.CreateRequest{Path: "/w" + strconv.Itoa(j), ACL: open})
		}
		for j := i; j < i+500; j++ {
			if f := setup.next(); f.hdr.Err != 0 {
				b.Fatal(f.hdr.Err)
			}
		}
	}
	clients := make([]*rawClient, sessions)
	for i := range clients {
		clients[i] = dial(b, s.Addr().String())
	}
	before := liveHeap()
	for w, c := range clients {
		for j := 0; j < perSession; j += 500 {
			for k := j; k < j+500 && k < perSession; k++ {
				c.send(proto.OpExists, &proto.ExistsRequest{Path: "/w" + strconv.Itoa(w*perSession+k), Watch: true})
			}
			for k := j; k < j+500 && k < perSession; k++ {
				if f := c.next(); f.hdr.Err != 0 {
					b.Fatal(f.hdr.Err)
				}
			}
		}
	}
	after := liveHeap()
	b.ReportMetric(float64(after-before)/float64(sessions*perSession), "B/watch")
	runtime.KeepAlive(clients)
}

func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
