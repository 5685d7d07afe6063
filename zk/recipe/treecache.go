package recipe

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"

	"github.com/paddockhq/paddock/zk"
)

// TreeCache keeps a copy of a subtree (a znode and all its descendants:
// data, Stat and children), current through one persistent recursive watch
// on its root (AddWatch with zk.AddWatchPersistentRecursive). Each event
// makes it read the znode concerned again; each reconnection makes it read
// the whole subtree again, since a persistent watch is not told of the
// changes made while the session was disconnected.
//
// On a server without addWatch, or with WithOneTimeWatches, it keeps a
// one-time data watch and a one-time children watch on every znode of the
// subtree, set again after each event.
//
// A cached Stat is the one read with the data: its child counters
// (NumChildren, Cversion, Pzxid) may lag; use Children for the children.
type TreeCache struct {
	conn    *zk.Conn
	root    string
	oneTime bool

	mu      sync.RWMutex
	nodes   map[string]*treeNode
	started bool // a Start is under way or succeeded
	closed  bool
	usingPW bool
	err     error
	ready   chan struct{} // closed after the first load, or at stop
	loaded  bool
	stopped bool
	updates chan struct{} // capacity 1: something changed
	cancel  context.CancelFunc
	done    chan struct{}
}

type treeNode struct {
	data     []byte
	stat     *zk.Stat
	children map[string]struct{}
}

// NewTreeCache returns a cache of the subtree at root. Nothing is sent until
// Start.
func NewTreeCache(conn *zk.Conn, root string, opts ...Option) *TreeCache {
	return &TreeCache{
		conn:    conn,
		root:    cleanPath(root),
		oneTime: buildOptions(opts).oneTime,
		nodes:   map[string]*treeNode{},
		ready:   make(chan struct{}),
		updates: make(chan struct{}, 1),
	}
}

// Start sets the watch and reads the subtree, and returns once it has; the
// cache then keeps it current until Close or the session ends. A Start that
// fails (ctx ended, ...) leaves the cache not started: Start may be called
// again. Start after Close returns ErrClosed.
func (c *TreeCache) Start(ctx context.Context) error {
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		return ErrClosed
	case c.started:
		c.mu.Unlock()
		return ErrHeld
	}
	c.started = true
	if c.done != nil { // an earlier Start failed: begin afresh
		c.nodes, c.err, c.loaded, c.stopped, c.usingPW = map[string]*treeNode{}, nil, false, false, false
		c.ready, c.updates = make(chan struct{}), make(chan struct{}, 1)
	}
	bg, cancel := context.WithCancel(context.Background())
	c.cancel, c.done = cancel, make(chan struct{})
	ready, done := c.ready, c.done
	c.mu.Unlock()
	go c.run(bg)
	var err error
	select {
	case <-ready:
		c.mu.RLock()
		if !c.loaded {
			err = c.err
		}
		c.mu.RUnlock()
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err == nil {
		return nil
	}
	cancel()
	<-done
	c.mu.Lock()
	c.started = c.closed // Close during the start: stay closed
	c.mu.Unlock()
	return err
}

// Get returns the cached znode at path, and whether it is in the cache.
func (c *TreeCache) Get(path string) (Node, bool) {
	path = cleanPath(path)
	c.mu.RLock()
	defer c.mu.RUnlock()
	n, ok := c.nodes[path]
	if !ok {
		return Node{}, false
	}
	return Node{Path: path, Data: n.data, Stat: n.stat}, true
}

// Children returns the sorted names of the cached children of path, and
// whether path is in the cache.
func (c *TreeCache) Children(path string) ([]string, bool) {
	path = cleanPath(path)
	c.mu.RLock()
	defer c.mu.RUnlock()
	n, ok := c.nodes[path]
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(n.children))
	for ch := range n.children {
		out = append(out, ch)
	}
	sort.Strings(out)
	return out, true
}

// Nodes returns every cached znode, sorted by path.
func (c *TreeCache) Nodes() []Node {
	c.mu.RLock()
	out := make([]Node, 0, len(c.nodes))
	for p, n := range c.nodes {
		out = append(out, Node{Path: p, Data: n.data, Stat: n.stat})
	}
	c.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Updates returns a channel that receives a value after each change to the
// cache (changes coalesce while the receiver is away), and is closed when
// the cache stops (see Err).
func (c *TreeCache) Updates() <-chan struct{} {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.updates
}

// Err returns why the cache stopped, or nil while it runs.
func (c *TreeCache) Err() error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.err
}

// PersistentWatch reports whether the cache is kept by a persistent
// recursive watch (false: one-time watches).
func (c *TreeCache) PersistentWatch() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.usingPW
}

