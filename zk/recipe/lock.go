package recipe

import (
	"context"
	"sync"

	"github.com/paddockhq/paddock/zk"
)

// Node name prefixes. Lock and write-lock nodes exclude everything after
// them; read-lock nodes exclude only the write and lock nodes after them.
// They are Apache Curator's, so that Curator's recipes on the same path
// take part in the same ordering (docs/client.md): InterProcessMutex and
// LeaderSelector name their nodes "lock-", InterProcessReadWriteLock
// "__READ__" and "__WRIT__", LeaderLatch "latch-", each after the
// "_c_<guid>-" prefix of a protected create and before the sequence number.
const (
	lockPrefix      = "lock-"
	readPrefix      = "__READ__"
	writePrefix     = "__WRIT__"
	candidatePrefix = "latch-"
)

// turn decides, from the contenders in sequence order and the index of ours,
// which node ours must wait for ("" when it holds).
type turn func(nodes []seqNode, i int) string

// exclusive waits for the node just before ours: a lock, a write lock, an
// election candidate.
func exclusive(nodes []seqNode, i int) string {
	if i == 0 {
		return ""
	}
	return nodes[i-1].name
}

// shared waits for the last writer before ours: a read lock.
func shared(nodes []seqNode, i int) string {
	for j := i - 1; j >= 0; j-- {
		if nodes[j].prefix != readPrefix {
			return nodes[j].name
		}
	}
	return ""
}

// contender is the lock algorithm of the ZooKeeper paper, shared by Lock,
// the read and write locks and Election: an ephemeral sequential node under
// dir, and a watch on the one node it must outlive, never on all of them (no
// herd effect).
type contender struct {
	conn     *zk.Conn
	dir      string
	prefix   string
	prefixes []string // the node kinds that take part in the ordering
	turn     turn
	opts     options

	mu   sync.Mutex
	busy bool  // acquiring or holding
	h    *hold // the current hold
}

func newContender(conn *zk.Conn, dir, prefix string, prefixes []string, t turn, opts []Option) *contender {
	return &contender{conn: conn, dir: cleanPath(dir), prefix: prefix, prefixes: prefixes, turn: t, opts: buildOptions(opts)}
}

// acquire makes the contender's node and, when block is set, waits for its
// turn; it reports whether the contender holds.
func (c *contender) acquire(ctx context.Context, data []byte, block bool) (bool, error) {
	c.mu.Lock()
	if c.busy {
		c.mu.Unlock()
		return false, ErrHeld
	}
	c.busy = true
	c.mu.Unlock()
	node, held, err := c.join(ctx, data, block)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !held {
		c.busy = false
		return false, err
	}
	c.h = newHold(c.conn, node, c.opts)
	return true, nil
}

// join creates the node and waits for its turn (if block); on failure or
// when it does not hold, its node is deleted.
func (c *contender) join(ctx context.Context, data []byte, block bool) (string, bool, error) {
	node, err := create(ctx, c.conn, join(c.dir, c.prefix), data, c.opts.acl, zk.ModeEphemeralSequential)
	if err != nil {
		return "", false, err
	}
	held, err := c.awaitTurn(ctx, node, block)
	if !held {
		abandon(ctx, c.conn, node)
	}
	return node, held, err
}

// awaitTurn waits until node holds (or, without block, says whether it
// does now). Every wake-up, whether a watch fired or the session changed
// state, reads the children again: the decision is always made on the
// server's current state.
func (c *contender) awaitTurn(ctx context.Context, node string, block bool) (bool, error) {
	name := base(node)
	s := newSignal()
	var watched string
	defer func() {
		if watched != "" {
			removeWatcher(c.conn, watched, s)
		}
	}()
	for {
		var children []string
		err := zk.Retry(ctx, func(ctx context.Context) error {
			var err error
			children, _, err = c.conn.Children(ctx, c.dir)
			return err
		})
		if err != nil {
			return false, err
		}
		children = sweep(ctx, c.conn, c.dir, name, children)
		nodes := sortedSeq(children, c.prefixes...)
		i := indexOf(nodes, name)
		if i < 0 {
			return false, ErrNodeDeleted
		}
		pred := c.turn(nodes, i)
		if pred == "" {
			return true, nil
		}
		if !block {
			return false, nil
		}
		var exists bool
		p := join(c.dir, pred)
		err = zk.Retry(ctx, func(ctx context.Context) error {
			var err error
			exists, _, err = c.conn.ExistsW(ctx, p, s)
			return err
		})
		if err != nil {
			return false, err
		}
		if watched != "" && watched != p {
			removeWatcher(c.conn, watched, s)
		}
		watched = p
		if !exists {
			continue
		}
		if err := wait(ctx, s); err != nil {
			return false, err
		}
	}
}

