package recipe_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/zk"
)

// cutAfterOp forwards writes and closes the connection right after a frame
// with opcode op has been written.
var delay = 300 * time.Microsecond

type cutAfterOp struct {
	net.Conn
	mu      sync.Mutex
	op      uint32
	armed   bool
	pending []byte
	started bool
}

func (c *cutAfterOp) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = append(c.pending, p...)
	for len(c.pending) >= 4 {
		n := int(binary.BigEndian.Uint32(c.pending))
		if len(c.pending) < 4+n {
			break
		}
		frame := c.pending[:4+n]
		hit := c.started && c.armed && n >= 8 && binary.BigEndian.Uint32(frame[8:12]) == c.op
		c.started = true
		if _, err := c.Conn.Write(frame); err != nil {
			return 0, err
		}
		c.pending = append(c.pending[:0], c.pending[4+n:]...)
		if hit {
			c.armed = false
			go func() { time.Sleep(delay); c.Conn.Close() }()
			return len(p), nil
		}
	}
	return len(p), nil
}

// Reproduction of a Paddock ordering bug (copy into zk/recipe/ and run
//
//	go test ./zk/recipe/ -run 'TestRecipes/.*/LateApply' -v -count=1):
//
// a create is written, and the client closes the connection ~0.3 ms later
// (before the reply). The client reconnects (same session, same server),
// syncs and reads the path: not there. Yet a moment later it is: the server
// applied the old connection's write after the same session's sync and read
// on the new connection. ZooKeeper 3.8 never does (0 late applications in
// hundreds of tries); Paddock did in about a quarter of the tries until a
// resumed session waited for its old connection's writes (server.settle).
// It would break the look-up after connection loss that CreateProtected
// (and Curator's protected mode) relies on.
func init() {
	addServerTests(serverTest{"LateApply", func(t *testing.T, s *testServer) {
		ctx := testCtx(t)
		var last lastConn[*cutAfterOp]
		c := connect(t, s.proc.Addr, last.option(func(nc net.Conn) *cutAfterOp {
			return &cutAfterOp{Conn: nc, op: 1}
		}))
		misses, late := 0, 0
		for i := range 30 {
			p := fmt.Sprintf("%s-%d", root(t), i)
			var cc *cutAfterOp
			last.with(func(c *cutAfterOp) { cc = c })
			cc.mu.Lock()
			cc.armed = true
			cc.mu.Unlock()
			_, err := c.Create(ctx, p, nil, zk.OpenACL, zk.ModePersistent)
			if !errors.Is(err, zk.ErrConnectionLoss) {
				t.Logf("create %d: %v", i, err)
				continue
			}
			if _, err := c.Sync(ctx, p); err != nil {
				t.Fatal(err)
			}
			ok, _, err := c.Exists(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				misses++
				ok2 := false
				for range 100 {
					ok2, _, _ = c.Exists(ctx, p)
					if ok2 {
						break
					}
				}
				if ok2 {
					late++
				}
			}
		}
		t.Logf("%s: %d of 30 creates not seen after reconnect", s.kind, misses)
		if late > 0 {
			t.Errorf("%s: %d creates applied after a later sync+read of the same session", s.kind, late)
		}
	}})
}
