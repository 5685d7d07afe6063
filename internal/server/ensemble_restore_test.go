package server

import (
	"bytes"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// TestRestoreFailsPendingCalls checks that installing a snapshot completes
// the calls still waiting for their entries with a lost connection: a
// member whose forwarded writes were committed while it was behind, then
// covered by the snapshot the leader sends it, never applies those entries,
// and their clients would otherwise wait until the next change of leader.
// The waiting call is planted (as proposeFor registers one), and the
// snapshot is the server's own state.
func TestRestoreFailsPendingCalls(t *testing.T) {
	s := startServer(t, nil)
	c := dial(t, s.Addr().String())
	c.mustCreate("/a", "x", 0)

	const id = 1<<47 + 12345
	waiting := &call{done: make(chan struct{}), s: s, id: id}
	s.pendMu.Lock()
	s.pending[id] = waiting
	s.pendMu.Unlock()

	write, err := (*machine)(s).Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	if err := write(&body); err != nil {
		t.Fatal(err)
	}
	if err := (*machine)(s).Restore(body.Bytes()); err != nil {
		t.Fatal(err)
	}
	if !ready(waiting.done) {
		t.Fatal("a call waiting for an entry the snapshot covers still waits after the snapshot was installed")
	}
	if waiting.res.Err != proto.ErrConnectionLoss {
		t.Fatalf("the call completed with %v, want a lost connection", waiting.res.Err)
	}
	s.pendMu.Lock()
	n := len(s.pending)
	s.pendMu.Unlock()
	if n != 0 {
		t.Fatalf("%d calls still pending", n)
	}
}
