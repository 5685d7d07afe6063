// Package curator runs Apache Curator 5.4 (Debian's libcurator-*-java, with
// the ZooKeeper 3.8 Java client) against Paddock and Apache ZooKeeper 3.8,
// side by side, to hold the README's promise that Curator works with Paddock
// unchanged.
//
// # Contract
//
// TestCurator compiles the Java program in testdata/ (Session.java and the
// *Scenarios.java files, with testdata/shared/Helpers.java, the checks and
// helpers both Java programs share) with javac into a temporary directory,
// once, then runs it, one target after another, against
//
//   - "zookeeper": a standalone Apache ZooKeeper 3.8,
//   - "paddock": a standalone Paddock built from ./cmd/paddock,
//   - "paddock-ensemble": a three-member Paddock ensemble, whose members
//     the program's clients are spread over (client k connects to member
//     k mod 3, so followers and the leader all serve them),
//
// each started by internal/zktest on 127.0.0.1 and stopped when its subtest
// ends. The program checks every result itself and exits non-zero with
// "FAIL <scenario>: <reason>" on the first failure (its stderr, with the
// stack trace and the clients' warnings, is then shown). It limits itself to
// 90 s (it then prints every thread's stack and exits 3); the test kills it
// 15 s later. Each run must exit 0, and its transcript (stdout, which holds
// no session ids, times, zxids or random names) must equal Apache
// ZooKeeper's, line for line; a difference is shown as a unified diff.
// Clients that read what another client wrote call sync first, as ZooKeeper
// requires across servers.
//
// TestInterop (interop_test.go, with testdata/interop/) runs Go clients of
// zk/recipe and Curator clients side by side on the same znodes of one
// standalone Paddock, the Java program driven line by line from the test:
// Lock with InterProcessMutex and with LeaderSelector, the read/write locks
// with InterProcessReadWriteLock, LeaderLatch and Election with LeaderLatch,
// Barrier with DistributedBarrier, DoubleBarrier with
// DistributedDoubleBarrier, Queue with SimpleDistributedQueue (docs/client.md,
// "Recipes and Apache Curator").
//
// # Coverage
//
// Scenarios, in order (each in its own namespace, on fresh sessions):
//
//   - connection: a ConnectionStateListener sees CONNECTED; close ends the
//     session.
//   - crud: a namespace; create().creatingParentsIfNeeded(),
//     withProtection() EPHEMERAL_SEQUENTIAL, PERSISTENT_SEQUENTIAL,
//     creatingParentContainersIfNeeded, createContainers, TTL nodes,
//     storingStatIn, orSetData, idempotent, a 900 KiB node; setData with
//     versions;
//     checkExists; getChildren; background callbacks; delete with a version,
//     quietly, guaranteed().deletingChildrenIfNeeded(); the error codes.
//   - transaction: a multi of create (sequential, TTL, container, with an
//     ACL), setData, check and delete; one of 200 creates; failing multis,
//     synchronous and in the background, with their per-op results.
//   - acl: digest ACLs for several users via authorization("digest", ...),
//     the super user, setACL with versions, CREATOR_ALL_ACL.
//   - session: closing a client removes its ephemerals, seen (by a watch)
//     by another client.
//   - expiry: a session closed through a second handle: the client reports
//     LOST, then RECONNECTED with a new session, and an ephemeral
//     PersistentNode comes back.
//   - watches: usingWatcher (Watcher and CuratorWatcher) data, exists and
//     children watches fire once; watched() with a CuratorListener;
//     watchers().remove().
//   - cache, tree-cache: CuratorCache (persistent recursive watches) and
//     TreeCache see the initial tree, then each create, change and delete
//     in order.
//   - persistent-watches: watchers().add() with PERSISTENT_RECURSIVE and
//     PERSISTENT keep firing, for the right paths only.
//   - mutex: three clients with two threads each increment a counter under
//     an InterProcessMutex, reentrantly, with compare-and-set writes: never
//     two holders, no lost update; timed acquires, release by a
//     non-holder, release by the holder's session closing.
//   - rwlock, semaphore: InterProcessReadWriteLock; InterProcessSemaphoreV2
//     leases.
//   - leader-latch, leader-selector: three LeaderLatch participants, exactly
//     one leader, the next elected when the leader closes its latch and when
//     the next closes its session; LeaderSelector turns never overlap,
//     autoRequeue.
//   - barriers, shared-count, atomic-long, queues: DistributedBarrier,
//     DistributedDoubleBarrier; SharedCount (trySetCount with a stale
//     VersionedValue fails); DistributedAtomicLong under contention and its
//     compareAndSet; SimpleDistributedQueue and DistributedQueue FIFO order.
//   - nodes: an ephemeral PersistentNode recreated after another client
//     deletes it; GroupMember.
//   - discovery: curator-x-discovery's ServiceDiscovery (register, query,
//     unregister), ServiceProvider and ServiceCache.
//
// # Running
//
//	go test ./test/curator
//
// takes about 35 s (three runs of about 10 s each, plus starting the
// servers) and is skipped with -short; add -v for the transcripts, or
// -run 'TestCurator/paddock$' for one target (the comparison then has no
// reference and is left out). The program runs by hand too, against any
// servers configured as internal/zktest configures them (extended types on,
// super digest for super:test):
//
//	javac -d /tmp/cs -cp "$CP" test/curator/testdata/*.java test/curator/testdata/shared/*.java
//	java -cp "/tmp/cs:$CP" Session 90 127.0.0.1:2181
//
// with CP the jars listed in curator_test.go's classpath. The Debian
// packages it needs: libcurator-client-java, libcurator-framework-java,
// libcurator-recipes-java, libcurator-discovery-java, libzookeeper-java,
// libguava-java, libslf4j-java, libjackson2-databind-java,
// libjackson2-core-java, libjackson2-annotations-java (the Curator packages
// pull in the rest) and openjdk-17-jdk-headless. The package has no
// non-test code.
package curator
