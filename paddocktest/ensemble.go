package paddocktest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Options configure an ensemble. The zero value is a three-member ensemble
// with a 200 ms tick in a temporary directory.
type Options struct {
	// Members is the number of voting members; 0 means DefaultMembers
	// (3). They get ids 1 to Members. One member alone is a standalone
	// server (its Mode is "standalone"), as in ZooKeeper.
	Members int
	// Observers is the number of observers (raft learners: they replicate
	// and serve clients without voting); they get the ids after the voting
	// members. Default 0.
	Observers int
	// TickTime is ZooKeeper's tickTime, a whole number of milliseconds;
	// 0 means DefaultTickTime (200 ms). Sessions may last from 2 to 20
	// ticks (0.4 s to 4 s by default), and raft's election timeout is a
	// quarter of a tick but at least 100 ms (paddock.raft.electionTimeoutMs
	// in ExtraConfig changes it).
	TickTime time.Duration
	// DataDir is where the members keep their data, one subdirectory
	// each ("member-1", ...). Empty means a new temporary directory, which
	// Close removes; a DataDir given here is left in place.
	DataDir string
	// ExtraConfig holds zoo.cfg keys and values applied to every member's
	// configuration through Paddock's configuration parser, exactly as in
	// a zoo.cfg file: for example {"snapCount": "100",
	// "4lw.commands.whitelist": "*", "maxClientCnxns": "0"}. Keys the
	// ensemble sets itself (tickTime, dataDir, dataLogDir, clientPort,
	// clientPortAddress, peerType, server.N) are refused, and so is any key
	// the parser warns about (an unknown key, say).
	ExtraConfig map[string]string
	// Logger receives the members' logs, each with a "member" attribute.
	// Nil discards them.
	Logger *slog.Logger
	// StartTimeout bounds how long New and Start wait for every member to
	// serve; 0 means DefaultStartTimeout (30 s).
	StartTimeout time.Duration
}

// Ensemble is a Paddock ensemble running in this process: Options.Members
// voting members and Options.Observers observers on 127.0.0.1, each with
// its own data directory, talking raft over real TCP.
//
// Every link between two members, in each direction, goes through a proxy
// of the ensemble, and so does every member's client port: member i's
// configuration lists itself with its own peer port and every other member
// j with the port of the proxy for the link i->j, which forwards to j's
// peer port. Cut, Heal, Isolate, Pause, Stop, Kill and Restart work on
// those proxies.
//
// The methods of Ensemble and Member are safe for concurrent use.
type Ensemble struct {
	opts    Options
	dir     string
	ownDir  bool
	log     *slog.Logger
	members []*Member
	links   map[link]*proxy // by direction

	mu     sync.Mutex
	cut    map[link]bool // by pair, smaller id first
	frozen map[link]bool // by direction (PauseLink)
	closed bool
}

// link is a pair of member ids: a direction for Ensemble.links, a pair
// (smaller first) for Ensemble.cut.
type link struct{ from, to int }

func pair(a, b int) link { return link{min(a, b), max(a, b)} }

// Start starts an ensemble for the test tb and waits until every member
// serves; it fails tb (FailNow) if it cannot. The ensemble is closed by
// tb's Cleanup, after the cleanups registered later (so close your
// clients in a Cleanup or a defer).
func Start(tb testing.TB, opts Options) *Ensemble {
	tb.Helper()
	e, err := New(opts)
	if err != nil {
		tb.Fatalf("paddocktest: starting the ensemble: %v", err)
	}
	tb.Cleanup(func() {
		if err := e.Close(); err != nil {
			tb.Errorf("paddocktest: closing the ensemble: %v", err)
		}
	})
	return e
}

