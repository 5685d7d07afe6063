//go:build unix

package zk

import (
	"context"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
)

// TestDefaultDialerSocketOptions checks the connections the default dialer
// opens: Nagle's algorithm off, and no TCP keepalive probes (the session's
// pings find a dead server), as ZooKeeper's Java client.
func TestDefaultDialerSocketOptions(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			_, _ = c.Read(make([]byte, 1)) // until the client closes
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := defaultConfig().dial(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if zktest.SockoptInt(t, nc, syscall.IPPROTO_TCP, syscall.TCP_NODELAY) == 0 {
		t.Error("TCP_NODELAY is off")
	}
	if v := zktest.SockoptInt(t, nc, syscall.SOL_SOCKET, syscall.SO_KEEPALIVE); v != 0 {
		t.Errorf("SO_KEEPALIVE is %d, want 0", v)
	}
}
