package paddocktest_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/paddocktest"
	"github.com/paddockhq/paddock/zk"
)

// BenchmarkEnsembleSetData runs b.N setData calls of 100 bytes on 200
// znodes from 64 goroutines over 12 sessions, four on each member of an
// in-process three-member ensemble. Its B/op and allocs/op are what the
// whole process allocates per write: three members (each applying the
// write, one proposing it), the ensemble's proxies and the clients. The
// garbage collector's work follows the bytes.
func BenchmarkEnsembleSetData(b *testing.B) {
	ens := paddocktest.Start(b, paddocktest.Options{Members: 3, TickTime: 2 * time.Second,
		ExtraConfig: map[string]string{"maxClientCnxns": "0"}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var conns []*zk.Conn
	for _, m := range ens.Members() {
		for range 4 {
			c, err := zk.Connect(ctx, m.ClientAddr())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			conns = append(conns, c)
		}
	}
	val := make([]byte, 100)
	if _, err := conns[0].Create(ctx, "/b", nil, zk.OpenACL, zk.ModePersistent); err != nil {
		b.Fatal(err)
	}
	paths := make([]string, 200)
	for i := range paths {
		paths[i] = fmt.Sprintf("/b/n%03d", i)
		if _, err := conns[0].Create(ctx, paths[i], val, zk.OpenACL, zk.ModePersistent); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := conns[g%len(conns)]
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				if _, err := c.Set(ctx, paths[i%int64(len(paths))], val, -1); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