// New starts an ensemble and waits until every member serves (at most
// Options.StartTimeout). The caller must Close it.
func New(opts Options) (*Ensemble, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Ensemble{
		opts:   opts,
		dir:    opts.DataDir,
		log:    opts.Logger,
		links:  make(map[link]*proxy),
		cut:    make(map[link]bool),
		frozen: make(map[link]bool),
	}
	if e.log == nil {
		e.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if e.dir == "" {
		if e.dir, err = os.MkdirTemp("", "paddocktest-"); err != nil {
			return nil, fmt.Errorf("paddocktest: %w", err)
		}
		e.ownDir = true
	}
	if err := e.build(); err != nil {
		return nil, errors.Join(err, e.Close())
	}
	for _, m := range e.members {
		if err := m.start(); err != nil {
			return nil, errors.Join(fmt.Errorf("paddocktest: starting member %d: %w", m.id, err), e.Close())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), opts.StartTimeout)
	defer cancel()
	if err := e.WaitServing(ctx); err != nil {
		return nil, errors.Join(err, e.Close())
	}
	return e, nil
}

// build creates the members, their proxies and their configurations,
// and starts nothing but the proxies.
func (e *Ensemble) build() error {
	n := e.opts.Members + e.opts.Observers
	for id := 1; id <= n; id++ {
		m := &Member{e: e, id: id, observer: id > e.opts.Members,
			dir: filepath.Join(e.dir, fmt.Sprintf("member-%d", id)),
			log: e.log.With("member", id)}
		var err error
		if m.peerPort, err = freePort(); err != nil {
			return fmt.Errorf("paddocktest: %w", err)
		}
		if m.client, err = newProxy(m.clientTarget); err != nil {
			return fmt.Errorf("paddocktest: %w", err)
		}
		e.members = append(e.members, m)
	}
	if n == 1 {
		return nil // standalone: no peers
	}
	for _, a := range e.members {
		for _, b := range e.members {
			if a == b {
				continue
			}
			p, err := newProxy(b.peerTarget)
			if err != nil {
				return fmt.Errorf("paddocktest: %w", err)
			}
			e.links[link{a.id, b.id}] = p
		}
	}
	return nil
}

// Close stops every member (gracefully, as Member.Stop), closes every proxy
// and waits for all their goroutines, and removes the data directory if
// the ensemble made it. Closing twice is harmless.
func (e *Ensemble) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	var errs []error
	for _, m := range e.members {
		if err := m.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("paddocktest: member %d: %w", m.id, err))
		}
	}
	for _, m := range e.members {
		if m.client != nil {
			m.client.close()
		}
	}
	for _, p := range e.links {
		p.close()
	}
	if e.ownDir {
		if err := os.RemoveAll(e.dir); err != nil {
			errs = append(errs, fmt.Errorf("paddocktest: %w", err))
		}
	}
	return errors.Join(errs...)
}

// ConnectString returns every member's client address (ClientAddr), in id
// order, comma-separated: a ZooKeeper connect string for the whole
// ensemble.
func (e *Ensemble) ConnectString() string {
	addrs := make([]string, len(e.members))
	for i, m := range e.members {
		addrs[i] = m.ClientAddr()
	}
	return strings.Join(addrs, ",")
}

// Members returns every member, voting members first, in id order.
func (e *Ensemble) Members() []*Member {
	return append([]*Member(nil), e.members...)
}

// Member returns the member with the given id (1 to Members+Observers),
// or nil if there is none.
func (e *Ensemble) Member(id int) *Member {
	if id < 1 || id > len(e.members) {
		return nil
	}
	return e.members[id-1]
}

// pollInterval is how often Leader and WaitServing look at the members:
// raft says nothing when a member starts serving.
const pollInterval = 10 * time.Millisecond

// Leader waits until exactly one running member serves as the leader and
// returns it, or returns ctx's error. The member of a one-member ensemble,
// whose mode is "standalone" (it leads its group of one, as ZooKeeper
// reports such a server), is its leader. During a partition an old leader cut
// off from the others may still believe it leads until its election
// timeout passes (raft's CheckQuorum); Leader waits that out.
func (e *Ensemble) Leader(ctx context.Context) (*Member, error) {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		var leaders []*Member
		for _, m := range e.members {
			if mode := m.Mode(); mode == "leader" || mode == "standalone" {
				leaders = append(leaders, m)
			}
		}
		if len(leaders) == 1 {
			return leaders[0], nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("paddocktest: waiting for one leader (%d now): %w", len(leaders), ctx.Err())
		case <-t.C:
		}
	}
}

