package config

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestScopedClientPortAddress checks that an IPv6 address with a zone is
// accepted, as ZooKeeper 3.8 accepts clientPortAddress=::1%lo (it logs
// "clientPortAddress is [0:0:0:0:0:0:0:1%lo]:PORT" and listens on [::1]),
// and, where the machine has IPv6 loopback, that a listener on the
// resulting address serves.
func TestScopedClientPortAddress(t *testing.T) {
	for _, tt := range []struct{ value, want string }{
		{"::1%lo", "::1%lo"},
		{"[::1%lo]", "::1%lo"},
		{"fe80::1%eth0", "fe80::1%eth0"},
	} {
		cfg, _, err := Parse(strings.NewReader("clientPort=2181\nclientPortAddress=" + tt.value + "\nadmin.serverAddress=" + tt.value))
		if err != nil {
			t.Errorf("clientPortAddress=%s: %v", tt.value, err)
			continue
		}
		if cfg.ClientPortAddress != tt.want || cfg.AdminAddress != tt.want || cfg.ClientAddr() != "["+tt.want+"]:2181" {
			t.Errorf("clientPortAddress=%s: address %q, admin %q, listen on %q; want %q", tt.value,
				cfg.ClientPortAddress, cfg.AdminAddress, cfg.ClientAddr(), tt.want)
		}
	}
	// Still refused: a zone on an IPv4 address, an empty zone.
	for _, bad := range []string{"127.0.0.1%lo", "::1%"} {
		if _, _, err := Parse(strings.NewReader("clientPort=2181\nclientPortAddress=" + bad)); err == nil {
			t.Errorf("clientPortAddress=%s accepted", bad)
		}
	}

	cfg, _, err := Parse(strings.NewReader("clientPort=0\nclientPortAddress=::1%lo"))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", cfg.ClientAddr())
	if err != nil {
		t.Skipf("no IPv6 loopback on lo: %v", err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Write([]byte("imok"))
		c.Close()
	}()
	c, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", ln.Addr(), err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if b, err := io.ReadAll(c); err != nil || string(b) != "imok" {
		t.Errorf("read from %s: %q %v", ln.Addr(), b, err)
	}
}
