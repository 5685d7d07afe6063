package ensemble_test

import (
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
)

const (
	// writers is the number of concurrent writers of the load tests.
	writers = 8
	// warmup is how many writes are acknowledged before a fault.
	warmup = 200
	// electionTimeout is raft's election timeout with the default
	// tickTime of 2000 ms (a quarter of it).
	electionTimeout = 500 * time.Millisecond
)

// TestLeaderKillUnderLoad kills the leader with SIGKILL while eight
// writers create znodes through the whole ensemble, and logs how long the
// ensemble took to acknowledge a write sent after the kill. After the
// killed member is restarted, every acknowledged create is there exactly
// once on every member.
func TestLeaderKillUnderLoad(t *testing.T) {
	e := startEnsemble(t, 0, 0)
	l := startLoad(t, e.ConnectString(), "/leaderkill", writers, loadSessionTimeout)
	l.waitAckedAfter(time.Time{}, warmup, waitFor)

	leader := e.Leader(t, waitFor)
	killed := time.Now()
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	next, err := e.WaitLeader(waitFor, func(p *zktest.Process) bool { return p != leader })
	if err != nil {
		t.Fatal(err)
	}
	elected := time.Since(killed)
	firstAck := l.waitAckedAfter(killed, 1, waitFor)
	t.Logf("leader %d killed: member %d seen leading after %v; first write sent after the kill acknowledged after %v",
		e.ID(leader), e.ID(next), elected.Round(time.Millisecond), firstAck.Sub(killed).Round(time.Millisecond))
	// Every writer, including those that were connected to the dead
	// leader, gets writes through again.
	l.waitEveryWriterAckedAfter(killed, waitFor)

	leader.Restart(t)
	l.waitAckedAfter(time.Now(), warmup, waitFor)
	l.halt()
	l.verify(t, e)
}

// TestFullEnsembleKill kills every member with SIGKILL under load and
// restarts them all: no acknowledged write is lost, and the writers'
// sessions survive.
func TestFullEnsembleKill(t *testing.T) {
	e := startEnsemble(t, 0, 0)
	// The writers' sessions must outlive the restart on the client side
	// too: a client that hears from no server for a whole session timeout
	// gives up.
	l := startLoad(t, e.ConnectString(), "/fullkill", writers, 15*time.Second)
	l.waitAckedAfter(time.Time{}, warmup, waitFor)

	if err := e.KillAll(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now() // every member is dead from here on
	ackedBefore := 0
	for _, w := range l.all() {
		if w.err == nil {
			ackedBefore++
		}
	}
	e.Start(t, e.Members...)
	restarted := time.Since(killed)
	firstAck := l.waitAckedAfter(killed, 1, waitFor)
	t.Logf("every member killed with %d writes acknowledged; all serving again %v later; first write sent after the kill acknowledged after %v",
		ackedBefore, restarted.Round(time.Millisecond), firstAck.Sub(killed).Round(time.Millisecond))
	l.waitEveryWriterAckedAfter(killed, waitFor)
	l.halt()
	l.verify(t, e)
}

// TestPauseFollower freezes a follower with SIGSTOP for several election
// timeouts: the ensemble keeps serving every writer (those connected to
// the frozen member move), the leader stays, and after SIGCONT the
// follower serves again and catches up.
func TestPauseFollower(t *testing.T) {
	e := startEnsemble(t, 0, 0)
	leader := e.Leader(t, waitFor)
	f := followers(e, leader)[0]
	l := startLoad(t, e.ConnectString(), "/pausefollower", writers, loadSessionTimeout)
	l.waitAckedAfter(time.Time{}, warmup, waitFor)

	if err := f.Pause(); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	// Every writer gets writes through while the follower is frozen.
	l.waitEveryWriterAckedAfter(paused, waitFor)
	// The leader does not change while the follower is frozen, however
	// long: the frozen member cannot disrupt anyone.
	for time.Since(paused) < 6*electionTimeout {
		if got := e.Leader(t, waitFor); got != leader {
			t.Fatalf("leader changed from %d to %d while follower %d was paused", e.ID(leader), e.ID(got), e.ID(f))
		}
		time.Sleep(pollEvery)
	}
	t.Logf("follower %d paused for %v", e.ID(f), time.Since(paused).Round(time.Millisecond))

	if err := f.Resume(); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	if err := e.WaitServing(waitFor, f); err != nil {
		t.Fatal(err)
	}
	l.waitAckedAfter(resumed, warmup, waitFor)
	if got := e.Leader(t, waitFor); got != leader {
		t.Fatalf("leader changed from %d to %d after follower %d resumed", e.ID(leader), e.ID(got), e.ID(f))
	}
	l.halt()
	waitCaughtUp(t, e, f, leader)
	if st := status(t, e, f); st.Mode != zktest.ModeFollower {
		t.Fatalf("resumed member %d is %s, want follower", e.ID(f), st.Mode)
	}
	l.verify(t, e)
}

// TestPauseLeader freezes the leader with SIGSTOP: the others elect a new
// leader, the writers move to them and keep writing. After SIGCONT the old
// leader steps down and catches up without disrupting the new leader
// (pre-vote and check-quorum): no member changes leader again and no
// writer sees an error.
func TestPauseLeader(t *testing.T) {
	e := startEnsemble(t, 0, 0)
	old := e.Leader(t, waitFor)
	l := startLoad(t, e.ConnectString(), "/pauseleader", writers, loadSessionTimeout)
	l.waitAckedAfter(time.Time{}, warmup, waitFor)

	if err := old.Pause(); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	next, err := e.WaitLeader(waitFor, func(p *zktest.Process) bool { return p != old })
	if err != nil {
		t.Fatal(err)
	}
	elected := time.Since(paused)
	firstAck := l.waitAckedAfter(paused, 1, waitFor)
	l.waitEveryWriterAckedAfter(paused, waitFor)
	t.Logf("leader %d paused: member %d seen leading after %v; first write sent after the pause acknowledged after %v; every writer after %v",
		e.ID(old), e.ID(next), elected.Round(time.Millisecond), firstAck.Sub(paused).Round(time.Millisecond),
		time.Since(paused).Round(time.Millisecond))

	stay := others(e, old)
	offsets := make([]int64, len(stay))
	for i, p := range stay {
		offsets[i] = logSize(t, p)
	}
	if err := old.Resume(); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	eventually(t, waitFor, "the old leader steps down", func() error {
		st, err := e.Status(old)
		if err == nil && st.Mode != zktest.ModeFollower {
			return errString("mode " + st.Mode)
		}
		return err
	})
	l.waitAckedAfter(resumed, warmup, waitFor)
	// Give a disruptive election time to happen: several election
	// timeouts with writes flowing.
	for time.Since(resumed) < 6*electionTimeout {
		if got := e.Leader(t, waitFor); got != next {
			t.Fatalf("leader changed from %d to %d after the old leader %d resumed", e.ID(next), e.ID(got), e.ID(old))
		}
		time.Sleep(pollEvery)
	}
	if errs := l.errorsAfter(resumed); len(errs) > 0 {
		t.Errorf("writers saw errors after the old leader resumed: %v", errs)
	}
	for i, p := range stay {
		if n := countLines(logSince(t, p, offsets[i]), "raft leader changed"); n != 0 {
			t.Errorf("member %d changed leader %d times after the old leader resumed:\n%s", e.ID(p), n, logSince(t, p, offsets[i]))
		}
	}
	l.halt()
	waitCaughtUp(t, e, old, next)
	l.verify(t, e)
}

// errString is an error with a fixed message.
type errString string

func (e errString) Error() string { return string(e) }
