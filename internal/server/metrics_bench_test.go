package server

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/proto"
)

// benchMetrics runs the request benchmark req over 64 connections with
// metrics off and on, as sub-benchmarks, to show what the observation
// points cost on the request path.
func benchMetrics(b *testing.B, req func(b *testing.B, c *rawClient, i int)) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			s := startServer(b, func(c *config.Config) {
				c.MaxClientCnxns = 0
				if on {
					withMetrics(c)
				}
			})
			setup := dial(b, s.Addr().String())
			setup.mustCreate("/b", "", 0)
			for i := 0; i < 100; i++ {
				setup.mustCreate(key(i), string(make([]byte, 100)), 0)
			}
			clients := make([]*rawClient, 64)
			for i := range clients {
				clients[i] = dial(b, s.Addr().String())
			}
			var next atomic.Int64
			var wg sync.WaitGroup
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
						req(b, c, i)
					}
				}(c)
			}
			wg.Wait()
		})
	}
}

func BenchmarkMetricsGetData64(b *testing.B) {
	benchMetrics(b, func(b *testing.B, c *rawClient, i int) {
		c.send(proto.OpGetData, &proto.GetDataRequest{Path: key(i)})
		if f := c.next(); f.hdr.Err != 0 {
			b.Error(f.hdr.Err)
		}
	})
}

func BenchmarkMetricsSetData64(b *testing.B) {
	data := make([]byte, 100)
	benchMetrics(b, func(b *testing.B, c *rawClient, i int) {
		c.send(proto.OpSetData, &proto.SetDataRequest{Path: key(i), Data: data, Version: -1})
		if f := c.next(); f.hdr.Err != 0 {
			b.Error(f.hdr.Err)
		}
	})
}
