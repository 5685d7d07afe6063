package recipe

import (
	"context"
	"errors"
	"sort"

	"github.com/paddockhq/paddock/zk"
)

// Barrier holds processes back until it is removed, as in the ZooKeeper
// paper: the barrier is a znode; Wait returns once it does not exist.
type Barrier struct {
	conn *zk.Conn
	path string
	opts options
}

// NewBarrier returns a barrier on the znode path.
func NewBarrier(conn *zk.Conn, path string, opts ...Option) *Barrier {
	return &Barrier{conn: conn, path: cleanPath(path), opts: buildOptions(opts)}
}

// Set raises the barrier (creates its znode, and the missing parents). A
// barrier already set is not an error.
func (b *Barrier) Set(ctx context.Context) error {
	_, err := create(ctx, b.conn, b.path, nil, b.opts.acl, zk.ModePersistent)
	if errors.Is(err, zk.ErrNodeExists) {
		return nil
	}
	return err
}

// Remove lowers the barrier, releasing every waiter. A barrier not set is
// not an error.
func (b *Barrier) Remove(ctx context.Context) error {
	err := zk.Retry(ctx, func(ctx context.Context) error { return b.conn.Delete(ctx, b.path, -1) })
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}

// Wait returns once the barrier is not set, or when ctx ends or the session
// is over.
func (b *Barrier) Wait(ctx context.Context) error {
	s := newSignal()
	defer removeWatcher(b.conn, b.path, s)
	for {
		var exists bool
		err := zk.Retry(ctx, func(ctx context.Context) error {
			var err error
			exists, _, err = b.conn.ExistsW(ctx, b.path, s)
			return err
		})
		if err != nil {
			return err
		}
		if !exists {
			return nil
		}
		if err := wait(ctx, s); err != nil {
			return err
		}
	}
}

// readyNode is the child a DoubleBarrier's last participant to enter
// creates; entering participants watch it.
const readyNode = "ready"

// DoubleBarrier synchronises the start and the end of a computation among
// count participants, as in the ZooKeeper paper: Enter returns once count
// participants have entered, Leave once every participant has left. Each
// participant is an ephemeral child of the barrier's directory, so one whose
// session ends counts as gone.
//
// A DoubleBarrier value is one participant. A directory serves one round at
// a time: start another round once every participant of the last one has
// left (or use a new directory per round).
type DoubleBarrier struct {
	conn  *zk.Conn
	dir   string
	count int
	name  string
	opts  options
}

// NewDoubleBarrier returns a participant of the double barrier on the
// directory path, for count participants in all.
func NewDoubleBarrier(conn *zk.Conn, path string, count int, opts ...Option) *DoubleBarrier {
	return &DoubleBarrier{conn: conn, dir: cleanPath(path), count: count, name: uniqueName("p-"), opts: buildOptions(opts)}
}

// Node returns the path of the participant's node.
func (b *DoubleBarrier) Node() string { return join(b.dir, b.name) }

// Enter joins the barrier and waits until count participants have joined,
// or ctx ends. The participant's node stays when Enter fails: call Leave,
// or end the session, to take it out.
func (b *DoubleBarrier) Enter(ctx context.Context) error {
	if b.count < 1 {
		return ErrBadCount
	}
	s := newSignal()
	ready := join(b.dir, readyNode)
	defer removeWatcher(b.conn, ready, s)
	// Watch for ready before joining, so that its creation is not missed.
	if err := ensurePath(ctx, b.conn, b.dir, b.opts.acl); err != nil {
		return err
	}
	var exists bool
	err := zk.Retry(ctx, func(ctx context.Context) error {
		var err error
		exists, _, err = b.conn.ExistsW(ctx, ready, s)
		return err
	})
	if err != nil {
		return err
	}
	if err := b.createOwn(ctx); err != nil {
		return err
	}
	for !exists {
		var children []string
		err := zk.Retry(ctx, func(ctx context.Context) error {
			var err error
			children, _, err = b.conn.Children(ctx, b.dir)
			return err
		})
		if err != nil {
			return err
		}
		if len(participants(children)) >= b.count {
			_, err := create(ctx, b.conn, ready, nil, b.opts.acl, zk.ModePersistent)
			if err != nil && !errors.Is(err, zk.ErrNodeExists) {
				return err
			}
			return nil
		}
		if err := wait(ctx, s); err != nil {
			return err
		}
		err = zk.Retry(ctx, func(ctx context.Context) error {
			var err error
			exists, _, err = b.conn.ExistsW(ctx, ready, s)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// createOwn creates the participant's ephemeral node. After a connection
// loss a retried create may find the node its first attempt made: it is
// ours when this session owns it.
func (b *DoubleBarrier) createOwn(ctx context.Context) error {
	p := b.Node()
	_, err := create(ctx, b.conn, p, b.opts.data, b.opts.acl, zk.ModeEphemeral)
	if errors.Is(err, zk.ErrNodeExists) {
		var st *zk.Stat
		err = zk.Retry(ctx, func(ctx context.Context) error {
			var err error
			_, st, err = b.conn.Exists(ctx, p)
			return err
		})
		if err == nil && (st == nil || st.EphemeralOwner != b.conn.SessionID()) {
			err = &zk.OpError{Op: "create", Path: p, Err: zk.ErrNodeExists}
		}
	}
	return err
}

// participants returns the participant children, sorted by name.
func participants(children []string) []string {
	out := children[:0:0]
	for _, c := range children {
		if c != readyNode {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

// Leave leaves the barrier and waits until every participant has left, or
// ctx ends. It follows the ZooKeeper recipe: the lowest participant waits
// for the highest to leave, the others delete their node and wait for the
// lowest, so that each departure wakes one or two participants, not all.
func (b *DoubleBarrier) Leave(ctx context.Context) error {
	s := newSignal()
	var watched string
	defer func() {
		if watched != "" {
			removeWatcher(b.conn, watched, s)
		}
	}()
	for {
		var children []string
		err := zk.Retry(ctx, func(ctx context.Context) error {
			var err error
			children, _, err = b.conn.Children(ctx, b.dir)
			return err
		})
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		if err != nil {
			return err
		}
		ps := participants(children)
		if len(ps) == 0 {
			break
		}
		if len(ps) == 1 && ps[0] == b.name {
			if err := deleteNode(ctx, b.conn, b.Node()); err != nil {
				return err
			}
			break
		}
		var target string
		if ps[0] == b.name {
			target = ps[len(ps)-1]
		} else {
			if i := sort.SearchStrings(ps, b.name); i < len(ps) && ps[i] == b.name {
				if err := deleteNode(ctx, b.conn, b.Node()); err != nil {
					return err
				}
			}
			target = ps[0]
		}
		p := join(b.dir, target)
		var exists bool
		err = zk.Retry(ctx, func(ctx context.Context) error {
			var err error
			exists, _, err = b.conn.ExistsW(ctx, p, s)
			return err
		})
		if err != nil {
			return err
		}
		if watched != "" && watched != p {
			removeWatcher(b.conn, watched, s)
		}
		watched = p
		if !exists {
			continue
		}
		if err := wait(ctx, s); err != nil {
			return err
		}
	}
	// Everyone has left: take the ready node down for the next round.
	err := zk.Retry(ctx, func(ctx context.Context) error { return b.conn.Delete(ctx, join(b.dir, readyNode), -1) })
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	return nil
}