// Close stops the cache and removes its watches, waiting until ctx ends.
func (c *TreeCache) Close(ctx context.Context) error {
	c.mu.Lock()
	c.closed = true
	cancel, done := c.cancel, c.done
	c.mu.Unlock()
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

func (c *TreeCache) stop(err error) {
	if errors.Is(err, context.Canceled) {
		err = ErrClosed
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return
	}
	c.stopped = true
	c.err = err
	if !c.loaded {
		close(c.ready)
	}
	close(c.updates)
}

func (c *TreeCache) notify() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return
	}
	select {
	case c.updates <- struct{}{}:
	default:
	}
}

func (c *TreeCache) run(ctx context.Context) {
	defer close(c.done)
	q := newClosingQueue()
	defer q.close()
	persistent := !c.oneTime
	if persistent {
		err := zk.Retry(ctx, func(ctx context.Context) error {
			return c.conn.AddWatch(ctx, c.root, q, zk.AddWatchPersistentRecursive)
		})
		switch {
		case errors.Is(err, zk.ErrUnimplemented):
			persistent = false
		case err != nil:
			c.stop(err)
			return
		}
		if persistent {
			defer removeWatcher(c.conn, c.root, q)
		}
	}
	if !persistent {
		defer c.removeOneTimeWatches(q)
	}
	c.mu.Lock()
	c.usingPW = persistent
	c.mu.Unlock()
	t := &treeLoader{conn: c.conn, root: c.root, w: q, oneTime: !persistent}

	if err := c.resync(ctx, t); err != nil {
		c.stop(err)
		return
	}
	c.mu.Lock()
	c.loaded = true
	close(c.ready)
	c.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			c.stop(ctx.Err())
			return
		case <-q.wake:
		}
		resync := false
		for _, e := range q.take() {
			var err error
			switch {
			case e.Type == zk.EventNone && finalState(e.State):
				c.stop(stateError(e.State))
				return
			case e.Type == zk.EventNone:
				// Back from a disconnection: read everything again.
				resync = resync || e.State == zk.StateSyncConnected
			case !c.inTree(e.Path):
			case e.Type == zk.EventNodeDeleted:
				c.remove(e.Path)
				if !persistent && e.Path == c.root {
					err = c.load(ctx, t, c.root) // watch for its return
				}
			case e.Type == zk.EventNodeDataChanged:
				err = c.refreshData(ctx, t, e.Path)
			case e.Type == zk.EventNodeChildrenChanged:
				err = c.refreshChildren(ctx, t, e.Path)
			case e.Type == zk.EventNodeCreated:
				err = c.load(ctx, t, e.Path)
			}
			if err != nil {
				c.stop(err)
				return
			}
		}
		if resync {
			if err := c.resync(ctx, t); err != nil {
				c.stop(err)
				return
			}
		}
		c.notify()
	}
}

// removeOneTimeWatches takes w's one-time watches out of the Conn (and the
// server) on the root and every cached znode, all at once, so that a closed
// cache leaves no watch behind.
func (c *TreeCache) removeOneTimeWatches(w zk.Watcher) {
	c.mu.RLock()
	paths := make([]string, 0, len(c.nodes)+1)
	paths = append(paths, c.root)
	for p := range c.nodes {
		if p != c.root {
			paths = append(paths, p)
		}
	}
	c.mu.RUnlock()
	ctx, cancel := context.WithTimeout(context.Background(), c.conn.SessionTimeout())
	defer cancel()
	done := make(chan struct{}, len(paths)) // callbacks never block
	for _, p := range paths {
		c.conn.RemoveWatchesAsync(ctx, p, w, zk.WatcherAny, true, func(error) { done <- struct{}{} })
	}
	for range paths {
		select {
		case <-done:
		case <-ctx.Done(): // the calls end with ctx; their callbacks may queue behind a slow watcher
			return
		}
	}
}

// inTree reports whether p is the root or under it.
func (c *TreeCache) inTree(p string) bool {
	return p == c.root || c.root == "/" || strings.HasPrefix(p, c.root+"/")
}

// resync reads the whole subtree again and replaces the cache with it.
func (c *TreeCache) resync(ctx context.Context, t *treeLoader) error {
	fresh := map[string]*treeNode{}
	if err := t.load(ctx, c.root, fresh); err != nil {
		return err
	}
	c.mu.Lock()
	c.nodes = fresh
	c.mu.Unlock()
	return nil
}

