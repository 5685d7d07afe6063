package zktest_test

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/paddockhq/paddock/internal/zktest"
)

// impostor listens on a loopback port and answers four-letter words as a
// ready server would (ruok, srvr, and a conf naming another data
// directory), as another test's server that took the port picked for ours
// does. It returns the port; the listener closes when t ends.
func impostor(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				cmd := make([]byte, 4)
				if _, err := io.ReadFull(c, cmd); err != nil {
					return
				}
				switch string(cmd) {
				case "ruok":
					io.WriteString(c, "imok")
				case "srvr":
					io.WriteString(c, "Zookeeper version: impostor\nMode: standalone\nNode count: 4\n")
				case "conf":
					io.WriteString(c, "clientPort=1\ndataDir=/somebody/else\n")
				}
			})
		}
	})
	return ln.Addr().(*net.TCPAddr).Port
}

// TestServerIgnoresAnotherServerOnItsPort gives StartPaddock a port on
// which another server answers: the Paddock started cannot bind it, and the
// starter must not take the other server's answers for its own (it moves
// the server to another port, as for any taken port).
func TestServerIgnoresAnotherServerOnItsPort(t *testing.T) {
	port := impostor(t)
	p := zktest.StartPaddock(t, zktest.WithFirstPort(zktest.PaddockOptions{}, port))
	if p.Port == port {
		t.Fatalf("StartPaddock returned the server on port %d, where another server answers", port)
	}
	conf, err := zktest.FourLetterWord(p.Addr, "conf")
	if err != nil || !strings.Contains(conf, "dataDir="+p.DataDir) {
		t.Fatalf("conf on %s: %q, %v; want dataDir=%s", p.Addr, conf, err, p.DataDir)
	}
}
