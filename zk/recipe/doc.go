// Package recipe implements the coordination recipes of the ZooKeeper
// paper (Hunt et al., "ZooKeeper: Wait-free coordination for Internet-scale
// systems", 2010) and of ZooKeeper's recipes page, on the exported API of
// package zk only:
//
//   - Lock, and the read/write lock (NewReadLock, NewWriteLock);
//   - Election (Campaign, Resign, Leader, Observe) and LeaderLatch;
//   - Barrier and DoubleBarrier;
//   - Group membership (Join, Members, Watch);
//   - Queue (FIFO) and PriorityQueue;
//   - ConfigWatcher (configuration management), Rendezvous;
//   - NodeCache and TreeCache, kept by persistent watches.
//
// # What a recipe owns
//
// A recipe works under the path it is given: a directory for locks,
// elections, groups, queues and double barriers (created on first use,
// with its parents, as persistent znodes with the ACL of WithACL), a single
// znode for barriers, rendezvous, watchers and caches. Nodes a recipe makes
// are named so that other recipe values recognise them ("lock-",
// "__READ__", "__WRIT__", "latch-", "member-", "qn-", "pq-<priority>-",
// each with the sequence number the server appends, and, but for queue
// items, the "_c_<guid>-" prefix of zk.Conn.CreateProtected); other
// children are ignored. The names, and the order by sequence number
// whatever comes before it, are Apache Curator's, so that a Lock
// interoperates with Curator's InterProcessMutex and LeaderSelector, the
// read and write locks with InterProcessReadWriteLock, Election and
// LeaderLatch with Curator's LeaderLatch, and a Queue with
// SimpleDistributedQueue, on the same path; Barrier and DoubleBarrier
// follow the protocol of Curator's DistributedBarrier and
// DistributedDoubleBarrier (docs/client.md says which recipes do not
// interoperate, and why). Several recipes of different kinds must not
// share a directory, except a Lock with the read and write locks (a Lock
// node excludes like a write node; Curator's read/write lock does not know
// it) and a Queue with a PriorityQueue.
//
// Recipe values are safe for concurrent use. A lock, an Election or a
// DoubleBarrier value is one contender: make one per goroutine that
// contends. Every call that talks to the server takes a context.Context;
// as in package zk, cancelling it abandons the wait, not the request.
//
// # Waiting without a herd
//
// A contender for a lock or a leadership watches only the node just before
// its own (a reader only the last writer before it), so that a release wakes
// exactly the next contender. Every wait re-reads the state it waits on
// after each wake-up, whether a watch fired or the session changed state,
// so a wake-up that stands for several changes, or a spurious one, does no
// harm; watchers never block the Conn's delivery goroutine.
//
// # Connection loss
//
// Calls that fail with zk.ErrConnectionLoss are retried (zk.Retry) once
// the Conn is back. Sequential nodes are created with
// zk.Conn.CreateProtected (queue items with a marker node, in a multi), so
// a create whose answer was lost is found again rather than made twice; a
// participant's ephemeral node found to exist after a retried create is
// taken as ours only if this session owns it. Should a lost create still
// be applied after that look-up (a server may apply a request of a dropped
// connection late), the twin it makes carries our CreateProtected prefix,
// and a contender deletes it when it lists the contenders and when it
// deletes its own node (a release, a loss, a wait given up). A contender's
// create is not abandoned when its ctx ends: it completes in the background
// and its node is deleted, so a contender that gave up leaves no node to
// block the others.
//
// Queue consumers delete an item in a multi that also creates an
// ephemeral claim node of their own: after a connection loss the claim says
// whether the item was taken (also when a retry finds the item gone because
// the lost attempt was applied late), so that every item offered is taken
// exactly once, unless a consumer's session expires between taking it and
// using it.
//
// # Holding: Lost
//
// A lock holder, a leader and a group member learn that their hold is no
// longer guaranteed from Lost, a channel closed when
//
//   - the session expires, is closed, or fails authentication;
//   - the holder's node is found deleted; or
//   - the Conn has been without a read-write server for longer than the
//     disconnect grace (WithDisconnectGrace), and it may still come back.
//
// The last case matters because a holder cut off from the ensemble cannot
// know when the server expires its session and hands the lock to the next
// contender: the server may do so a session timeout after it last heard
// from the client. The Conn notices a silent server after two thirds of the
// session timeout at the latest (package zk's read timeout), so the default
// grace, a quarter of the negotiated session timeout, ends before the server
// can expire the session, give or take the network's delay. A holder that
// reconnects within the grace keeps its hold once its node is confirmed.
// After a loss through the grace the recipe deletes its node if the session
// comes back, so that a holder that gave up blocks nobody.
//
// A holder must stop relying on what it holds once Lost is closed. Like
// every lease-based lock, this one cannot stop a holder paused longer than
// the session timeout (a stopped process, a long garbage collection) from
// acting after its session expired; a resource that must be protected from
// that needs a fencing token (the holder's node name, or its Czxid, is one).
//
// # Session expiry
//
// An expired session ends the zk.Conn, and with it every recipe on it:
// holds are lost, waits and watchers return or stop with
// zk.ErrSessionExpired, and the application makes a new Conn and new
// recipe values. Watchers and caches stop too: their Updates channel is
// closed and Err says why.
//
// # Watchers and caches
//
// ConfigWatcher, NodeCache, TreeCache, GroupView and Election.Observe read
// again after every event, so the value they end on is always the current
// one; their Updates channels hold one value, the latest, so a slow reader
// skips intermediate values but never sees an older value after a newer
// one. NodeCache and TreeCache use persistent watches (zk.Conn.AddWatch),
// read everything again after a reconnection (a persistent watch is not told
// of changes made while the session was away), and fall back to one-time
// watches on servers that answer addWatch with zk.ErrUnimplemented, or when
// WithOneTimeWatches asks them to.
package recipe
