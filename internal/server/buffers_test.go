package server

import (
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/zktest"
)

// TestShortSessionsRecycleReadBuffers checks that clients that connect, do
// one thing and leave do not each cost the server a fresh 64 KiB read
// buffer: a closed connection's buffer serves the next one.
func TestShortSessionsRecycleReadBuffers(t *testing.T) {
	s := startServer(t, nil)
	addr := s.Addr().String()
	session := func() {
		c := dial(t, addr)
		c.call(proto.OpExists, &proto.ExistsRequest{Path: "/"}, nil)
		c.call(proto.OpCloseSession, nil, nil)
		// The reader has put its buffer back once the connection is
		// gone from the server's table.
		deadline := time.Now().Add(10 * time.Second)
		for len(s.connections()) > 0 {
			if time.Now().After(deadline) {
				t.Fatal("the server did not drop a closed connection within 10 s")
			}
			time.Sleep(time.Millisecond)
		}
		c.nc.Close()
	}
	// Client and server share this process: the bound is what the server's
	// read buffer alone would take without recycling.
	perSession := zktest.BytesAllocatedPerCall(40, session)
	t.Logf("%d bytes allocated per session (client and server)", perSession)
	if perSession >= readerSize {
		t.Fatalf("a short session allocated %d bytes; a fresh read buffer alone is %d", perSession, readerSize)
	}
}
