package server

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/fsm"
)

// TestRequestIDsDifferAcrossStarts restarts a server on its data directory
// and checks that the restarted server does not reuse the request ids of
// its previous run (a write of that run still on its way through an
// ensemble's log would be taken for the new run's request), and that the
// ids keep the server id in their top 16 bits.
func TestRequestIDsDifferAcrossStarts(t *testing.T) {
	dir := t.TempDir()
	var ids []uint64
	for range 2 {
		cfg := config.Default()
		cfg.ClientPort = 0
		cfg.ClientPortAddress = "127.0.0.1"
		cfg.DataDir, cfg.DataLogDir = dir, dir
		cfg.ServerID = 7
		s, err := New(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := s.propose(ctx, &fsm.Entry{Type: fsm.EntryCloseSession, Session: 12345, Time: time.Now().UnixMilli()})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-c.done:
		case <-ctx.Done():
			t.Fatal("the proposal was not applied")
		}
		cancel()
		ids = append(ids, c.id)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		if id>>48 != 7 || id&(1<<48-1) == 0 {
			t.Errorf("request id %#x does not carry server id 7 above a non-zero sequence", id)
		}
	}
	if ids[0] == ids[1] {
		t.Fatalf("both runs of server 7 used request id %#x first", ids[0])
	}
}