// load reads the subtree at p and puts it in the cache.
func (c *TreeCache) load(ctx context.Context, t *treeLoader, p string) error {
	sub := map[string]*treeNode{}
	if err := t.load(ctx, p, sub); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(p)
	for q, n := range sub {
		c.nodes[q] = n
	}
	if _, ok := sub[p]; ok && p != c.root {
		if par, ok := c.nodes[parent(p)]; ok {
			par.children[base(p)] = struct{}{}
		}
	}
	return nil
}

func (c *TreeCache) remove(p string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(p)
}

// removeLocked takes p and its descendants out of the cache.
func (c *TreeCache) removeLocked(p string) {
	n, ok := c.nodes[p]
	if !ok {
		return
	}
	for ch := range n.children {
		c.removeLocked(join(p, ch))
	}
	delete(c.nodes, p)
	if p != c.root {
		if par, ok := c.nodes[parent(p)]; ok {
			delete(par.children, base(p))
		}
	}
}

// refreshData reads p's data again (setting a new data watch in one-time
// mode).
func (c *TreeCache) refreshData(ctx context.Context, t *treeLoader, p string) error {
	data, st, err := t.get(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		c.remove(p)
		return nil
	}
	if err != nil {
		return err
	}
	c.mu.Lock()
	n, ok := c.nodes[p]
	if ok {
		n.data, n.stat = data, st
	}
	c.mu.Unlock()
	if !ok {
		// A znode the cache does not know yet (its creation event is
		// still to come): load it with its subtree.
		return c.load(ctx, t, p)
	}
	return nil
}

// refreshChildren reads p's children again (one-time mode), loading the
// new ones and dropping the gone ones.
func (c *TreeCache) refreshChildren(ctx context.Context, t *treeLoader, p string) error {
	children, err := t.children(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		c.remove(p)
		return nil
	}
	if err != nil {
		return err
	}
	now := map[string]struct{}{}
	for _, ch := range children {
		now[ch] = struct{}{}
	}
	c.mu.RLock()
	n, ok := c.nodes[p]
	var added, gone []string
	if ok {
		for ch := range now {
			if _, had := n.children[ch]; !had {
				added = append(added, ch)
			}
		}
		for ch := range n.children {
			if _, has := now[ch]; !has {
				gone = append(gone, ch)
			}
		}
	}
	c.mu.RUnlock()
	if !ok {
		return c.load(ctx, t, p)
	}
	for _, ch := range gone {
		c.remove(join(p, ch))
	}
	for _, ch := range added {
		if err := c.load(ctx, t, join(p, ch)); err != nil {
			return err
		}
	}
	return nil
}

// treeLoader reads znodes for a TreeCache, with one-time watches for w when
// oneTime is set.
type treeLoader struct {
	conn    *zk.Conn
	root    string
	w       zk.Watcher
	oneTime bool
}

func (t *treeLoader) get(ctx context.Context, p string) ([]byte, *zk.Stat, error) {
	var data []byte
	var st *zk.Stat
	err := zk.Retry(ctx, func(ctx context.Context) error {
		var err error
		if t.oneTime {
			data, st, err = t.conn.GetW(ctx, p, t.w)
		} else {
			data, st, err = t.conn.Get(ctx, p)
		}
		return err
	})
	return data, st, err
}

func (t *treeLoader) children(ctx context.Context, p string) ([]string, error) {
	var children []string
	err := zk.Retry(ctx, func(ctx context.Context) error {
		var err error
		if t.oneTime {
			children, _, err = t.conn.ChildrenW(ctx, p, t.w)
		} else {
			children, _, err = t.conn.Children(ctx, p)
		}
		return err
	})
	return children, err
}

// load reads the subtree at p into out. A znode that does not exist is
// left out; in one-time mode the root's creation is watched for.
func (t *treeLoader) load(ctx context.Context, p string, out map[string]*treeNode) error {
	data, st, err := t.get(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		if !t.oneTime || p != t.root {
			return nil
		}
		var exists bool
		err := zk.Retry(ctx, func(ctx context.Context) error {
			var err error
			exists, _, err = t.conn.ExistsW(ctx, p, t.w)
			return err
		})
		if err != nil || !exists {
			return err
		}
		return t.load(ctx, p, out) // created meanwhile
	}
	if err != nil {
		return err
	}
	children, err := t.children(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil // deleted meanwhile; its event follows
	}
	if err != nil {
		return err
	}
	n := &treeNode{data: data, stat: st, children: make(map[string]struct{}, len(children))}
	out[p] = n
	for _, ch := range children {
		cp := join(p, ch)
		if err := t.load(ctx, cp, out); err != nil {
			return err
		}
		if _, ok := out[cp]; ok {
			n.children[ch] = struct{}{}
		}
	}
	return nil
}
