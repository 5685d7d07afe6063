package recipe

import (
	"context"
	"errors"
	"sync"

	"github.com/paddockhq/paddock/zk"
)

// Node is a znode as a watcher or cache last read it.
type Node struct {
	Path string
	Data []byte
	// Stat is the znode's Stat when its data was read; nil when the znode
	// does not exist.
	Stat *zk.Stat
}

// Exists reports whether the znode existed.
func (n Node) Exists() bool { return n.Stat != nil }

// same reports whether a and b are the same version of the same znode.
func (n Node) same(o Node) bool {
	if n.Exists() != o.Exists() {
		return false
	}
	return !n.Exists() || (n.Stat.Czxid == o.Stat.Czxid && n.Stat.Mzxid == o.Stat.Mzxid && n.Stat.Version == o.Stat.Version)
}

// nodeWatcher keeps one znode's data current: it reads the znode after
// every event, so the value it ends on is always the latest one, however
// many changes an event stands for.
type nodeWatcher struct {
	conn       *zk.Conn
	path       string
	persistent bool // ask for a persistent watch (and fall back)

	mu      sync.Mutex
	started bool // a Start is under way or succeeded
	closed  bool
	usingPW bool // a persistent watch is in use
	cancel  context.CancelFunc
	done    chan struct{}
	l       *latest[Node] // replaced by a Start after a failed one
}

func newNodeWatcher(conn *zk.Conn, path string, persistent bool) *nodeWatcher {
	return &nodeWatcher{conn: conn, path: cleanPath(path), persistent: persistent, l: newLatest[Node]()}
}

// start runs the watcher and waits for its first read. A start that fails
// stops the watcher and leaves it not started: start may be called again.
func (w *nodeWatcher) start(ctx context.Context) error {
	w.mu.Lock()
	switch {
	case w.closed:
		w.mu.Unlock()
		return ErrClosed
	case w.started:
		w.mu.Unlock()
		return ErrHeld
	}
	w.started = true
	if w.done != nil { // an earlier start failed: begin afresh
		w.l = newLatest[Node]()
	}
	bg, cancel := context.WithCancel(context.Background())
	w.cancel, w.done = cancel, make(chan struct{})
	l, done := w.l, w.done
	w.mu.Unlock()
	go w.run(bg, l)
	if _, err := l.wait(ctx); err != nil {
		cancel()
		<-done
		w.mu.Lock()
		w.started = w.closed // Close during the start: stay closed
		w.mu.Unlock()
		return err
	}
	return nil
}

// latest returns the current run's values.
func (w *nodeWatcher) latest() *latest[Node] {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.l
}

func (w *nodeWatcher) run(ctx context.Context, l *latest[Node]) {
	defer close(w.done)
	s := newSignal()
	defer removeWatcher(w.conn, w.path, s)
	persistent := w.persistent
	if persistent {
		err := zk.Retry(ctx, func(ctx context.Context) error {
			return w.conn.AddWatch(ctx, w.path, s, zk.AddWatchPersistent)
		})
		switch {
		case errors.Is(err, zk.ErrUnimplemented):
			persistent = false // a server without addWatch: one-time watches
		case err != nil:
			stopLatest(l, err)
			return
		}
	}
	w.mu.Lock()
	w.usingPW = persistent
	w.mu.Unlock()
	var last Node
	first := true
	for {
		n, err := w.read(ctx, s, persistent)
		if err != nil {
			stopLatest(l, err)
			return
		}
		if first || !n.same(last) {
			l.set(n)
			first, last = false, n
		}
		// Every event wakes s: a change, or a reconnection (after which
		// the read catches up with what a persistent watch missed).
		if err := wait(ctx, s); err != nil {
			stopLatest(l, err)
			return
		}
	}
}

// stopLatest ends l's updates with err (ErrClosed for a cancelled run).
func stopLatest(l *latest[Node], err error) {
	if errors.Is(err, context.Canceled) {
		err = ErrClosed
	}
	l.stop(err)
}

// read reads the znode; without a persistent watch it sets a one-time
// watch on its data, or on its creation.
func (w *nodeWatcher) read(ctx context.Context, s *signal, persistent bool) (Node, error) {
	for {
		var data []byte
		var st *zk.Stat
		err := zk.Retry(ctx, func(ctx context.Context) error {
			var err error
			if persistent {
				data, st, err = w.conn.Get(ctx, w.path)
			} else {
				data, st, err = w.conn.GetW(ctx, w.path, s)
			}
			return err
		})
		if err == nil {
			return Node{Path: w.path, Data: data, Stat: st}, nil
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return Node{}, err
		}
		if persistent {
			return Node{Path: w.path}, nil
		}
		var exists bool
		err = zk.Retry(ctx, func(ctx context.Context) error {
			var err error
			exists, _, err = w.conn.ExistsW(ctx, w.path, s)
			return err
		})
		if err != nil {
			return Node{}, err
		}
		if !exists {
			return Node{Path: w.path}, nil
		}
		// Created between the two calls: read it.
	}
}

