// Package zk is a client for Apache ZooKeeper's protocol, for Paddock and
// for any ZooKeeper server (3.5 and later): synchronous and asynchronous
// calls, watchers that never lose an event, multi transactions, persistent
// watches, and a session that survives moving between servers.
//
// # Connecting
//
// Connect takes ZooKeeper's connect string, hosts and an optional chroot:
//
//	conn, err := zk.Connect(ctx, "zk1:2181,zk2:2181,zk3:2181/app",
//		zk.WithSessionTimeout(10*time.Second),
//		zk.WithDefaultWatcher(zk.WatcherFunc(func(e zk.Event) { log.Println("session:", e.State) })))
//	defer conn.Close()
//
// It returns once the session is established. From then on the Conn keeps
// the session: when a connection drops it tries the servers in turn (in an
// order shuffled once, or re-resolved with NewDNSHostProvider), resumes the
// session with its id and password, sends its credentials again and
// re-registers every watch (setWatches, or setWatches2 when persistent
// watches exist) with the last zxid it saw, so that a change made while it
// was away fires the watch as soon as it is back. A server that has seen
// less than that zxid refuses the session and the Conn moves on.
//
// # Calls
//
// Every operation takes a context.Context. Cancelling it abandons the wait,
// not the request: a write already sent may still be applied. Errors are
// *OpError values naming the operation and the path around a sentinel per
// ZooKeeper code, so errors.Is(err, zk.ErrNoNode) works; a failed Multi also
// carries a *MultiError saying which operation failed.
//
// Each operation also exists as ...Async, which returns at once and calls
// back with the result: many calls are then in flight on one connection,
// pipelined, as in the ZooKeeper book's asynchronous style:
//
//	conn.GetAsync(ctx, "/config", nil, func(data []byte, stat *zk.Stat, err error) {
//		...
//	})
//
// # Ordering and delivery
//
// The server answers a session's calls in the order they were made. Callbacks
// of asynchronous calls and watcher invocations run on one goroutine per
// Conn, one at a time, in exactly the order the server sent the replies and
// events, as the Java client's event thread runs them: a watch event that a
// write triggered reaches its watcher before the callback of any later read
// that sees the write. An asynchronous call that fails before it is sent (an
// invalid argument, a ctx already done, a Conn closing or closed) calls back
// in its turn too: after the callbacks of the calls made before it.
// Synchronous calls return on the caller's goroutine as soon as their reply
// is read, without waiting for that goroutine.
//
// A callback or watcher must not block for long: everything after it waits.
// It may make synchronous calls on the same Conn (the reader never waits
// for delivery), or hand work to other goroutines; WithExecutor hands every
// invocation to the application's own executor instead.
//
// Nothing is dropped. Undelivered callbacks and events wait in a queue
// that the reader never blocks on, so its memory is bounded by what the
// application asked for: one entry per outstanding asynchronous call, one per
// one-time watch and per session state change, and one per change under a
// persistent watch. A consumer slower than the changes it watches
// persistently makes the queue grow; QueuedEvents reports its length. A
// ChanWatcher whose channel is full holds up delivery until it is read: a
// slow consumer slows its own Conn, and loses nothing.
//
// # Watches and session events
//
// ExistsW, GetW and ChildrenW leave a one-time watch; AddWatch leaves a
// persistent or persistent-recursive one; RemoveWatches removes them (the
// removed watchers get EventDataWatchRemoved, EventChildWatchRemoved or
// EventPersistentWatchRemoved). As in ZooKeeper's Java client, every
// registered watcher and the default watcher also get the session's state
// changes (EventNone with StateDisconnected, StateSyncConnected,
// StateConnectedReadOnly, or a final StateExpired, StateAuthFailed or
// StateClosed). A watcher registered twice on a path, for instance by GetW and
// ExistsW, is invoked once per event when it is comparable (a pointer);
// WatcherFunc values are not comparable and are invoked once per
// registration.
//
// # Session lifecycle
//
// The Conn pings when it has sent nothing for a third of the session
// timeout, and gives up on a server it has not heard from for two thirds of
// it. Calls in flight when a connection drops fail with ErrConnectionLoss;
// their outcome is unknown (Retry and CreateProtected help). When the server
// says the session has expired, or no server has been heard from for the
// whole session timeout, the session is StateExpired: calls fail with
// ErrSessionExpired and the application must Connect again.
package zk
