package zk_test

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
	"github.com/paddockhq/paddock/zk"
)

// TestShortSessionsRecycleBuffers checks that a program opening short
// sessions one after another reuses the connections' 64 KiB read and write
// buffers instead of allocating (and zeroing, and later collecting) 128 KiB
// for each session.
func TestShortSessionsRecycleBuffers(t *testing.T) {
	p := zktest.StartPaddock(t, zktest.PaddockOptions{})
	session := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c, err := zk.Connect(ctx, p.Addr, zk.WithSessionTimeout(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Exists(ctx, "/"); err != nil {
			t.Fatal(err)
		}
		c.Close() // returns once the connection's goroutines are done
	}
	// Without the pools a session allocates 128 KiB of buffers alone. The
	// race detector drops a quarter of the buffers put back in a pool, so
	// the bound leaves room for that.
	perSession := zktest.BytesAllocatedPerCall(40, session)
	t.Logf("%d bytes allocated per session", perSession)
	if perSession >= 96<<10 {
		t.Fatalf("a short session allocated %d bytes; want well under the 128 KiB of fresh buffers", perSession)
	}
}
