import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/** LockScenarios covers the lock recipes with several sessions. */
final class LockScenarios {
    private LockScenarios() {}

    private static final long SECONDS = Session.WAIT_SECONDS;

    /** A timed acquire that must fail waits this long. */
    private static final long SHORT_MS = 300;

    private static CuratorFramework[] clients(String namespace, int n) throws InterruptedException {
        CuratorFramework[] cs = new CuratorFramework[n];
        for (int i = 0; i < n; i++) {
            cs[i] = Session.client(namespace);
        }
        return cs;
    }

    /**
     * mutex: threads of three clients increment a counter znode under an
     * InterProcessMutex (with a reentrant acquire) with compare-and-set
     * writes; no two ever hold the lock, and no write is lost.
     */
    static void mutex() throws Exception {
        final int threads = 2;
        final int rounds = 5;
        CuratorFramework[] cs = clients("locks", 3);
        cs[0].create().forPath("/counter", Helpers.bytes("0"));
        AtomicInteger holders = new AtomicInteger();
        List<Callable<Integer>> tasks = new ArrayList<>();
        for (CuratorFramework c : cs) {
            Session.sync(c, "/counter");
            for (int t = 0; t < threads; t++) {
                tasks.add(() -> {
                    InterProcessMutex lock = new InterProcessMutex(c, "/lock");
                    for (int r = 0; r < rounds; r++) {
                        Helpers.check(lock.acquire(SECONDS, TimeUnit.SECONDS), "lock not acquired within %ds", SECONDS);
                        Helpers.check(lock.acquire(SECONDS, TimeUnit.SECONDS), "reentrant acquire failed");
                        Helpers.check(lock.isOwnedByCurrentThread(), "lock not owned by the acquiring thread");
                        int h = holders.incrementAndGet();
                        Helpers.check(h == 1, "%d lock holders at once", h);
                        Stat st = new Stat();
                        int v = Integer.parseInt(Helpers.str(c.getData().storingStatIn(st).forPath("/counter")));
                        try {
                            c.setData().withVersion(st.getVersion()).forPath("/counter", Helpers.bytes(Integer.toString(v + 1)));
                        } catch (KeeperException.BadVersionException e) {
                            throw new AssertionError("lost update: the counter changed while the lock was held");
                        }
                        holders.decrementAndGet();
                        lock.release();
                        Helpers.check(lock.isAcquiredInThisProcess(), "outer hold lost after the inner release");
                        lock.release();
                        Helpers.check(!lock.isAcquiredInThisProcess(), "lock still held after release");
                    }
                    return rounds;
                });
            }
        }
        int total = 0;
        for (int n : Helpers.parallel(3 * SECONDS, tasks)) {
            total += n;
        }
        Session.sync(cs[0], "/counter");
        String counter = Helpers.str(cs[0].getData().forPath("/counter"));
        Session.out("%d clients x %d threads x %d rounds: counter=%s, never two holders", cs.length, threads, rounds, counter);
        Helpers.equal(Integer.toString(total), counter, "counter");
        Session.out("lock nodes left %s", cs[0].getChildren().forPath("/lock"));

        InterProcessMutex a = new InterProcessMutex(cs[0], "/lock");
        InterProcessMutex b = new InterProcessMutex(cs[1], "/lock");
        Helpers.check(a.acquire(SECONDS, TimeUnit.SECONDS), "first client did not get the free lock");
        Session.out("held by another client: acquire(%dms) -> %b", SHORT_MS, b.acquire(SHORT_MS, TimeUnit.MILLISECONDS));
        try {
            b.release();
            throw new AssertionError("release of an unheld lock succeeded");
        } catch (IllegalMonitorStateException e) {
            Session.out("release without holding -> IllegalMonitorStateException");
        }
        Session.sync(cs[0], "/lock");
        Session.out("participants while held: %d", a.getParticipantNodes().size());
        Session.close(cs[0]);
        Helpers.check(b.acquire(SECONDS, TimeUnit.SECONDS), "lock not acquired after its holder's session closed");
        Session.out("holder's session closed: other client acquires -> true");
        b.release();
    }

