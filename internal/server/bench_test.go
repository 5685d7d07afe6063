package server

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// benchClients runs b.N synchronous requests spread over n raw connections
// against an in-process server (the request path without client overhead).
func benchClients(b *testing.B, n int, req func(c *rawClient, i int)) {
	s := startServer(b, func(c *configT) { c.MaxClientCnxns = 0 })
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
