package consistency_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/zk"
)

// TestLockUnderFaults runs a lock recipe written here on zk's API alone
// (there is no recipe package yet) under the nemesis: each client creates
// an ephemeral sequential child of /lock, syncs and lists the children,
// holds the lock when its child is the first, and otherwise watches only
// the child just before its own. A holder gives the lock up the moment its
// session reports Disconnected or Expired (it may have lost it: the
// ensemble may expire the session while the client cannot tell), so that
// however the nemesis strikes, no two clients ever hold it at once.
func TestLockUnderFaults(t *testing.T) {
	const clients = 4
	e := newEnv(t, 3)
	setup := e.mustDial(1)
	mustCreate(t, setup, "/lock", nil)
	setup.Close()

	clk := newClock()
	duration := workloadDuration() * 2 / 3
	ctx, cancel := context.WithTimeout(t.Context(), duration)
	defer cancel()
	nem := newNemesis(e, clk)
	waitNemesis := startNemesis(ctx, nem)

	shared := &lockShared{clock: clk}
	lockers := make([]*locker, clients)
	var wg sync.WaitGroup
	for i := range lockers {
		lockers[i] = &locker{e: e, id: i, prefer: i%3 + 1, pinned: i%2 == 0, rng: e.rng(400 + uint64(i)), shared: shared}
		wg.Go(func() { lockers[i].run(ctx) })
	}
	wg.Wait()
	if err := waitNemesis(); err != nil {
		t.Fatal(err)
	}
	faults := nem.history()

	acquired, lost, sessions := 0, 0, 0
	for _, l := range lockers {
		acquired += l.acquired
		lost += l.lost
		sessions += l.sessions
	}
	t.Logf("%d faults; the lock was taken %d times, given up on a disconnection %d times; %d sessions",
		len(faults), acquired, lost, sessions)
	for _, v := range shared.violations() {
		t.Error(v)
	}
	if acquired < 10 {
		t.Errorf("the lock was taken only %d times: too few to tell anything", acquired)
	}
	if len(faults) == 0 {
		t.Errorf("the nemesis injected no fault in %v", duration)
	}
}

// TestLockHolderCutOff freezes the member the lock's holder is pinned to
// for longer than the holder's session timeout: the holder hears nothing
// and gives the lock up after two thirds of its timeout (its client then
// reports Disconnected), before the ensemble expires its session and the
// waiting locker, on another member, takes the lock.
func TestLockHolderCutOff(t *testing.T) {
	for _, tc := range []struct {
		name     string
		onLeader bool
	}{
		{"follower paused", false},
		{"leader paused", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 3)
			leader, fs := leaderAndFollowers(t, e)
			on, other := fs[0], fs[1]
			if tc.onLeader {
				on, other = leader, fs[0]
			}
			setup := e.mustDial(other.ID())
			mustCreate(t, setup, "/lock", nil)

			clk := newClock()
			shared := &lockShared{clock: clk}
			connect := func(l *locker) *lockSession {
				s := newLockSession(shared, l.id)
				var err error
				if l.pinned {
					s.conn, err = e.dialOnly(callCtx(t), l.prefer, zk.WithDefaultWatcher(s), zk.WithSessionTimeout(pinnedSessionTimeout))
				} else {
					s.conn, err = e.dial(callCtx(t), l.prefer, zk.WithDefaultWatcher(s))
				}
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.release(); s.conn.Close() })
				return s
			}
			holder := &locker{e: e, id: 0, prefer: on.ID(), pinned: true}
			waiter := &locker{e: e, id: 1, prefer: other.ID()}
			hs, ws := connect(holder), connect(waiter)
			ctx, cancel := context.WithTimeout(t.Context(), recoverTimeout)
			defer cancel()
			if _, err := holder.acquire(ctx, hs); err != nil {
				t.Fatalf("the first locker cannot take the free lock: %v", err)
			}
			_, holderDropped := hs.state()
			took := make(chan int64, 1)
			go func() {
				if _, err := waiter.acquire(ctx, ws); err != nil {
					t.Errorf("the waiting locker: %v", err)
					close(took)
					return
				}
				took <- clk.now()
			}()

			// The waiter is queued behind the holder before the fault.
			eventually(t, recoverTimeout, "the waiter queues", func() error {
				names, _, err := setup.Children(callCtx(t), "/lock")
				if err != nil || len(names) != 2 {
					return fmt.Errorf("children %v (%v)", names, err)
				}
				return nil
			})
			paused := clk.now()
			on.Pause()
			t.Cleanup(on.Resume)
			var droppedAt int64
			select {
			case <-holderDropped:
				droppedAt = clk.now()
			case <-ctx.Done():
				t.Fatal("the holder never noticed its member went silent")
			}
			tookAt, ok := <-took
			if !ok {
				return
			}
			t.Logf("%v (%s) paused at %s; the holder gave the lock up at %s, the waiter took it at %s",
				on, role(on, leader), fmtNs(paused), fmtNs(droppedAt), fmtNs(tookAt))
			for _, v := range shared.violations() {
				t.Error(v)
			}
			if tookAt-paused < int64(pinnedSessionTimeout*2/3) {
				t.Errorf("the waiter took the lock %v after the pause, before the holder's session can have expired",
					time.Duration(tookAt-paused))
			}
		})
	}
}

