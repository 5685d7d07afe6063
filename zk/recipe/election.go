package recipe

import (
	"bytes"
	"context"
	"errors"
	"sync"

	"github.com/paddockhq/paddock/zk"
)

// LeaderInfo is the leader of an election: its node and the id it
// campaigned with. The zero value (Node "") means there is no leader.
type LeaderInfo struct {
	Node string // path of the leader's node
	ID   []byte // the data of the leader's node
}

// Election is leader election as in the ZooKeeper paper: every candidate
// creates an ephemeral sequential node under the election's directory, the
// lowest is the leader, and each other candidate watches only the node just
// before its own. Anyone may read or follow the current leader (Leader,
// Observe) without campaigning.
//
// An Election value is one candidate: Campaign on a value that campaigns or
// leads returns ErrHeld. Its methods are safe for concurrent use.
type Election struct {
	conn *zk.Conn
	dir  string
	c    *contender
}

// NewElection returns an election on the directory path (created on first
// use, with its parents). Nothing is sent until a method is called.
func NewElection(conn *zk.Conn, path string, opts ...Option) *Election {
	c := newContender(conn, path, candidatePrefix, []string{candidatePrefix}, exclusive, opts)
	return &Election{conn: conn, dir: c.dir, c: c}
}

// Campaign enters the election with id (stored in the candidate's node, as
// Leader and Observe report it) and waits until this candidate leads or ctx
// ends. When it returns an error the candidate has left the election.
func (e *Election) Campaign(ctx context.Context, id []byte) error {
	_, err := e.c.acquire(ctx, id, true)
	return err
}

// Resign gives up leadership: Lost is closed and the node deleted. It
// returns ErrNotHeld when this candidate does not lead. After a loss,
// Resign only cleans up and returns nil, as Lock.Unlock does.
func (e *Election) Resign(ctx context.Context) error { return e.c.release(ctx) }

// Lost returns a channel closed when this candidate's leadership is no
// longer guaranteed (as Lock.Lost), or by Resign. It is closed when the
// candidate does not lead.
func (e *Election) Lost() <-chan struct{} { return e.c.lost() }

// Leader returns the current leader, or ErrNoLeader when no candidate
// campaigns.
func (e *Election) Leader(ctx context.Context) (LeaderInfo, error) {
	l, err := e.leader(ctx, nil)
	if err == nil && l.Node == "" {
		err = ErrNoLeader
	}
	return l, err
}

// leader reads the current leader; with w, it leaves a watch that fires
// when the leader changes: on the leader's node when there is one (a node
// created later has a higher sequence number, so only the leader's deletion
// changes the leader: followers and observers are not woken by every
// candidate that comes and goes), on the directory's children when there is
// none, on the directory's creation when it does not exist.
func (e *Election) leader(ctx context.Context, w zk.Watcher) (LeaderInfo, error) {
	for {
		nodes, exists, err := e.candidates(ctx, nil)
		if err != nil {
			return LeaderInfo{}, err
		}
		if len(nodes) == 0 && w != nil {
			// Nobody: list again with a watch, or wait for the directory.
			if exists {
				nodes, exists, err = e.candidates(ctx, w)
			} else {
				err = zk.Retry(ctx, func(ctx context.Context) error {
					var err error
					exists, _, err = e.conn.ExistsW(ctx, e.dir, w)
					return err
				})
				if err == nil && exists {
					continue
				}
			}
			if err != nil {
				return LeaderInfo{}, err
			}
		}
		if len(nodes) == 0 {
			return LeaderInfo{}, nil
		}
		p := join(e.dir, nodes[0].name)
		var data []byte
		err = zk.Retry(ctx, func(ctx context.Context) error {
			var err error
			if w != nil {
				data, _, err = e.conn.GetW(ctx, p, w)
			} else {
				data, _, err = e.conn.Get(ctx, p)
			}
			return err
		})
		if errors.Is(err, zk.ErrNoNode) {
			continue // the leader just left
		}
		if err != nil {
			return LeaderInfo{}, err
		}
		return LeaderInfo{Node: p, ID: data}, nil
	}
}

