package recipe

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/zk"
)

const (
	itemPrefix  = "qn-"
	prioPrefix  = "pq-"
	claimPrefix = "claim-"
	offerPrefix = "offer-"
)

// queue is the distributed queue of the ZooKeeper recipes: items are
// persistent sequential children of the queue's directory, taken in the
// order of their key (priority, then sequence number).
//
// A consumer takes an item by deleting it, in a multi that also creates an
// ephemeral claim node of its own: when the connection is lost during the
// multi, the claim says whether the delete happened, so that an item is
// never taken twice nor taken and dropped.
type queue struct {
	conn *zk.Conn
	dir  string
	opts options
}

type item struct {
	name string
	prio int64
	seq  int64
}

// items returns the queue's items in the order they are to be taken.
func items(children []string) []item {
	var out []item
	for _, c := range children {
		if n, ok := parseSeq(c, itemPrefix); ok {
			out = append(out, item{name: c, seq: n.seq})
			continue
		}
		// "pq-<8 hex digits>-": the priority, then the sequence number.
		given, _ := zk.ParseProtectedName(c)
		if len(given) < len(prioPrefix)+9 || !strings.HasPrefix(given, prioPrefix) || given[len(prioPrefix)+8] != '-' {
			continue
		}
		p, err := strconv.ParseUint(given[len(prioPrefix):len(prioPrefix)+8], 16, 32)
		if err != nil {
			continue
		}
		n, ok := parseSeq(c, given[:len(prioPrefix)+9])
		if !ok {
			continue
		}
		out = append(out, item{name: c, prio: int64(p) - 1<<31, seq: n.seq})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].prio != out[j].prio {
			return out[i].prio < out[j].prio
		}
		if out[i].seq != out[j].seq {
			return out[i].seq < out[j].seq
		}
		return out[i].name < out[j].name
	})
	return out
}

// prioName is the given name of an item of priority p: the priority as 8
// hex digits of p+2^31, so that names sort as priorities do.
func prioName(p int32) string {
	return fmt.Sprintf("%s%08x-", prioPrefix, uint32(int64(p)+1<<31))
}