// lockShared is what the lockers share: who holds the lock as far as they
// believe, and what went wrong.
type lockShared struct {
	clock clock

	mu     sync.Mutex
	holder int // the locker that believes it holds the lock, or -1
	holds  int // how many believe they hold it
	errs   []string
}

func (s *lockShared) take(id int, node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holds > 0 {
		s.errs = append(s.errs, fmt.Sprintf("%s: locker %d (%s) took the lock while locker %d held it",
			fmtNs(s.clock.now()), id, node, s.holder))
	}
	s.holds++
	s.holder = id
}

func (s *lockShared) give(id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holds--
	if s.holder == id {
		s.holder = -1
	}
}

func (s *lockShared) violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.errs)
}

// lockSession is one session of a locker: its default watcher tracks the
// connection and takes the lock away from the locker as soon as the
// connection drops.
type lockSession struct {
	conn   *zk.Conn
	shared *lockShared
	id     int

	mu      sync.Mutex
	epoch   int  // connection drops so far
	holding bool // the locker believes it holds the lock
	dropped chan struct{}
	lost    int // locks given up on a drop
}

func newLockSession(shared *lockShared, id int) *lockSession {
	return &lockSession{shared: shared, id: id, dropped: make(chan struct{})}
}

func (s *lockSession) Process(ev zk.Event) {
	if ev.Type != zk.EventNone || ev.State == zk.StateSyncConnected || ev.State == zk.StateConnectedReadOnly {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch++
	if s.holding {
		s.holding = false
		s.lost++
		s.shared.give(s.id)
	}
	close(s.dropped)
	s.dropped = make(chan struct{})
}

// state returns the number of drops so far and a channel closed at the
// next one.
func (s *lockSession) state() (int, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.epoch, s.dropped
}

// take makes the locker a holder if the connection has not dropped since
// epoch.
func (s *lockSession) take(epoch int, node string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.epoch != epoch || s.conn.State() != zk.StateSyncConnected {
		return false
	}
	s.holding = true
	s.shared.take(s.id, node)
	return true
}

func (s *lockSession) lostCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lost
}

// release stops holding, if the session still held.
func (s *lockSession) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holding {
		s.holding = false
		s.shared.give(s.id)
	}
}

// pinnedSessionTimeout is the session timeout of the lockers that know a
// single member: shorter than the longest faults, so that a locker whose
// member is down or cut off for long loses its session (and its lock) while
// it cannot tell, which is what the recipe must survive.
const pinnedSessionTimeout = 1600 * time.Millisecond

// locker takes and releases the lock in a loop, through its member alone
// when pinned (its session then expires when that member is down for long)
// or preferring it.
type locker struct {
	e      *env
	id     int
	prefer int
	pinned bool
	rng    *rand.Rand
	shared *lockShared

	acquired, lost, sessions int
}

