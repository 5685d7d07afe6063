// Package watch is the server's watch registry: which session watches which
// znode, and who gets an event when the data tree changes.
//
// Watches are per-server, per-session state. They are not replicated and
// never touch the data tree: the deterministic apply of a log entry yields
// changes (node created, deleted, data changed, children changed, each with
// the zxid of the entry), and the server hands each one to [Registry.Trigger],
// which decides which [Watcher]s get which event.
//
// # Semantics
//
// The registry mirrors Apache ZooKeeper 3.9 (DataTree, WatchManager,
// WatchStats, WatcherMode, PathParentIterator). ZooKeeper keeps two tables,
// data watches and child watches; a (path, watcher) pair holds a set of modes
// in each. This package keeps one entry per (path, watcher) with four flags:
//
//   - [Data]: a one-time watch set by getData or exists (ZooKeeper keeps both
//     in the data table);
//   - [Child]: a one-time watch set by getChildren (child table);
//   - [Persistent]: addWatch mode 0, present in both tables, never consumed;
//   - [PersistentRecursive]: addWatch mode 1, data table only, never consumed,
//     also fires for changes to any descendant.
//
// A change fires, exactly as ZooKeeper does:
//
//   - NodeCreated(p), NodeDataChanged(p): the data table on p (Data,
//     Persistent and PersistentRecursive watches), and PersistentRecursive
//     watches on every ancestor of p. Data watches on p are consumed.
//   - NodeDeleted(p): both tables on p (all four kinds) and PersistentRecursive
//     watches on every ancestor. Data and Child watches on p are consumed.
//   - NodeChildrenChanged(p): the child table on p (Child and Persistent
//     watches); recursive watches never see it. Child watches on p are
//     consumed.
//
// Each watcher gets at most one event per Trigger call, however many of its
// watches matched. The event's path is always the changed node's path, its
// state is SyncConnected, and the zxid passed to Notify is the change's zxid.
// The ancestor walk is skipped when no recursive watch exists anywhere.
//
// # ACL filtering
//
// ZooKeeper checks READ permission on the node at delivery time
// (NIOServerCnxn/NettyServerCnxn.process; in the 3.8.4 and 3.9.2+ sources,
// the latter refactored by ZOOKEEPER-4799, and observed on the Debian 3.8.0
// package), after WatchManager.triggerWatch has already consumed the
// one-time watches.
// So a watcher that is not allowed gets no event and still loses its
// one-time watches on the path; persistent watches stay. For NodeDeleted a
// watcher that matched through the data table is not notified again through
// the child table even when the ACL check rejected it, so its Child watch is
// consumed silently as well. Trigger does the same with its allowed callback.
//
// # removeWatches and checkWatches
//
// [Registry.Remove] and [Registry.Contains] take the wire WatcherType and
// behave as ZooKeeper 3.9's DataTree.removeWatch/containsWatcher: Children
// and Data address only the one-time watch of that table, Persistent and
// PersistentRecursive address that mode, Any addresses every mode in both
// tables. (Before 3.9, ZOOKEEPER-4472, there were no Persistent and
// PersistentRecursive types and Data/Children removed every mode in that
// table, persistent ones included.)
//
// # Introspection
//
// ZooKeeper's wchs, wchc and wchp (and the admin commands watch_summary,
// watches, watches_by_path) report only the data table, so a path watched
// only through getChildren does not appear in them. [Registry.Summary],
// [Registry.ByWatcher] and [Registry.ByPath] reproduce that. mntr's
// watch_count is the size of both tables, which [Registry.Count] returns.
// (Both checked against ZooKeeper 3.8.) One deliberate difference: ZooKeeper
// keeps a session in its watcher index after its last one-time watch fired,
// so wchs can say "1 connections watching 0 paths" and wchc lists the
// session with no paths; this registry forgets a watcher as soon as it holds
// no watch, and reports only watchers that hold one.
//
// # Concurrency and locking contract
//
// A Registry is safe for concurrent use. Add, Remove, Contains, RemoveAll,
// Count and the introspection methods may be called from any goroutine; they
// hold the registry's internal lock only for the bookkeeping and never call
// out while holding it (ByWatcher and ByPath call their callback after
// releasing it).
//
// Trigger calls are serialised with one another, so events reach each
// watcher in the order of the Trigger calls. Trigger decides under the
// internal lock which watchers fire, consumes their one-time watches,
// releases the lock, and only then calls allowed and Notify, on the calling
// goroutine, one watcher after another. Consequently:
//
//   - Notify and allowed may call any Registry method except Trigger (which
//     would deadlock);
//   - Notify must not block: it should queue the event and return (a slow
//     client is disconnected, never allowed to stall the apply loop);
//   - the caller of Trigger must not hold any lock that Notify or allowed
//     acquire;
//   - Notify can still be called for a watcher after RemoveAll(w) returned,
//     by a Trigger that had already selected it; a closed connection must
//     ignore such late events;
//   - a watch added concurrently with a Trigger is either fired by it or not
//     seen by it at all, never half of each.
//
// The registry keeps a watcher while it holds a watch. The caller must not
// call Add for a watcher after its final RemoveAll (for example from a
// request still in flight on a closing connection): that would register the
// watcher again and keep it until the next RemoveAll.
package watch