// release gives up the hold.
func (c *contender) release(ctx context.Context) error {
	c.mu.Lock()
	h := c.h
	if h == nil {
		c.mu.Unlock()
		return ErrNotHeld
	}
	c.h = nil
	c.busy = false
	c.mu.Unlock()
	return h.release(ctx, ErrNotHeld)
}

// lost returns the current hold's lost channel, or a closed channel.
func (c *contender) lost() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == nil {
		return closedCh
	}
	return c.h.lost
}

func (c *contender) node() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == nil {
		return ""
	}
	return c.h.node
}

// Lock is a distributed mutual-exclusion lock, as in the ZooKeeper paper:
// each contender creates an ephemeral sequential node under the lock's
// directory and holds the lock when its node is the lowest; otherwise it
// watches only the node just before its own, so that a release wakes one
// contender (no herd effect).
//
// A Lock value is one contender: it is not reentrant, and Lock or TryLock
// on a Lock that holds or is acquiring returns ErrHeld. Use one value per
// goroutine that contends. Its methods are safe for concurrent use.
type Lock struct{ c *contender }

// NewLock returns a lock on the directory path (created on first use, with
// its parents). Nothing is sent until Lock or TryLock.
func NewLock(conn *zk.Conn, path string, opts ...Option) *Lock {
	return &Lock{c: newContender(conn, path, lockPrefix, []string{lockPrefix, writePrefix, readPrefix}, exclusive, opts)}
}

// Lock acquires the lock, waiting as long as it takes or until ctx ends.
// When it returns an error the lock is not held and its node is deleted.
func (l *Lock) Lock(ctx context.Context) error {
	_, err := l.c.acquire(ctx, l.c.opts.data, true)
	return err
}

// TryLock acquires the lock only if no other contender is ahead, without
// waiting; it reports whether it holds.
func (l *Lock) TryLock(ctx context.Context) (bool, error) {
	return l.c.acquire(ctx, l.c.opts.data, false)
}

// Unlock releases the lock: it stops watching, closes Lost and deletes the
// node, retrying on connection loss until ctx ends. It returns ErrNotHeld
// when the lock is not held. After a loss, Unlock only cleans up and
// returns nil: if the session may still hold the node (a disconnection
// longer than the grace), it is deleted once the session is back, in the
// background if ctx ends first. If Unlock fails (ctx ended), the node stays
// until the session ends, and others wait until then.
func (l *Lock) Unlock(ctx context.Context) error { return l.c.release(ctx) }

// Lost returns a channel that is closed when the current hold is no longer
// guaranteed: the session expired or was closed, the node was deleted, or
// the Conn has been without a read-write server for longer than the
// disconnect grace (see WithDisconnectGrace). It is also closed by Unlock.
// When the lock is not held it returns a closed channel. The holder must
// stop relying on the lock once Lost is closed, and call Unlock.
func (l *Lock) Lost() <-chan struct{} { return l.c.lost() }

// Node returns the path of the node that holds the lock ("" when the lock
// is not held).
func (l *Lock) Node() string { return l.c.node() }

// NewReadLock returns the read side of a read/write lock on the directory
// path, as in the ZooKeeper paper: a "__READ__" node that holds once no write
// (or Lock) node precedes it, and waits for the last such node before it.
// Readers share the lock with each other.
func NewReadLock(conn *zk.Conn, path string, opts ...Option) *Lock {
	return &Lock{c: newContender(conn, path, readPrefix, []string{lockPrefix, writePrefix, readPrefix}, shared, opts)}
}

// NewWriteLock returns the write side of a read/write lock on the directory
// path: a "__WRIT__" node that holds once it is the lowest, and waits for the
// node just before it, whatever its kind.
func NewWriteLock(conn *zk.Conn, path string, opts ...Option) *Lock {
	return &Lock{c: newContender(conn, path, writePrefix, []string{lockPrefix, writePrefix, readPrefix}, exclusive, opts)}
}
