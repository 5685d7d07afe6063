package zk_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
	"time"

	"github.com/paddockhq/paddock/zk"
)

// TestDNSHostProviderTLSVerifiesName: a server whose certificate names only
// "localhost", reached through NewDNSHostProvider from "localhost:port",
// passes verification, because the client checks the certificate against the
// name in the connect string (as ZooKeeper's Java client does), not against
// the IP address the name resolved to. A ServerName the user sets still wins.
func TestDNSHostProviderTLSVerifiesName(t *testing.T) {
	serverCfg, roots := selfSignedTLSFor(t, "localhost")
	dns := zk.WithHostProvider(func(hosts []string) zk.HostProvider { return zk.NewDNSHostProvider(hosts, nil) })

	t.Run("name from the connect string", func(t *testing.T) {
		s := newFakeZK(t, false)
		p := startProxy(t, s.addr, serverCfg)
		_, port, _ := net.SplitHostPort(p.addr)
		c, err := connectWithin(t, 5*time.Second, net.JoinHostPort("localhost", port),
			zk.WithTLSConfig(&tls.Config{RootCAs: roots}), dns)
		if err != nil {
			t.Fatalf("connect via DNS to a certificate for localhost: %v", err)
		}
		t.Cleanup(func() {
			s.shutdown()
			c.Close()
		})
		s.accept(t)
	})

	t.Run("ServerName set by the user", func(t *testing.T) {
		s := newFakeZK(t, false)
		p := startProxy(t, s.addr, serverCfg)
		_, port, _ := net.SplitHostPort(p.addr)
		c, err := connectWithin(t, 2*time.Second, net.JoinHostPort("localhost", port),
			zk.WithTLSConfig(&tls.Config{RootCAs: roots, ServerName: "zk1.example"}), dns)
		if err == nil {
			c.Close()
			t.Fatal("connected though the certificate does not name the ServerName set")
		}
		if p.handshakes.Load() != 0 {
			t.Fatal("a TLS handshake completed with the wrong ServerName")
		}
	})
}

// connectWithin is zk.Connect bounded by d.
func connectWithin(t *testing.T, d time.Duration, connectString string, opts ...zk.Option) (*zk.Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return zk.Connect(ctx, connectString, opts...)
}

// selfSignedTLSFor is selfSignedTLS with a certificate naming only the DNS
// name given, no IP address.
func selfSignedTLSFor(t *testing.T, name string) (*tls.Config, *x509.CertPool) {
	return selfSignedTLSNaming(t, nil, []string{name})
}
