package raftnode_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/raftnode"
)

// TestFailureDropsBatchedProposals makes the WAL fail while the node's loop
// holds a proposal it has not handed to raft yet, and checks that the
// proposal's owner is told it was dropped (it would otherwise wait for
// good), that OnStop hears why the node stopped, and that the stopped node
// names no leader.
func TestFailureDropsBatchedProposals(t *testing.T) {
	stopped := make(chan error, 1)
	cfg := testConfig(t, t.TempDir())
	cfg.OnStop = func(err error) { stopped <- err }
	n := start(t, cfg, newListSM())
	propose(t, n, "before")

	dropped := make(chan error, 1)
	n.FailWALWhileBatching([]byte("batched"), func(err error) { dropped <- err })
	select {
	case <-n.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the node did not stop after its WAL failed")
	}
	select {
	case err := <-dropped:
		if !errors.Is(err, raftnode.ErrStopped) {
			t.Errorf("the batched proposal was dropped with %v, want ErrStopped", err)
		}
	default:
		t.Fatal("the proposal batched when the WAL failed was never dropped: its owner waits for good")
	}
	select {
	case err := <-stopped:
		if err == nil || err.Error() != n.Err().Error() {
			t.Errorf("OnStop got %v, Err is %v", err, n.Err())
		}
	default:
		t.Error("OnStop was not called before Done was closed")
	}
	if st := n.Status(); st.Lead != 0 || st.IsLeader {
		t.Errorf("the stopped node reports leader %d (is leader: %v)", st.Lead, st.IsLeader)
	}
	if err := n.Propose(context.Background(), []byte("after"), nil); !errors.Is(err, raftnode.ErrStopped) {
		t.Errorf("Propose after the failure: %v, want ErrStopped", err)
	}
}

// TestOnStopNotCalledOnClose checks that Close is not reported as a failure.
func TestOnStopNotCalledOnClose(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.OnStop = func(err error) { t.Errorf("OnStop(%v) after Close", err) }
	n := start(t, cfg, newListSM())
	propose(t, n, "a")
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReadContextsDifferAcrossStarts checks that a restarted node does not
// reuse the ReadIndex request contexts of its previous run: a leader may
// still hold a request of that run, and would answer the new one with it.
func TestReadContextsDifferAcrossStarts(t *testing.T) {
	dir := t.TempDir()
	var seqs []uint64
	for range 2 {
		cfg := testConfig(t, dir)
		n := start(t, cfg, newListSM())
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if _, err := n.ReadIndex(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		seqs = append(seqs, n.ReadSeq())
		if err := n.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if seqs[0] == seqs[1] {
		t.Fatalf("both runs of member 1 used read request %d", seqs[0])
	}
}

// TestDuplicateReadStateDoesNotBlock hands deliverReads the same read state
// twice: the waiting call gets the first, and the second must not block
// (on the node's goroutine, that would stop the node for good).
func TestDuplicateReadStateDoesNotBlock(t *testing.T) {
	n := start(t, testConfig(t, t.TempDir()), newListSM())
	type result struct {
		index uint64
		ok    bool
	}
	done := make(chan result, 1)
	go func() {
		idx, ok := n.DeliverReadTwice(1<<40, 7)
		done <- result{idx, ok}
	}()
	select {
	case r := <-done:
		if !r.ok || r.index != 7 {
			t.Fatalf("the waiting read got (%d, %v), want index 7", r.index, r.ok)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("deliverReads blocked on a duplicate read state")
	}
}
