package recipe

import (
	"context"
	"errors"
	"sort"
	"sync"

	"github.com/paddockhq/paddock/zk"
)

const memberPrefix = "member-"

// Member is one member of a Group.
type Member struct {
	Node string // the member's node
	Seq  int64  // its sequence number: members join in this order
	Data []byte // what the member joined with
}

// Group is group membership as in the ZooKeeper paper: each member is an
// ephemeral sequential child of the group's directory, so a member whose
// session ends leaves by itself, and the sequence numbers order members by
// the time they joined.
type Group struct {
	conn *zk.Conn
	dir  string
	opts options
}

// NewGroup returns the group whose directory is path (created on first
// Join, with its parents).
func NewGroup(conn *zk.Conn, path string, opts ...Option) *Group {
	return &Group{conn: conn, dir: cleanPath(path), opts: buildOptions(opts)}
}

// Membership is this process's place in a group.
type Membership struct {
	h *hold

	mu   sync.Mutex
	left bool // a Leave succeeded
}

// Join adds a member with data to the group. The member stays until Leave,
// or until its session ends.
func (g *Group) Join(ctx context.Context, data []byte) (*Membership, error) {
	node, err := create(ctx, g.conn, join(g.dir, memberPrefix), data, g.opts.acl, zk.ModeEphemeralSequential)
	if err != nil {
		return nil, err
	}
	// A member shows once: take out a twin of our node, if a lost create
	// was applied late.
	var children []string
	if err := zk.Retry(ctx, func(ctx context.Context) error {
		var err error
		children, _, err = g.conn.Children(ctx, g.dir)
		return err
	}); err == nil {
		sweep(ctx, g.conn, g.dir, base(node), children)
	}
	return &Membership{h: newHold(g.conn, node, g.opts)}, nil
}

// Node returns the path of the member's node.
func (m *Membership) Node() string { return m.h.node }

// Lost returns a channel closed when the membership is no longer guaranteed
// (as Lock.Lost), or by Leave.
func (m *Membership) Lost() <-chan struct{} { return m.h.lost }

// Leave takes the member out of the group, retrying on connection loss
// until ctx ends. It returns ErrNotHeld when the member has left already.
// After a loss (see Lost), Leave only cleans up and returns nil, as
// Lock.Unlock does.
func (m *Membership) Leave(ctx context.Context) error {
	m.mu.Lock()
	left := m.left
	m.mu.Unlock()
	if left {
		return ErrNotHeld
	}
	err := m.h.release(ctx, ErrNotHeld)
	if err == nil {
		m.mu.Lock()
		m.left = true
		m.mu.Unlock()
	}
	return err
}

// Members returns the members, in the order they joined.
func (g *Group) Members(ctx context.Context) ([]Member, error) {
	ms, _, err := g.read(ctx, nil, nil)
	return ms, err
}

// read lists the members; with w it leaves a watch on the directory's
// children (or on its creation when it does not exist). Members whose data
// was read before (known) are not read again: a member's data is the one it
// joined with.
func (g *Group) read(ctx context.Context, w zk.Watcher, known map[string]Member) ([]Member, map[string]Member, error) {
	for {
		var children []string
		err := zk.Retry(ctx, func(ctx context.Context) error {
			var err error
			if w != nil {
				children, _, err = g.conn.ChildrenW(ctx, g.dir, w)
			} else {
				children, _, err = g.conn.Children(ctx, g.dir)
			}
			return err
		})
		if errors.Is(err, zk.ErrNoNode) {
			if w == nil {
				return nil, nil, nil
			}
			var exists bool
			err = zk.Retry(ctx, func(ctx context.Context) error {
				var err error
				exists, _, err = g.conn.ExistsW(ctx, g.dir, w)
				return err
			})
			if err != nil {
				return nil, nil, err
			}
			if exists {
				continue
			}
			return nil, nil, nil
		}
		if err != nil {
			return nil, nil, err
		}
		nodes := sortedSeq(children, memberPrefix)
		next := make(map[string]Member, len(nodes))
		var ops []zk.Op
		var unread []seqNode
		for _, n := range nodes {
			if m, ok := known[n.name]; ok {
				next[n.name] = m
				continue
			}
			ops = append(ops, &zk.GetDataOp{Path: join(g.dir, n.name)})
			unread = append(unread, n)
		}
		if len(ops) > 0 {
			var res []zk.OpResult
			err := zk.Retry(ctx, func(ctx context.Context) error {
				var err error
				res, err = g.conn.MultiRead(ctx, ops...)
				return err
			})
			if err != nil {
				return nil, nil, err
			}
			for i, r := range res {
				if r.Err != nil {
					continue // left since the listing
				}
				n := unread[i]
				next[n.name] = Member{Node: join(g.dir, n.name), Seq: n.seq, Data: r.Data}
			}
		}
		ms := make([]Member, 0, len(next))
		for _, m := range next {
			ms = append(ms, m)
		}
		sort.Slice(ms, func(i, j int) bool { return ms[i].Seq < ms[j].Seq })
		return ms, next, nil
	}
}

// GroupView is a group's membership kept current by a watch on the group's
// directory.
type GroupView struct {
	g      *Group
	l      *latest[[]Member]
	cancel context.CancelFunc
	done   chan struct{}
}

// Watch reads the membership and keeps it current until the view is
// closed or the session ends. It returns once the first view is read.
func (g *Group) Watch(ctx context.Context) (*GroupView, error) {
	bg, cancel := context.WithCancel(context.Background())
	v := &GroupView{g: g, l: newLatest[[]Member](), cancel: cancel, done: make(chan struct{})}
	go v.run(bg)
	if _, err := v.l.wait(ctx); err != nil {
		v.Close(context.Background())
		return nil, err
	}
	return v, nil
}

func (v *GroupView) run(ctx context.Context) {
	defer close(v.done)
	s := newSignal()
	defer removeWatcher(v.g.conn, v.g.dir, s)
	var known map[string]Member
	var last []Member
	first := true
	for {
		ms, next, err := v.g.read(ctx, s, known)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				err = ErrClosed
			}
			v.l.stop(err)
			return
		}
		known = next
		if first || !sameMembers(ms, last) {
			v.l.set(ms)
			first, last = false, ms
		}
		if err := wait(ctx, s); err != nil {
			v.l.stop(ErrClosed)
			return
		}
	}
}

func sameMembers(a, b []Member) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Node != b[i].Node {
			return false
		}
	}
	return true
}

// Members returns the current membership, in the order members joined.
func (v *GroupView) Members() []Member {
	ms, _ := v.l.get()
	return ms
}

// Updates returns a channel that receives the membership each time it
// changes; a receiver that falls behind gets the latest membership. It is
// closed when the view stops (Close, or the session over: see Err).
func (v *GroupView) Updates() <-chan []Member { return v.l.updates }

// Err returns why the view stopped, or nil while it runs.
func (v *GroupView) Err() error { return v.l.failure() }

// Close stops keeping the view current, waiting for it to stop until ctx
// ends.
func (v *GroupView) Close(ctx context.Context) error {
	v.cancel()
	select {
	case <-v.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
