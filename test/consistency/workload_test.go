package consistency_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// TestWorkloadsUnderFaults runs three workloads at once against an
// ensemble while the nemesis strikes, then heals everything and checks
// each: the linearizability of writes, compare-and-sets and synced reads
// (porcupine), the session order of unsynced reads, and the survival of
// acknowledged sequential creates. Clients prefer members in turn, so most
// go through followers.
func TestWorkloadsUnderFaults(t *testing.T) {
	for _, tc := range []struct {
		members  int
		duration time.Duration
	}{
		{3, workloadDuration()},
		{5, workloadDuration() * 2 / 3},
	} {
		t.Run(strconv.Itoa(tc.members)+"-members", func(t *testing.T) {
			runWorkloads(t, tc.members, tc.duration)
		})
	}
}

const (
	kvClients   = 6
	monoClients = 3
	seqClients  = 2
)

func runWorkloads(t *testing.T, members int, duration time.Duration) {
	e := newEnv(t, members)
	setup := e.mustDial(1)
	for _, dir := range []string{"/lin", "/mono", "/seq"} {
		mustCreate(t, setup, dir, nil)
	}
	for k := range kvKeys {
		mustCreate(t, setup, kvPath(k), []byte("0"))
	}
	for k := range monoKeys {
		mustCreate(t, setup, monoPath(k), nil)
	}
	setup.Close()

	clk := newClock()
	ctx, cancel := context.WithTimeout(t.Context(), duration)
	defer cancel()
	nem := newNemesis(e, clk)
	waitNemesis := startNemesis(ctx, nem)

	// Random streams: 0 is the nemesis; clients take 100+ and 200+ (the
	// lockers of lock_test.go 400+).
	prefer := func(i int) int { return i%members + 1 }
	kv := make([]*kvClient, kvClients)
	mono := make([]*monoClient, monoClients)
	seq := make([]*seqClient, seqClients)
	var wg sync.WaitGroup
	for i := range kv {
		kv[i] = &kvClient{e: e, id: i, prefer: prefer(i), rng: e.rng(100 + uint64(i)), clock: clk}
		wg.Go(func() { kv[i].run(ctx) })
	}
	for i := range mono {
		mono[i] = &monoClient{e: e, id: i, prefer: prefer(i + 1), rng: e.rng(200 + uint64(i)), clock: clk}
		wg.Go(func() { mono[i].run(ctx) })
	}
	for i := range seq {
		seq[i] = &seqClient{e: e, id: i, prefer: prefer(i + 2)}
		wg.Go(func() { seq[i].run(ctx) })
	}
	wg.Wait()
	if err := waitNemesis(); err != nil {
		t.Fatal(err)
	}
	faults := nem.history()
	if len(faults) == 0 {
		t.Errorf("the nemesis injected no fault in %v", duration)
	}
	e.healEverything()

	t.Run("linearizable", func(t *testing.T) {
		var ops []porcupine.Operation
		okWrites, reads, sessions := 0, 0, 0
		for _, c := range kv {
			ops = append(ops, c.ops...)
			sessions += c.sessions
			for _, op := range c.ops {
				switch {
				case op.Input.(kvInput).op == opRead:
					reads++
				case op.Output.(kvOutput).result == resOK:
					okWrites++
				}
			}
		}
		// The final state, read through every member, closes the history.
		for i, m := range e.ens.Members() {
			ops = append(ops, readAll(t, e, m.ID(), kvClients+i, clk)...)
		}
		t.Logf("%d sessions; %d writes acknowledged, %d synced reads", sessions, okWrites, reads)
		if okWrites < 20 || reads < 20 {
			t.Errorf("only %d writes acknowledged and %d synced reads: the workload made too little progress to tell anything", okWrites, reads)
		}
		checkKV(t, ops, faults)
	})
	t.Run("monotonic-reads", func(t *testing.T) {
		reads, writes, sessions := 0, 0, 0
		for _, c := range mono {
			reads += c.reads
			writes += c.writes
			sessions += c.sessions
			for _, v := range c.violations {
				t.Error(v)
			}
		}
		t.Logf("%d reads without sync and %d writes in %d sessions", reads, writes, sessions)
		if reads < 50 || writes < 10 {
			t.Errorf("only %d reads and %d writes: the workload made too little progress to tell anything", reads, writes)
		}
	})
	t.Run("sequential-creates", func(t *testing.T) {
		checkSeq(t, e, seq)
	})
}