// candidates lists the candidates in order (with a children watch for w
// if not nil), and says whether the directory exists.
func (e *Election) candidates(ctx context.Context, w zk.Watcher) ([]seqNode, bool, error) {
	var children []string
	err := zk.Retry(ctx, func(ctx context.Context) error {
		var err error
		if w != nil {
			children, _, err = e.conn.ChildrenW(ctx, e.dir, w)
		} else {
			children, _, err = e.conn.Children(ctx, e.dir)
		}
		return err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return sortedSeq(children, candidatePrefix), true, nil
}

// Observe returns a channel that receives the leader each time it changes,
// starting with the current one; a zero LeaderInfo means nobody leads. A
// receiver that falls behind gets the latest leader, not every one between.
// The channel is closed when ctx ends or the session is over.
func (e *Election) Observe(ctx context.Context) <-chan LeaderInfo {
	ch := make(chan LeaderInfo)
	go func() {
		defer close(ch)
		s := newSignal()
		// s watches the directory and the leader's node: leave no
		// watcher behind.
		var watched string // the leader's node
		defer func() {
			removeWatcher(e.conn, e.dir, s)
			if watched != "" {
				removeWatcher(e.conn, watched, s)
			}
		}()
		first := true
		var last LeaderInfo
		for {
			l, err := e.leader(ctx, s)
			if err != nil {
				// ctx ended or the session is over; anything else
				// (no permission, say) would fail again.
				return
			}
			if watched != "" && watched != l.Node {
				removeWatcher(e.conn, watched, s)
			}
			watched = l.Node
			if first || l.Node != last.Node || !bytes.Equal(l.ID, last.ID) {
				select {
				case ch <- l:
				case <-ctx.Done():
					return
				}
				first, last = false, l
			}
			if err := wait(ctx, s); err != nil {
				return
			}
		}
	}()
	return ch
}

// LeaderLatch is a candidate that stays in an election until closed, as
// Apache Curator's LeaderLatch: Start enters the election, Await waits for
// leadership, IsLeader says whether it leads now. When leadership is lost
// while the session lives on (a disconnection longer than the grace), or its
// node is deleted by someone else, the latch enters the election again, at
// the back. When the session ends, the latch stops and Await returns the
// session's error: make a new Conn and a new latch.
type LeaderLatch struct {
	e  *Election
	id []byte

	mu      sync.Mutex
	started bool
	closed  bool
	err     error         // why the latch stopped
	term    *hold         // the current leadership, nil when not leading
	changed chan struct{} // closed and replaced when leadership changes
	cancel  context.CancelFunc
	done    chan struct{}
}

// NewLeaderLatch returns a latch for the election on the directory path,
// campaigning with id.
func NewLeaderLatch(conn *zk.Conn, path string, id []byte, opts ...Option) *LeaderLatch {
	return &LeaderLatch{e: NewElection(conn, path, opts...), id: append([]byte(nil), id...), changed: make(chan struct{})}
}

// Start enters the election: it returns once the latch's node exists, so
// that latches started one after the other lead in that order. The latch
// then waits for its turn in the background.
func (l *LeaderLatch) Start(ctx context.Context) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	if l.started {
		l.mu.Unlock()
		return ErrHeld
	}
	l.started = true
	bg, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	l.done = make(chan struct{})
	l.mu.Unlock()
	c := l.e.c
	node, err := create(ctx, c.conn, join(c.dir, c.prefix), l.id, c.opts.acl, zk.ModeEphemeralSequential)
	if err != nil {
		cancel()
		l.mu.Lock()
		l.started = false
		l.mu.Unlock()
		close(l.done)
		return err
	}
	go l.run(bg, node)
	return nil
}

// run campaigns until bg ends or the session is over. The latch's node is
// its alone: run deletes it when it leaves.
func (l *LeaderLatch) run(bg context.Context, node string) {
	defer close(l.done)
	c := l.e.c
	// reenter makes a new node, at the back of the election. The create is
	// not cancelled by Close, so that a node made is never a node unknown.
	reenter := func() bool {
		var err error
		node, err = create(context.WithoutCancel(bg), c.conn, join(c.dir, c.prefix), l.id, c.opts.acl, zk.ModeEphemeralSequential)
		if err != nil {
			l.stop(err)
			return false
		}
		if bg.Err() != nil {
			abandon(bg, c.conn, node)
			l.stop(ErrClosed)
			return false
		}
		return true
	}
	for {
		held, err := c.awaitTurn(bg, node, true)
		if !held {
			if errors.Is(err, ErrNodeDeleted) && bg.Err() == nil {
				// Someone deleted our node while we waited: stay in the
				// election, as Curator's LeaderLatch does.
				if !reenter() {
					return
				}
				continue
			}
			abandon(bg, c.conn, node)
			l.stop(err)
			return
		}
		h := newHold(c.conn, node, c.opts)
		l.setTerm(h)
		select {
		case <-h.lost:
		case <-bg.Done():
			h.cancel()
			<-h.done
			h.end(ErrClosed)
			l.setTerm(nil)
			abandon(bg, c.conn, node)
			l.stop(ErrClosed)
			return
		}
		l.setTerm(nil)
		// After a loss with the session alive the monitor deletes the
		// node, retrying while disconnected, until the session is back
		// or over: Close must not wait for that to stop the latch.
		select {
		case <-h.done:
		case <-bg.Done():
			h.cancel()
			<-h.done
			l.stop(ErrClosed)
			abandon(bg, c.conn, node)
			return
		}
		if err := h.err(); sessionOver(err) {
			l.stop(err)
			return
		}
		if bg.Err() != nil { // closed as the monitor ended: stay out
			l.stop(ErrClosed)
			abandon(bg, c.conn, node) // gone already, unless the monitor failed to delete it
			return
		}
		// Lost with the session alive: the monitor deleted the node.
		// Enter again, at the back.
		if !reenter() {
			return
		}
	}
}

func (l *LeaderLatch) setTerm(h *hold) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.term = h
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *LeaderLatch) stop(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		if err == nil || errors.Is(err, context.Canceled) {
			err = ErrClosed
		}
		l.err = err
	}
	close(l.changed)
	l.changed = make(chan struct{})
}

