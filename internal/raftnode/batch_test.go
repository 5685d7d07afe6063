package raftnode_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/raftnode"
)

// dropCounter is a raftnode.Dropper that records each drop once.
type dropCounter struct {
	mu   sync.Mutex
	errs map[int]error
	done chan struct{}
	want int
}

type dropOne struct {
	c *dropCounter
	i int
}

func (d dropOne) Dropped(err error) {
	d.c.mu.Lock()
	defer d.c.mu.Unlock()
	if _, dup := d.c.errs[d.i]; dup {
		d.c.errs[-1] = fmt.Errorf("proposal %d dropped twice", d.i)
	}
	d.c.errs[d.i] = err
	if len(d.c.errs) == d.c.want {
		close(d.c.done)
	}
}

// TestProposeToDropsEveryBatchedProposal proposes many entries to a member
// that can never find a leader (its two peers do not exist), so that they
// reach raft in batches: raft refuses each batch, and every proposal in it
// must be reported dropped, once, with ErrProposalDropped.
func TestProposeToDropsEveryBatchedProposal(t *testing.T) {
	dir := t.TempDir()
	n, err := raftnode.Start(raftnode.Config{
		ID:           1,
		DataDir:      filepath.Join(dir, "data"),
		TickInterval: time.Hour, // no election: no leader, ever
		Voters:       []uint64{1, 2, 3},
		Transport:    &memTransport{net: newMemNet(), from: 1},
		Logger:       testLogger(t),
	}, newListSM())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	const count = 500
	c := &dropCounter{errs: make(map[int]error), done: make(chan struct{}), want: count}
	for i := range count {
		if err := n.ProposeTo(context.Background(), []byte(fmt.Sprintf("p%d", i)), dropOne{c: c, i: i}); err != nil {
			t.Fatalf("ProposeTo %d: %v", i, err)
		}
	}
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		c.mu.Lock()
		t.Fatalf("%d of %d proposals reported dropped", len(c.errs), count)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.errs[-1]; err != nil {
		t.Fatal(err)
	}
	for i := range count {
		if !errors.Is(c.errs[i], raftnode.ErrProposalDropped) {
			t.Errorf("proposal %d: dropped with %v, want ErrProposalDropped", i, c.errs[i])
		}
	}
}