// WaitServing waits until every running member serves (knows a leader and
// has caught up with it), or returns ctx's error naming those that do
// not. Stopped members are not waited for. A paused member is judged by
// its own state, which its clients cannot see.
func (e *Ensemble) WaitServing(ctx context.Context) error {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		var idle []string
		for _, m := range e.members {
			if s := m.server(); s != nil && !s.Serving() {
				idle = append(idle, itoa(m.id))
			}
		}
		if len(idle) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("paddocktest: waiting for members %s to serve: %w", strings.Join(idle, ", "), ctx.Err())
		case <-t.C:
		}
	}
}

// Cut cuts the link between members a and b, both ways: their
// connections are reset, and new ones are reset as soon as they are
// accepted, until Heal or HealAll. Each still reaches the other members
// (and clients reach it). A connect across the cut succeeds before the
// reset (it is not refused, as it would be by a firewall that rejects):
// a and b are partitioned, not dead, so neither takes the other for a
// process that is gone (see Member.Kill), and a follower cut from its
// leader waits out the election timeout. It panics if a or b is not a
// member's id.
func (e *Ensemble) Cut(a, b int) { e.setCut(a, b, true) }

// Heal undoes Cut(a, b). Members reconnect by themselves (the transport
// retries a failed dial within a second).
func (e *Ensemble) Heal(a, b int) { e.setCut(a, b, false) }

// PauseLink freezes the connections member from opens to member to, which
// carry from's raft messages to to (and to's replies on them at the
// transport level): they stay open but carry nothing, either way, until
// ResumeLink, when what was held is delivered. Messages from to to from
// use the connections to opens, which keep working: to goes on hearing
// nothing from from, while from goes on hearing from to. With to the
// leader, from stays a follower that serves its clients while everything it
// forwards to the leader waits.
func (e *Ensemble) PauseLink(from, to int) { e.setFrozen(from, to, true) }

// ResumeLink undoes PauseLink(from, to).
func (e *Ensemble) ResumeLink(from, to int) { e.setFrozen(from, to, false) }

func (e *Ensemble) setFrozen(from, to int, frozen bool) {
	e.mustID(from)
	e.mustID(to)
	if from == to {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if frozen {
		e.frozen[link{from, to}] = true
	} else {
		delete(e.frozen, link{from, to})
	}
	e.applyLocked()
}

// Isolate cuts every link of member id: a partition of one. Its clients
// still reach it; without a leader it stops serving and closes their
// connections, so they move to other members.
func (e *Ensemble) Isolate(id int) {
	e.mustID(id)
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, m := range e.members {
		if m.id != id {
			e.cut[pair(id, m.id)] = true
		}
	}
	e.applyLocked()
}

// HealAll undoes every Cut and Isolate (not Pause).
func (e *Ensemble) HealAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	clear(e.cut)
	e.applyLocked()
}

func (e *Ensemble) setCut(a, b int, cut bool) {
	e.mustID(a)
	e.mustID(b)
	if a == b {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if cut {
		e.cut[pair(a, b)] = true
	} else {
		delete(e.cut, pair(a, b))
	}
	e.applyLocked()
}

func (e *Ensemble) mustID(id int) {
	if e.Member(id) == nil {
		panic(fmt.Sprintf("paddocktest: no member %d (ids are 1 to %d)", id, len(e.members)))
	}
}

// applyLocked sets every proxy's mode from the faults: a link is cut when
// Cut or Isolate cut it or either end is stopped, frozen when either end
// is paused or PauseLink froze it; a client proxy is cut when its member
// is stopped, frozen when it is paused. (A stopped member's inbound
// proxies also do not listen: Member.Stop and Kill see to that.) e.mu is
// held.
func (e *Ensemble) applyLocked() {
	if e.closed {
		return
	}
	for l, p := range e.links {
		a, b := e.members[l.from-1], e.members[l.to-1]
		switch {
		case e.cut[pair(l.from, l.to)] || a.down || b.down:
			p.setMode(modeCut)
		case a.paused || b.paused || e.frozen[l]:
			p.setMode(modeFrozen)
		default:
			p.setMode(modePass)
		}
	}
	for _, m := range e.members {
		switch {
		case m.down:
			m.client.setMode(modeCut)
		case m.paused:
			m.client.setMode(modeFrozen)
		default:
			m.client.setMode(modePass)
		}
	}
}
