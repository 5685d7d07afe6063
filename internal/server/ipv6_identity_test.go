package server

import (
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

func TestJavaHostAddress(t *testing.T) {
	tests := []struct{ in, want string }{
		{"127.0.0.1", "127.0.0.1"},
		{"::1", "0:0:0:0:0:0:0:1"},
		{"::", "0:0:0:0:0:0:0:0"},
		{"2001:db8::ff00:42:8329", "2001:db8:0:0:0:ff00:42:8329"},
		{"2001:DB8:0:0:0:0:0:AB", "2001:db8:0:0:0:0:0:ab"},
		{"fe80::1%eth0", "fe80:0:0:0:0:0:0:1%eth0"},
		{"::ffff:10.0.0.1", "10.0.0.1"},
		{"not-an-ip", "not-an-ip"},
	}
	for _, tt := range tests {
		if got := javaHostAddress(tt.in); got != tt.want {
			t.Errorf("javaHostAddress(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestIPv6ClientShownAsZooKeeper: a client on ::1 is "0:0:0:0:0:0:0:1" in
// whoami (its ip identity) and "/[0:0:0:0:0:0:0:1]:port" in cons, as
// ZooKeeper 3.8 on Java 17 shows it (checked against a real server).
func TestIPv6ClientShownAsZooKeeper(t *testing.T) {
	s := startServer(t, func(c *configT) { c.ClientPortAddress = "::1" })
	c := dial(t, s.Addr().String())
	_, resp := c.call(proto.OpWhoAmI, &proto.Empty{}, nil)
	who, ok := resp.(*proto.WhoAmIResponse)
	if !ok || len(who.ClientInfo) != 1 {
		t.Fatalf("whoami = %#v", resp)
	}
	if got := who.ClientInfo[0]; got.AuthScheme != "ip" || got.User != "0:0:0:0:0:0:0:1" {
		t.Errorf("whoami = %+v, want ip 0:0:0:0:0:0:0:1", got)
	}
	if cons := fourLetter(t, s, "cons"); !strings.Contains(cons, " /[0:0:0:0:0:0:0:1]:") || strings.Contains(cons, "[::1]") {
		t.Errorf("cons shows an IPv6 client not as ZooKeeper does:\n%s", cons)
	}
}