    /** readWriteLock: readers share, a writer excludes readers and may also read. */
    static void readWriteLock() throws Exception {
        CuratorFramework[] cs = clients("rw", 3);
        InterProcessReadWriteLock r1 = new InterProcessReadWriteLock(cs[0], "/rw");
        InterProcessReadWriteLock r2 = new InterProcessReadWriteLock(cs[1], "/rw");
        InterProcessReadWriteLock w = new InterProcessReadWriteLock(cs[2], "/rw");
        Helpers.check(r1.readLock().acquire(SECONDS, TimeUnit.SECONDS), "first reader blocked");
        Helpers.check(r2.readLock().acquire(SECONDS, TimeUnit.SECONDS), "second reader blocked by the first");
        Session.out("two readers hold the read lock");
        Session.out("writer acquire(%dms) while read-locked -> %b", SHORT_MS,
                w.writeLock().acquire(SHORT_MS, TimeUnit.MILLISECONDS));
        r1.readLock().release();
        r2.readLock().release();
        Helpers.check(w.writeLock().acquire(SECONDS, TimeUnit.SECONDS), "writer blocked after the readers left");
        Session.out("writer acquires after the readers release");
        Session.out("reader acquire(%dms) while write-locked -> %b", SHORT_MS,
                r1.readLock().acquire(SHORT_MS, TimeUnit.MILLISECONDS));
        Helpers.check(w.readLock().acquire(SECONDS, TimeUnit.SECONDS), "the writer could not take the read lock");
        Session.out("writer also takes the read lock");
        w.readLock().release();
        w.writeLock().release();
        Helpers.check(r1.readLock().acquire(SECONDS, TimeUnit.SECONDS), "reader blocked after the writer left");
        Session.out("reader acquires after the writer releases");
        r1.readLock().release();
    }

    /** semaphore: InterProcessSemaphoreV2 hands out at most two leases. */
    static void semaphore() throws Exception {
        CuratorFramework[] cs = clients("sem", 3);
        InterProcessSemaphoreV2 s1 = new InterProcessSemaphoreV2(cs[0], "/sem", 2);
        InterProcessSemaphoreV2 s2 = new InterProcessSemaphoreV2(cs[1], "/sem", 2);
        InterProcessSemaphoreV2 s3 = new InterProcessSemaphoreV2(cs[2], "/sem", 2);
        s1.setNodeData(Helpers.bytes("holder-1"));
        Collection<Lease> l1 = s1.acquire(2, SECONDS, TimeUnit.SECONDS);
        Helpers.check(l1 != null && l1.size() == 2, "two leases of two not granted");
        Iterator<Lease> it = l1.iterator();
        Lease first = it.next();
        Session.out("first client holds 2 leases; lease data %s", Helpers.str(first.getData()));
        Lease none = s2.acquire(SHORT_MS, TimeUnit.MILLISECONDS);
        Session.out("second client acquire(%dms) with none left -> %s", SHORT_MS, none == null ? "no lease" : "a lease");
        Helpers.check(none == null, "a third lease was granted");
        s1.returnLease(first);
        Lease l2 = s2.acquire(SECONDS, TimeUnit.SECONDS);
        Helpers.check(l2 != null, "no lease after one was returned");
        Session.out("after one returned: second client gets a lease; participants %d", s2.getParticipantNodes().size());
        Lease l3 = s3.acquire(SHORT_MS, TimeUnit.MILLISECONDS);
        Session.out("third client acquire(%dms) -> %s", SHORT_MS, l3 == null ? "no lease" : "a lease");
        Helpers.check(l3 == null, "a third lease was granted");
        Session.close(cs[0]);
        l3 = s3.acquire(SECONDS, TimeUnit.SECONDS);
        Helpers.check(l3 != null, "no lease after the holder's session closed");
        Session.out("holder's session closed: third client gets its lease");
        s2.returnLease(l2);
        s3.returnLease(l3);
        Session.sync(cs[1], "/sem");
        Session.out("participants after returning all %d", s2.getParticipantNodes().size());
    }
}
