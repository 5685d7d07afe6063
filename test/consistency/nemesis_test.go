package consistency_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/paddockhq/paddock/paddocktest"
)

// A fault the nemesis can inject.
type fault string

const (
	killLeader    fault = "kill-leader"    // Kill the leader, Restart it
	killFollower  fault = "kill-follower"  // Kill a follower, Restart it
	isolateLeader fault = "isolate-leader" // Isolate the leader, HealAll
	isolate       fault = "isolate"        // Isolate a follower, HealAll
	cutLeader     fault = "cut-leader"     // Cut the leader from one follower, Heal
	cut           fault = "cut"            // Cut two followers apart, Heal
	pauseLeader   fault = "pause-leader"   // Pause the leader, Resume
	pause         fault = "pause"          // Pause a follower, Resume
	isolateTwo    fault = "isolate-two"    // Isolate the leader and a follower (five members), HealAll
)

// serveAgainTimeout bounds how long every member may take to serve again
// once a fault is healed, while the clients keep going: a leader election
// and a catch-up take about a second; a member that had been cut off used
// to take as long as the clients kept syncing (see internal/transport's
// Send), which this bound catches.
const serveAgainTimeout = 10 * time.Second

// allFaults are the faults of a three-member ensemble; a five-member one
// adds isolateTwo.
var allFaults = []fault{killLeader, killFollower, isolateLeader, isolate, cutLeader, cut, pauseLeader, pause}

// nemesis injects one fault at a time on a seeded schedule: a pause, a
// fault held for a while, its healing, and a wait until every member serves
// again.
type nemesis struct {
	ens    *paddocktest.Ensemble
	rng    *rand.Rand
	clock  clock
	faults []fault
	logf   func(format string, args ...any)

	mu     sync.Mutex
	events []nemesisEvent
}

// nemesisEvent is one fault, in clock time.
type nemesisEvent struct {
	start, end int64
	what       string
}

func newNemesis(e *env, clk clock) *nemesis {
	faults := slices.Clone(allFaults)
	if len(e.ens.Members()) >= 5 {
		faults = append(faults, isolateTwo)
	}
	return &nemesis{ens: e.ens, rng: e.rng(0), clock: clk, faults: faults, logf: e.t.Logf}
}

// run injects faults until ctx ends, and returns with every fault healed
// and every member serving; its error says the ensemble did not recover.
func (n *nemesis) run(ctx context.Context) error {
	for {
		gap := 200*time.Millisecond + time.Duration(n.rng.Int64N(int64(600*time.Millisecond)))
		if !sleepCtx(ctx, gap) {
			return nil
		}
		f := n.faults[n.rng.IntN(len(n.faults))]
		hold := 300*time.Millisecond + time.Duration(n.rng.Int64N(int64(2200*time.Millisecond)))
		pick := n.rng.Uint64() // which follower(s), drawn now so the schedule does not depend on the outcome
		start := n.clock.now()
		what, heal, err := n.inject(ctx, f, pick)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("nemesis: %s: %w", f, err)
		}
		sleepCtx(ctx, hold)
		healErr := heal()
		end := n.clock.now()
		n.mu.Lock()
		n.events = append(n.events, nemesisEvent{start: start, end: end, what: what})
		n.mu.Unlock()
		if healErr != nil {
			return fmt.Errorf("nemesis: healing %s: %w", what, healErr)
		}
		wctx, cancel := context.WithTimeout(context.Background(), serveAgainTimeout)
		err = n.ens.WaitServing(wctx)
		cancel()
		if err != nil {
			return fmt.Errorf("nemesis: ensemble does not serve %v after healing %s: %w", serveAgainTimeout, what, err)
		}
		n.logf("nemesis %s-%s: %s; all serve again after %v", fmtNs(start), fmtNs(end), what,
			time.Duration(n.clock.now()-end).Round(time.Millisecond))
	}
}

// inject starts fault f and returns what it did and how to undo it. pick
// chooses among the followers.
func (n *nemesis) inject(ctx context.Context, f fault, pick uint64) (string, func() error, error) {
	lctx, cancel := context.WithTimeout(ctx, recoverTimeout)
	defer cancel()
	leader, err := n.ens.Leader(lctx)
	if err != nil {
		return "", nil, fmt.Errorf("no leader: %w", err)
	}
	var followers []*paddocktest.Member
	for _, m := range n.ens.Members() {
		if m != leader && !m.Observer() {
			followers = append(followers, m)
		}
	}
	nf := uint64(len(followers))
	i := pick % nf
	follower := followers[i]
	other := follower // another follower, when there are several
	if nf > 1 {
		other = followers[(i+1+(pick>>32)%(nf-1))%nf]
	}
	switch f {
	case killLeader, killFollower:
		m := leader
		if f == killFollower {
			m = follower
		}
		if err := m.Kill(); err != nil {
			return "", nil, err
		}
		return fmt.Sprintf("kill %v (%s)", m, role(m, leader)), m.Restart, nil
	case isolateLeader, isolate:
		m := leader
		if f == isolate {
			m = follower
		}
		n.ens.Isolate(m.ID())
		return fmt.Sprintf("isolate %v (%s)", m, role(m, leader)), func() error { n.ens.HealAll(); return nil }, nil
	case isolateTwo:
		n.ens.Isolate(leader.ID())
		n.ens.Isolate(follower.ID())
		return fmt.Sprintf("isolate %v (leader) and %v", leader, follower), func() error { n.ens.HealAll(); return nil }, nil
	case cutLeader:
		n.ens.Cut(leader.ID(), follower.ID())
		return fmt.Sprintf("cut %v (leader) from %v", leader, follower),
			func() error { n.ens.Heal(leader.ID(), follower.ID()); return nil }, nil
	case cut:
		a, b := follower, other
		if a == b {
			a = leader // a single follower: cut it from the leader instead
		}
		n.ens.Cut(a.ID(), b.ID())
		return fmt.Sprintf("cut %v from %v", a, b), func() error { n.ens.Heal(a.ID(), b.ID()); return nil }, nil
	case pauseLeader, pause:
		m := leader
		if f == pause {
			m = follower
		}
		m.Pause()
		return fmt.Sprintf("pause %v (%s)", m, role(m, leader)), func() error { m.Resume(); return nil }, nil
	}
	return "", nil, fmt.Errorf("unknown fault %q", f)
}

func role(m, leader *paddocktest.Member) string {
	if m == leader {
		return "leader"
	}
	return "follower"
}

// history returns the faults injected so far.
func (n *nemesis) history() []nemesisEvent {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.events)
}

// startNemesis runs n until ctx ends, in a goroutine; wait returns its
// error once it has healed its last fault.
func startNemesis(ctx context.Context, n *nemesis) (wait func() error) {
	done := make(chan error, 1)
	go func() { done <- n.run(ctx) }()
	return func() error { return <-done }
}
