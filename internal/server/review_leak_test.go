package server

import (
	"net"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// TestConnCyclesLeakNothing opens and abandons connections in every state
// (before the handshake, mid-frame, with writes and reads in flight, after
// a closeSession with requests behind it) and requires the server's
// goroutines, connections, per-address counts and outstanding slots to
// come back to where they were.
func TestConnCyclesLeakNothing(t *testing.T) {
	s := startServer(t, func(c *configT) { c.MaxClientCnxns = 10 })
	setup := dial(t, s.Addr().String())
	setup.mustCreate("/n", "", 0)
	setup.nc.Close()
	waitIdle := func(what string) int {
		deadline := time.Now().Add(10 * time.Second)
		for {
			s.connMu.Lock()
			n, ips := len(s.conns), len(s.perIP)
			s.connMu.Unlock()
			if n == 0 && ips == 0 && len(s.outstanding) == 0 {
				return runtime.NumGoroutine()
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d connections, %d addresses, %d slots still held", what, n, ips, len(s.outstanding))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	base := waitIdle("before")
	open := []proto.ACL{openACL}
	for i := 0; i < 60; i++ {
		// Before the handshake.
		nc, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		nc.Write([]byte{0, 0})
		nc.Close()
		// Mid-frame after the handshake.
		c := dial(t, s.Addr().String())
		c.write([]byte{0, 0, 1, 0, 0, 0})
		c.nc.Close()
		// Writes and reads in flight.
		c = dial(t, s.Addr().String())
		var b []byte
		for k := 0; k < 8; k++ {
			c.xid++
			b = proto.AppendRequestFrame(b, c.xid, proto.OpCreate, &proto.CreateRequest{Path: "/n/c" + strconv.Itoa(i*8+k), ACL: open, Flags: proto.FlagEphemeral})
			c.xid++
			b = proto.AppendRequestFrame(b, c.xid, proto.OpGetData, &proto.GetDataRequest{Path: "/n", Watch: true})
			c.xid++
			b = proto.AppendRequestFrame(b, c.xid, proto.OpSync, &proto.SyncRequest{Path: "/n"})
		}
		c.write(b)
		c.nc.Close()
		// closeSession with requests behind it.
		c = dial(t, s.Addr().String())
		b = nil
		c.xid++
		b = proto.AppendRequestFrame(b, c.xid, proto.OpSetData, &proto.SetDataRequest{Path: "/n", Version: -1})
		b = proto.AppendRequestFrame(b, c.xid+1, proto.OpCloseSession, nil)
		b = proto.AppendRequestFrame(b, c.xid+2, proto.OpGetData, &proto.GetDataRequest{Path: "/n"})
		c.write(b)
		c.nc.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := waitIdle("after")
		if n <= base+2 {
			break
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