func (l *locker) run(ctx context.Context) {
	var s *lockSession
	defer func() {
		if s != nil {
			s.release()
			s.conn.Close()
			l.lost += s.lostCount()
		}
	}()
	for ctx.Err() == nil {
		if s == nil || s.conn.State() == zk.StateExpired {
			if s != nil {
				s.conn.Close()
				l.lost += s.lostCount()
			}
			s = newLockSession(l.shared, l.id)
			dctx, cancel := context.WithTimeout(ctx, callTimeout)
			var conn *zk.Conn
			var err error
			if l.pinned {
				conn, err = l.e.dialOnly(dctx, l.prefer, zk.WithDefaultWatcher(s), zk.WithSessionTimeout(pinnedSessionTimeout))
			} else {
				conn, err = l.e.dial(dctx, l.prefer, zk.WithDefaultWatcher(s))
			}
			cancel()
			if err != nil {
				s = nil
				continue
			}
			s.conn = conn
			l.sessions++
		}
		l.once(ctx, s)
	}
}

// once takes the lock, holds it a little and releases it.
func (l *locker) once(ctx context.Context, s *lockSession) {
	_, dropped := s.state()
	node, err := l.acquire(ctx, s)
	if node != "" {
		defer l.unlock(ctx, s, node)
	}
	if err != nil {
		return
	}
	// Mostly short holds; some long enough for a fault to strike the
	// holder.
	d := time.Duration(5+l.rng.IntN(30)) * time.Millisecond
	if l.rng.IntN(10) == 0 {
		d = time.Duration(300+l.rng.IntN(1000)) * time.Millisecond
	}
	hold := time.NewTimer(d)
	defer hold.Stop()
	select {
	case <-hold.C:
	case <-dropped:
	case <-ctx.Done():
	}
}

// errNotHeld says acquire gave up.
var errNotHeld = errors.New("lock not taken")

// acquire creates the locker's node and waits until it is the first
// child of /lock: the locker then holds the lock (s.take). It returns the
// node it created, if any, which the caller must unlock, even on error.
func (l *locker) acquire(ctx context.Context, s *lockSession) (string, error) {
	node, err := s.conn.CreateProtected(ctx, "/lock/n-", []byte(strconv.Itoa(l.id)), zk.OpenACL, zk.ModeEphemeralSequential)
	if err != nil {
		return "", err
	}
	mine := seqOf(node)
	// A connection loss is waited out: the session, and the node, may
	// well survive it.
	retry := func(err error) bool {
		return errors.Is(err, zk.ErrConnectionLoss) && sleepCtx(ctx, 50*time.Millisecond)
	}
	for ctx.Err() == nil {
		epoch, dropped := s.state()
		if _, err := s.conn.Sync(ctx, "/lock"); err != nil {
			if retry(err) {
				continue
			}
			return node, err
		}
		children, _, err := s.conn.Children(ctx, "/lock")
		if err != nil {
			if retry(err) {
				continue
			}
			return node, err
		}
		slices.SortFunc(children, func(a, b string) int { return seqOf(a) - seqOf(b) })
		i := slices.IndexFunc(children, func(c string) bool { return seqOf(c) == mine })
		if i < 0 {
			return node, fmt.Errorf("%w: %s went with an expired session", errNotHeld, node)
		}
		if i == 0 {
			if !s.take(epoch, node) {
				continue // the connection dropped since the children were read
			}
			l.acquired++
			return node, nil
		}
		// Wait for the node before mine to go, or for the connection to
		// drop (its watch may then be lost with an expired session).
		w := zk.NewChanWatcher(1)
		ok, _, err := s.conn.ExistsW(ctx, "/lock/"+children[i-1], w)
		if err != nil {
			if retry(err) {
				continue
			}
			return node, err
		}
		if !ok {
			continue
		}
		select {
		case <-w.C:
		case <-dropped:
		case <-ctx.Done():
		}
	}
	return node, ctx.Err()
}

// unlock gives the lock up, if held, and then deletes node: once it is
// deleted another locker may take the lock.
func (l *locker) unlock(ctx context.Context, s *lockSession, node string) {
	s.release()
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
	defer cancel()
	zk.Retry(dctx, func(ctx context.Context) error {
		err := s.conn.Delete(ctx, node, -1)
		if errors.Is(err, zk.ErrNoNode) || sessionLost(err) {
			return nil // gone with the session
		}
		return err
	})
}

// seqOf returns the sequence number of a sequential node's name.
func seqOf(name string) int {
	n, err := strconv.Atoi(name[strings.LastIndexByte(name, '-')+1:])
	if err != nil {
		panic(fmt.Sprintf("lock node %q has no sequence number", name))
	}
	return n
}