// offer adds an item named name and the sequence number. The item has no
// CreateProtected prefix: Apache Curator's SimpleDistributedQueue takes
// only children named "qn-<sequence>". So that a connection loss does not
// make it offer twice, the item is created in a multi with an ephemeral
// marker node of its own: after a loss the marker (looked for after a
// sync, as CreateProtected looks for its prefix) says whether the lost
// attempt was applied, and an attempt applied late makes the retry fail on
// the marker rather than add a second item. The marker is deleted once the
// outcome is known, unless an attempt's answer was lost: that attempt may
// still be applied, after the outcome is known, and only the marker makes
// it fail, so the marker then stays until the session ends (consumers
// ignore it).
func (q *queue) offer(ctx context.Context, name string, data []byte) error {
	marker := join(q.dir, uniqueName(offerPrefix))
	ops := []zk.Op{
		&zk.CreateOp{Path: join(q.dir, name), Data: data, ACL: q.opts.acl, Mode: zk.ModePersistentSequential},
		&zk.CreateOp{Path: marker, ACL: q.opts.acl, Mode: zk.ModeEphemeral},
	}
	sent := false // an attempt went out: the marker may exist
	lost := false // an attempt's answer was lost: it may yet be applied
	defer func() {
		if sent && !lost {
			abandon(ctx, q.conn, marker)
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		sent = true
		_, err := q.conn.Multi(ctx, ops...)
		var me *zk.MultiError
		switch {
		case err == nil:
			return nil
		case lost && errors.Is(err, zk.ErrNodeExists) && errors.As(err, &me) && me.Index == 1:
			return nil // the marker exists: a lost attempt was applied
		case errors.Is(err, zk.ErrNoNode):
			// No directory (our marker, once made, keeps it).
			if err := ensurePath(ctx, q.conn, q.dir, q.opts.acl); err != nil {
				return err
			}
			continue
		case !errors.Is(err, zk.ErrConnectionLoss):
			return err
		}
		lost = true
		var exists bool
		err = zk.Retry(ctx, func(ctx context.Context) error {
			if _, err := q.conn.Sync(ctx, q.dir); err != nil {
				return err
			}
			var err error
			exists, _, err = q.conn.Exists(ctx, marker)
			return err
		})
		if err != nil {
			return err
		}
		if exists {
			return nil
		}
		if err := pause(ctx, 10*time.Millisecond); err != nil {
			return err
		}
	}
}

// poll takes the first item, if any. With w it leaves a watch on the
// directory's children when the queue is empty.
func (q *queue) poll(ctx context.Context, w zk.Watcher) ([]byte, bool, error) {
	for {
		var children []string
		err := zk.Retry(ctx, func(ctx context.Context) error {
			var err error
			if w != nil {
				children, _, err = q.conn.ChildrenW(ctx, q.dir, w)
			} else {
				children, _, err = q.conn.Children(ctx, q.dir)
			}
			return err
		})
		if errors.Is(err, zk.ErrNoNode) {
			if w != nil {
				if err := ensurePath(ctx, q.conn, q.dir, q.opts.acl); err != nil {
					return nil, false, err
				}
				continue
			}
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		its := items(children)
		if len(its) == 0 {
			return nil, false, nil
		}
		for _, it := range its {
			data, ok, err := q.take(ctx, join(q.dir, it.name))
			if err != nil {
				return nil, false, err
			}
			if ok {
				return data, true, nil
			}
		}
		// Every item listed was taken by others: list again.
	}
}

// take tries to take the item at p; it reports false when another consumer
// took it first.
func (q *queue) take(ctx context.Context, p string) ([]byte, bool, error) {
	var data []byte
	var st *zk.Stat
	err := zk.Retry(ctx, func(ctx context.Context) error {
		var err error
		data, st, err = q.conn.Get(ctx, p)
		return err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	claim := join(q.dir, uniqueName(claimPrefix))
	if err := ctx.Err(); err != nil {
		return nil, false, err // nothing sent
	}
	// Once an attempt is sent it may be applied even if its answer never
	// comes (ctx ended while it was in flight, or the connection was
	// lost): take does not return before it knows whether the item was
	// taken, which, when ctx has ended, it waits for up to a session
	// timeout more (then the session is most likely over, and the claim
	// with it). An item taken is returned, never dropped.
	sctx, stop := afterCtx(ctx, q.conn.SessionTimeout())
	defer stop()
	fail := func(err error) ([]byte, bool, error) {
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			err = errors.Join(cerr, err) // say why we stopped: ctx's end
		}
		return nil, false, err
	}
	// claimed reports whether our claim exists: whether an attempt whose
	// answer was lost took the item. The session's calls are answered in
	// order, so the check sees an attempt sent before it on this
	// connection.
	claimed := func() (bool, error) {
		var exists bool
		err := zk.Retry(sctx, func(ctx context.Context) error {
			var err error
			exists, _, err = q.conn.Exists(ctx, claim)
			return err
		})
		return exists, err
	}
	lost := false // an attempt's answer was lost
	for {
		_, err = q.conn.Multi(sctx,
			&zk.DeleteOp{Path: p, Version: st.Version},
			&zk.CreateOp{Path: claim, ACL: q.opts.acl, Mode: zk.ModeEphemeral},
		)
		if err == nil {
			break
		}
		if errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrBadVersion) {
			// Taken: by another consumer, or by an attempt of ours
			// applied after the look that did not find it (a request
			// sent on a connection that was lost may still be applied
			// late).
			if !lost {
				return nil, false, nil
			}
			ok, cerr := claimed()
			if cerr != nil {
				return fail(cerr)
			}
			if !ok {
				return nil, false, nil
			}
			break
		}
		if !errors.Is(err, zk.ErrConnectionLoss) {
			// An answer (no permission, a session over...), or no
			// answer for a session timeout after ctx ended.
			return fail(err)
		}
		// The outcome is unknown: look for the claim, then try again. A
		// retry settles it: it takes the item, or finds it gone and
		// looks again.
		lost = true
		ok, cerr := claimed()
		if cerr != nil {
			return fail(cerr)
		}
		if ok {
			break
		}
		if err := pause(sctx, 10*time.Millisecond); err != nil {
			return fail(err)
		}
	}
	abandon(ctx, q.conn, claim)
	return data, true, nil
}

// takeWait takes the first item, waiting for one as long as it takes.
func (q *queue) takeWait(ctx context.Context) ([]byte, error) {
	s := newSignal()
	defer removeWatcher(q.conn, q.dir, s)
	for {
		data, ok, err := q.poll(ctx, s)
		if err != nil {
			return nil, err
		}
		if ok {
			return data, nil
		}
		if err := wait(ctx, s); err != nil {
			return nil, err
		}
	}
}

func (q *queue) size(ctx context.Context) (int, error) {
	var children []string
	err := zk.Retry(ctx, func(ctx context.Context) error {
		var err error
		children, _, err = q.conn.Children(ctx, q.dir)
		return err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return 0, nil
	}
	return len(items(children)), err
}

// Queue is a distributed FIFO queue, as in the ZooKeeper recipes: Offer
// adds a persistent sequential node; Poll and Take remove the lowest. Every
// item offered is taken exactly once, even across connection losses (see
// the package documentation), unless a consumer's session expires between
// taking an item and using it. So that no item is dropped, Poll and Take
// do not give up on a request to take an item once it is sent: when ctx
// ends while its outcome is unknown, they wait for it (up to a session
// timeout more), and an item taken then is returned with a nil error.
type Queue struct{ q queue }

// NewQueue returns the queue whose directory is path (created on first use,
// with its parents).
func NewQueue(conn *zk.Conn, path string, opts ...Option) *Queue {
	return &Queue{q: queue{conn: conn, dir: cleanPath(path), opts: buildOptions(opts)}}
}

// Offer appends data to the queue, as a node named "qn-" and a sequence
// number (the name Apache Curator's SimpleDistributedQueue uses). A
// connection loss never makes it append twice: a marker node created with
// the item says whether an attempt whose answer was lost was applied, and
// stays, after such a loss, until the session ends, so that the lost
// attempt, should a server apply it later still, fails.
func (q *Queue) Offer(ctx context.Context, data []byte) error {
	return q.q.offer(ctx, itemPrefix, data)
}

// Poll takes the head of the queue if there is one, without waiting.
func (q *Queue) Poll(ctx context.Context) ([]byte, bool, error) { return q.q.poll(ctx, nil) }

// Take takes the head of the queue, waiting for an item as long as it takes
// or until ctx ends.
func (q *Queue) Take(ctx context.Context) ([]byte, error) { return q.q.takeWait(ctx) }

// Len returns the number of items in the queue.
func (q *Queue) Len(ctx context.Context) (int, error) { return q.q.size(ctx) }

// PriorityQueue is a distributed priority queue: items of lower priority
// value are taken first, and items of equal priority in the order they
// were offered. It shares Queue's guarantees. A PriorityQueue and a Queue
// may share a directory: plain items have priority 0.
type PriorityQueue struct{ q queue }

// NewPriorityQueue returns the priority queue whose directory is path.
func NewPriorityQueue(conn *zk.Conn, path string, opts ...Option) *PriorityQueue {
	return &PriorityQueue{q: queue{conn: conn, dir: cleanPath(path), opts: buildOptions(opts)}}
}

// Offer adds data with a priority: lower values are taken first.
func (q *PriorityQueue) Offer(ctx context.Context, data []byte, priority int32) error {
	return q.q.offer(ctx, prioName(priority), data)
}

// Poll takes the first item if there is one, without waiting.
func (q *PriorityQueue) Poll(ctx context.Context) ([]byte, bool, error) { return q.q.poll(ctx, nil) }

// Take takes the first item, waiting for one as long as it takes or until
// ctx ends.
func (q *PriorityQueue) Take(ctx context.Context) ([]byte, error) { return q.q.takeWait(ctx) }

// Len returns the number of items in the queue.
func (q *PriorityQueue) Len(ctx context.Context) (int, error) { return q.q.size(ctx) }
