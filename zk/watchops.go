package zk

import (
	"context"

	"github.com/paddockhq/paddock/internal/proto"
)

// ---- addWatch ----

func (c *Conn) addWatchCall(path string, w Watcher, mode AddWatchMode) (*call, error) {
	if err := checkPath(proto.OpAddWatch, path, false); err != nil {
		return nil, err
	}
	if w == nil {
		return nil, badArgs(proto.OpAddWatch, path, "nil watcher")
	}
	k := watchPersistent
	switch mode {
	case AddWatchPersistent:
	case AddWatchPersistentRecursive:
		k = watchRecursive
	default:
		return nil, badArgs(proto.OpAddWatch, path, "unknown watch mode %d", int32(mode))
	}
	cl := c.newCall(proto.OpAddWatch, path, &proto.AddWatchRequest{Path: c.root.server(path), Mode: int32(mode)}, &proto.ErrorResponse{})
	cl.watch, cl.watcher = k, w
	return cl, nil
}

// AddWatch sets a persistent watch for w on path that stays until removed
// (RemoveWatches with WatcherPersistent or WatcherPersistentRecursive, or
// WatcherAny). The znode need not exist.
func (c *Conn) AddWatch(ctx context.Context, path string, w Watcher, mode AddWatchMode) error {
	cl, err := c.addWatchCall(path, w, mode)
	if err != nil {
		return err
	}
	return c.do(ctx, cl)
}

// AddWatchAsync is AddWatch that calls cb.
func (c *Conn) AddWatchAsync(ctx context.Context, path string, w Watcher, mode AddWatchMode, cb func(err error)) {
	cl, err := c.addWatchCall(path, w, mode)
	if err != nil {
		c.failAsync(func() { cb(err) })
		return
	}
	c.start(ctx, cl, func() { cb(cl.err) })
}

// ---- removeWatches / checkWatches ----

func (c *Conn) removeWatchesCall(path string, w Watcher, t WatcherType, local bool) (*call, error) {
	op := proto.OpCheckWatches
	if w == nil {
		op = proto.OpRemoveWatches
	}
	if err := checkPath(op, path, false); err != nil {
		return nil, err
	}
	if kindsOf(t) == nil {
		return nil, badArgs(op, path, "unknown watcher type %d", int32(t))
	}
	c.mu.Lock()
	has := c.watches.hasAny(path, w, t)
	c.mu.Unlock()
	if !has {
		return nil, &OpError{Op: op.String(), Path: path, Err: ErrNoWatcher}
	}
	var req proto.Request
	if op == proto.OpCheckWatches {
		req = &proto.CheckWatchesRequest{Path: c.root.server(path), Type: proto.WatcherType(t)}
	} else {
		req = &proto.RemoveWatchesRequest{Path: c.root.server(path), Type: proto.WatcherType(t)}
	}
	cl := c.newCall(op, path, req, nil)
	if op == proto.OpCheckWatches {
		cl.onQueue = func(cl *call) {
			// Is w the last watcher here on path, with no call in
			// flight that would set a watch there? Then the session's
			// watches on path serve nobody: remove them on the server
			// too, or it would go on sending their events (all of them,
			// for a persistent watch) until the connection ends.
			if !c.watches.onlyWatcher(path, w, t) || c.watchInFlightLocked(path) {
				return
			}
			cl.op = proto.OpRemoveWatches
			cl.frame = proto.AppendRequestFrame(cl.frame[:0], 0, proto.OpRemoveWatches,
				&proto.RemoveWatchesRequest{Path: c.root.server(path), Type: proto.WatcherAny})
		}
	}
	cl.onReply = func(cl *call) {
		if cl.err != nil && !(local && ErrorCode(cl.err) == ErrConnectionLoss.code) {
			return
		}
		// Removed locally because the connection was lost: the events
		// say Disconnected, as the Java client's (ClientCnxn.queueEvent).
		st := StateSyncConnected
		if cl.err != nil {
			st = StateDisconnected
		}
		cl.err = nil
		c.mu.Lock()
		gone := c.watches.remove(path, w, t)
		c.mu.Unlock()
		for _, r := range gone {
			ev := Event{Type: r.t, State: st, Path: path, Zxid: -1}
			c.events.push(func() { r.w.Process(ev) })
		}
	}
	return cl, nil
}

// RemoveWatches removes watcher w's watches of type t on path; a nil w
// removes every watcher's. Each removed watcher gets an event of type
// EventDataWatchRemoved, EventChildWatchRemoved or
// EventPersistentWatchRemoved. It fails with ErrNoWatcher when no such watch
// is registered here. With local, the watches are removed on this side even
// when the server cannot be reached.
//
// Removing all watchers (w nil) removes the server's watches too
// (removeWatches). The server keeps one watch per kind and path for the
// session, whatever the number of watchers here, so removing one watcher
// (w not nil) while other watchers remain on path only asks the server to
// check that the watch exists (checkWatches) and keeps it, as ZooKeeper's
// Java client does. When w is the last watcher on path, and no call in
// flight would set a watch there, the server's watches on path are removed
// (removeWatches of type WatcherAny, which every server version takes for
// persistent watches too), so that the server stops sending events that
// reach no watcher here. A watch still being set by a call in flight, or
// kept for another watcher, is therefore never lost.
func (c *Conn) RemoveWatches(ctx context.Context, path string, w Watcher, t WatcherType, local bool) error {
	cl, err := c.removeWatchesCall(path, w, t, local)
	if err != nil {
		return err
	}
	return c.do(ctx, cl)
}

// RemoveWatchesAsync is RemoveWatches that calls cb.
func (c *Conn) RemoveWatchesAsync(ctx context.Context, path string, w Watcher, t WatcherType, local bool, cb func(err error)) {
	cl, err := c.removeWatchesCall(path, w, t, local)
	if err != nil {
		c.failAsync(func() { cb(err) })
		return
	}
	c.start(ctx, cl, func() { cb(cl.err) })
}

// watchInFlightLocked reports whether a call queued or waiting for its
// reply would set a watch on path.
func (c *Conn) watchInFlightLocked(path string) bool {
	for _, q := range [][]*call{c.outq, c.pending} {
		for _, cl := range q {
			if cl.watch != watchNone && cl.path == path {
				return true
			}
		}
	}
	return false
}

func (c *Conn) checkWatchesCall(path string, t WatcherType) (*call, error) {
	if err := checkPath(proto.OpCheckWatches, path, false); err != nil {
		return nil, err
	}
	if kindsOf(t) == nil {
		return nil, badArgs(proto.OpCheckWatches, path, "unknown watcher type %d", int32(t))
	}
	return c.newCall(proto.OpCheckWatches, path, &proto.CheckWatchesRequest{Path: c.root.server(path), Type: proto.WatcherType(t)}, nil), nil
}

// CheckWatches asks the server whether it holds a watch of type t on path
// for this session; it returns ErrNoWatcher if not. Nothing is removed.
func (c *Conn) CheckWatches(ctx context.Context, path string, t WatcherType) error {
	cl, err := c.checkWatchesCall(path, t)
	if err != nil {
		return err
	}
	return c.do(ctx, cl)
}

// CheckWatchesAsync is CheckWatches that calls cb.
func (c *Conn) CheckWatchesAsync(ctx context.Context, path string, t WatcherType, cb func(err error)) {
	cl, err := c.checkWatchesCall(path, t)
	if err != nil {
		c.failAsync(func() { cb(err) })
		return
	}
	c.start(ctx, cl, func() { cb(cl.err) })
}
