//go:build unix

package server

import (
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/zktest"
)

// TestClientSocketOptions checks the options of an accepted client
// connection: Nagle's algorithm off, as ZooKeeper sets it, and TCP
// keepalive probes only with clientTcpKeepAlive (off by default, as in
// ZooKeeper).
func TestClientSocketOptions(t *testing.T) {
	for _, keepAlive := range []bool{false, true} {
		s := startServer(t, func(c *config.Config) { c.ClientTCPKeepAlive = keepAlive })
		c := dial(t, s.Addr().String())
		c.call(proto.OpExists, &proto.ExistsRequest{Path: "/"}, nil)
		deadline := time.Now().Add(10 * time.Second)
		var conns []*conn
		for conns = s.connections(); len(conns) != 1; conns = s.connections() {
			if time.Now().After(deadline) {
				t.Fatalf("%d connections on the server, want 1", len(conns))
			}
			time.Sleep(time.Millisecond)
		}
		nc := conns[0].nc
		if v := zktest.SockoptInt(t, nc, syscall.IPPROTO_TCP, syscall.TCP_NODELAY); v == 0 {
			t.Errorf("clientTcpKeepAlive=%v: TCP_NODELAY is off on an accepted connection", keepAlive)
		}
		if v := zktest.SockoptInt(t, nc, syscall.SOL_SOCKET, syscall.SO_KEEPALIVE); (v != 0) != keepAlive {
			t.Errorf("clientTcpKeepAlive=%v: SO_KEEPALIVE is %d on an accepted connection", keepAlive, v)
		}
	}
}