// Await waits until the latch leads, or until ctx ends or the latch stops
// (closed, or its session over), and returns why not.
func (l *LeaderLatch) Await(ctx context.Context) error {
	for {
		l.mu.Lock()
		term, err, changed, started := l.term, l.err, l.changed, l.started
		l.mu.Unlock()
		var lost <-chan struct{}
		if term != nil {
			lost = term.lost
		}
		switch {
		case term != nil && !isClosed(lost):
			return nil
		case err != nil:
			return err
		case !started:
			return ErrNotStarted
		}
		select {
		case <-changed:
		case <-lost: // nil when not leading
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// IsLeader reports whether the latch leads now: its leadership began and
// has not been lost.
func (l *LeaderLatch) IsLeader() bool {
	l.mu.Lock()
	h := l.term
	l.mu.Unlock()
	return h != nil && !isClosed(h.lost)
}

// Lost returns a channel closed when the current leadership ends (as
// Lock.Lost); it is closed when the latch does not lead.
func (l *LeaderLatch) Lost() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.term == nil {
		return closedCh
	}
	return l.term.lost
}

// Close leaves the election: leadership, if held, ends (Lost is closed)
// and the latch's node is deleted. It waits for that until ctx ends;
// the deletion goes on in the background after that.
func (l *LeaderLatch) Close(ctx context.Context) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	cancel, done := l.cancel, l.done
	l.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
