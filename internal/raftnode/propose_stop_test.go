package raftnode_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/raftnode"
)

// gateContext holds a Propose between its check that the node runs and
// its wait for queue space: Propose calls Done there, which tells entered
// and blocks until release is closed.
type gateContext struct {
	context.Context
	entered chan<- struct{}
	release <-chan struct{}
}

func (c gateContext) Done() <-chan struct{} {
	c.entered <- struct{}{}
	<-c.release
	return nil // never cancelled
}

// TestProposeRacingClose checks that a proposal racing the node's shutdown
// is either refused by Propose or reported dropped: none is accepted and
// then forgotten. Each proposer has checked that the node runs, then waits
// (gateContext) while the node stops and drops what is queued, then offers
// its proposal to a queue that has room and to a node that has stopped.
func TestProposeRacingClose(t *testing.T) {
	n := start(t, testConfig(t, t.TempDir()), newListSM())
	const proposers = 32 // each picks the queue or the stop at random
	entered := make(chan struct{})
	release := make(chan struct{})
	ctx := gateContext{Context: context.Background(), entered: entered, release: release}
	var dropped [proposers]atomic.Int32
	errs := make([]error, proposers)
	var wg sync.WaitGroup
	for i := range proposers {
		wg.Go(func() {
			errs[i] = n.Propose(ctx, []byte("racing"), func(err error) {
				if !errors.Is(err, raftnode.ErrStopped) {
					t.Errorf("proposal %d dropped with %v, want ErrStopped", i, err)
				}
				dropped[i].Add(1)
			})
		})
	}
	for range proposers {
		<-entered
	}
	if err := n.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	close(release)
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("Propose did not return after Close")
	}
	accepted := 0
	for i := range proposers {
		d := dropped[i].Load()
		switch {
		case errs[i] != nil && !errors.Is(errs[i], raftnode.ErrStopped):
			t.Errorf("proposal %d: Propose = %v, want nil or ErrStopped", i, errs[i])
		case errs[i] != nil && d != 0:
			t.Errorf("proposal %d: Propose failed (%v) and was reported dropped %d times", i, errs[i], d)
		case errs[i] == nil && d != 1:
			t.Errorf("proposal %d: Propose accepted it on a stopped node and it was reported dropped %d times, want once", i, d)
		}
		if errs[i] == nil {
			accepted++
		}
	}
	t.Logf("%d of %d proposals were accepted after the node stopped", accepted, proposers)
}