func (w *nodeWatcher) close(ctx context.Context) error {
	w.mu.Lock()
	w.closed = true
	cancel, done := w.cancel, w.done
	w.mu.Unlock()
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

func (w *nodeWatcher) value(ctx context.Context) (Node, error) {
	w.mu.Lock()
	started, l := w.started, w.l
	w.mu.Unlock()
	if !started {
		return Node{}, ErrNotStarted
	}
	return l.wait(ctx)
}

func (w *nodeWatcher) usingPersistent() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.usingPW
}

// ConfigWatcher is the configuration management of the ZooKeeper paper: it
// reads a configuration znode with a one-time watch and, each time the
// watch fires, reads it again (leaving a new watch), so that it always ends
// on the latest value: changes made between a notification and the next
// read are seen by that read. A missing znode is a value too (Exists
// false), and its creation is watched for.
type ConfigWatcher struct{ w *nodeWatcher }

// NewConfigWatcher returns a watcher of the znode path. Nothing is sent
// until Start.
func NewConfigWatcher(conn *zk.Conn, path string, opts ...Option) *ConfigWatcher {
	return &ConfigWatcher{w: newNodeWatcher(conn, path, false)}
}

// Start reads the configuration and returns once it has; the watcher then
// keeps it current until Close or the session ends. A Start that fails
// (ctx ended, ...) leaves the watcher not started: Start may be called
// again. Start after Close returns ErrClosed.
func (c *ConfigWatcher) Start(ctx context.Context) error { return c.w.start(ctx) }

// Value returns the current configuration, waiting for Start's first read
// if need be.
func (c *ConfigWatcher) Value(ctx context.Context) (Node, error) { return c.w.value(ctx) }

// Current returns the configuration last read, without waiting (a zero
// Node before the first read).
func (c *ConfigWatcher) Current() Node {
	n, _ := c.w.latest().get()
	return n
}

// Updates returns a channel that receives the configuration each time it
// changes, starting with the first read. A receiver that falls behind gets
// the latest value, never an older one. The channel is closed when the
// watcher stops (see Err).
func (c *ConfigWatcher) Updates() <-chan Node { return c.w.latest().updates }

// Err returns why the watcher stopped (ErrClosed after Close,
// zk.ErrSessionExpired, ...), or nil while it runs.
func (c *ConfigWatcher) Err() error { return c.w.latest().failure() }

// Close stops watching, waiting for the watcher to stop until ctx ends.
func (c *ConfigWatcher) Close(ctx context.Context) error { return c.w.close(ctx) }

// NodeCache keeps a copy of one znode's data and Stat, current through a
// persistent watch (AddWatch with zk.AddWatchPersistent), read again after
// every event and after every reconnection (a persistent watch is not told
// of the changes made while the session was disconnected). On a server
// without addWatch, or with WithOneTimeWatches, it uses one-time watches
// as ConfigWatcher does.
type NodeCache struct{ w *nodeWatcher }

// NewNodeCache returns a cache of the znode path. Nothing is sent until
// Start.
func NewNodeCache(conn *zk.Conn, path string, opts ...Option) *NodeCache {
	return &NodeCache{w: newNodeWatcher(conn, path, !buildOptions(opts).oneTime)}
}

// Start sets the watch and reads the znode, and returns once it has. A
// Start that fails leaves the cache not started: Start may be called again.
// Start after Close returns ErrClosed.
func (c *NodeCache) Start(ctx context.Context) error { return c.w.start(ctx) }

// Value returns the cached znode, waiting for Start's first read if need
// be.
func (c *NodeCache) Value(ctx context.Context) (Node, error) { return c.w.value(ctx) }

// Current returns the cached znode without waiting (a zero Node before the
// first read).
func (c *NodeCache) Current() Node {
	n, _ := c.w.latest().get()
	return n
}

// Updates returns a channel that receives the znode each time it changes,
// latest value winning, closed when the cache stops (see Err).
func (c *NodeCache) Updates() <-chan Node { return c.w.latest().updates }

// Err returns why the cache stopped, or nil while it runs.
func (c *NodeCache) Err() error { return c.w.latest().failure() }

// PersistentWatch reports whether the cache is kept by a persistent watch
// (false: one-time watches).
func (c *NodeCache) PersistentWatch() bool { return c.w.usingPersistent() }

// Close stops the cache and removes its watch, waiting until ctx ends.
func (c *NodeCache) Close(ctx context.Context) error { return c.w.close(ctx) }
