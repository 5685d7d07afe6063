import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.queue.SimpleDistributedQueue;

/**
 * InteropScenarios are the Curator halves of TestInterop's scenarios. In
 * each dialogue "go:" is a line the Go side writes (after doing what it
 * says), "curator:" this program's answer; both sides check what they
 * can see at each step.
 */
final class InteropScenarios {
    private InteropScenarios() {}

    private static final long SHORT = Interop.SHORT_MILLIS;
    private static final long WAIT = Interop.WAIT_SECONDS;

    /** count parses "count n". */
    private static int count(String line) {
        Helpers.check(line.startsWith("count "), "want a count line, got %s", line);
        return Integer.parseInt(line.substring("count ".length()));
    }

    /**
     * mutex: InterProcessMutex and recipe.Lock on /mutex/lock.
     *
     * <pre>
     * go: go-holds            curator: curator-excluded  (acquire times out)
     * go: go-released         curator: curator-holds
     * go: go-waiting          curator: curator-released  (the Go waiter gets it)
     * go: count n             curator: counted           (2 clients x n increments)
     * go: done
     * </pre>
     */
    static void mutex() throws Exception {
        CuratorFramework c1 = Interop.client(), c2 = Interop.client();
        InterProcessMutex m = new InterProcessMutex(c1, "/mutex/lock");
        Interop.expect("go-holds");
        Helpers.check(!m.acquire(SHORT, TimeUnit.MILLISECONDS), "InterProcessMutex acquired while a Go Lock held");
        Interop.say("curator-excluded");
        Interop.expect("go-released");
        Helpers.check(m.acquire(WAIT, TimeUnit.SECONDS), "InterProcessMutex not acquired after the Go Lock was released");
        Interop.say("curator-holds");
        Interop.expect("go-waiting");
        m.release();
        Interop.say("curator-released");
        int n = count(Interop.hear());
        List<Callable<Void>> tasks = new ArrayList<>();
        for (CuratorFramework c : List.of(c1, c2)) {
            InterProcessMutex lock = new InterProcessMutex(c, "/mutex/lock");
            tasks.add(() -> {
                for (int i = 0; i < n; i++) {
                    Helpers.check(lock.acquire(WAIT, TimeUnit.SECONDS), "InterProcessMutex not acquired within %ds", WAIT);
                    try {
                        Interop.exclusive(c, "/mutex", "curator");
                    } finally {
                        lock.release();
                    }
                }
                return null;
            });
        }
        Helpers.parallel(2 * WAIT, tasks);
        Interop.say("counted");
        Interop.expect("done");
    }

    /**
     * selector: LeaderSelector and recipe.Lock on /selector/leader (a
     * LeaderSelector's participants are InterProcessMutex nodes).
     *
     * <pre>
     * go: go-holds            curator: curator-waits    (getLeader is the Go holder)
     * go: go-released         curator: curator-leads
     * go: go-excluded         curator: curator-released
     * go: count n             curator: counted          (2 selectors x n terms)
     * go: done
     * </pre>
     */
    static void selector() throws Exception {
        CuratorFramework c1 = Interop.client(), c2 = Interop.client();
        String path = "/selector/leader";
        CountDownLatch led = new CountDownLatch(1), stop = new CountDownLatch(1);
        LeaderSelector s = new LeaderSelector(c1, path, new LeaderSelectorListenerAdapter() {
            @Override
            public void takeLeadership(CuratorFramework client) throws Exception {
                led.countDown();
                stop.await(WAIT, TimeUnit.SECONDS);
            }
        });
        s.setId("curator");
        Interop.expect("go-holds");
        s.start();
        Helpers.check(!led.await(SHORT, TimeUnit.MILLISECONDS), "LeaderSelector led while a Go Lock held");
        Participant p = s.getLeader();
        Helpers.equal("go-leader", p.getId(), "LeaderSelector.getLeader id");
        Helpers.check(p.isLeader(), "getLeader is not the leader");
        Helpers.equal(2, s.getParticipants().size(), "participants");
        Interop.say("curator-waits");
        Interop.expect("go-released");
        Helpers.check(led.await(WAIT, TimeUnit.SECONDS), "LeaderSelector did not lead after the Go Lock was released");
        Helpers.check(s.hasLeadership(), "hasLeadership is false in takeLeadership");
        Interop.say("curator-leads");
        Interop.expect("go-excluded");
        stop.countDown();
        s.close();
        Interop.say("curator-released");
        int n = count(Interop.hear());
        AtomicInteger done = new AtomicInteger();
        CountDownLatch all = new CountDownLatch(2);
        List<LeaderSelector> ss = new ArrayList<>();
        for (CuratorFramework c : List.of(c1, c2)) {
            AtomicInteger terms = new AtomicInteger();
            LeaderSelector sel = new LeaderSelector(c, path, new LeaderSelectorListenerAdapter() {
                @Override
                public void takeLeadership(CuratorFramework client) throws Exception {
                    if (terms.get() >= n) {
                        return; // done: pass the turn on until closed
                    }
                    Interop.exclusive(client, "/selector", "curator");
                    if (terms.incrementAndGet() == n) {
                        done.incrementAndGet();
                        all.countDown();
                    }
                }
            });
            sel.autoRequeue();
            ss.add(sel);
        }
        for (LeaderSelector sel : ss) {
            sel.start();
        }
        Helpers.check(all.await(2 * WAIT, TimeUnit.SECONDS), "%d of 2 selectors finished their %d terms", done.get(), n);
        for (LeaderSelector sel : ss) {
            sel.close();
        }
        Interop.say("counted");
        Interop.expect("done");
    }

    /**
     * rwlock: InterProcessReadWriteLock and recipe's read and write locks
     * on /rw/lock.
     *
     * <pre>
     * go: go-writes           curator: curator-excluded  (read and write time out)
     * go: go-reads            curator: curator-reads     (a write times out)
     * go: go-writer-queued    curator: curator-behind-writer (a new read times out)
     * go: go-read-released    curator: curator-read-released (the Go writer gets it)
     * go: go-writes           curator: curator-excluded
     * go: count n             curator: counted  (2 writers x n increments, a reader)
     * go: done
     * </pre>
     */
    static void readWriteLock() throws Exception {
        CuratorFramework c1 = Interop.client(), c2 = Interop.client(), c3 = Interop.client();
        String path = "/rw/lock";
        InterProcessReadWriteLock rw1 = new InterProcessReadWriteLock(c1, path);
        InterProcessReadWriteLock rw2 = new InterProcessReadWriteLock(c2, path);
        Interop.expect("go-writes");
        Helpers.check(!rw1.readLock().acquire(SHORT, TimeUnit.MILLISECONDS), "Curator read lock acquired while a Go writer held");
        Helpers.check(!rw2.writeLock().acquire(SHORT, TimeUnit.MILLISECONDS), "Curator write lock acquired while a Go writer held");
        Interop.say("curator-excluded");
        Interop.expect("go-reads");
        Helpers.check(rw1.readLock().acquire(WAIT, TimeUnit.SECONDS), "Curator read lock not shared with a Go reader");
        Helpers.check(!rw2.writeLock().acquire(SHORT, TimeUnit.MILLISECONDS), "Curator write lock acquired while readers held");
        Interop.say("curator-reads");
        Interop.expect("go-writer-queued");
        Helpers.check(!rw2.readLock().acquire(SHORT, TimeUnit.MILLISECONDS), "Curator read lock acquired ahead of a queued Go writer");
        Interop.say("curator-behind-writer");
        Interop.expect("go-read-released");
        rw1.readLock().release();
        Interop.say("curator-read-released");
        Interop.expect("go-writes");
        Helpers.check(!rw1.readLock().acquire(SHORT, TimeUnit.MILLISECONDS), "Curator read lock acquired while a Go writer held");
        Interop.say("curator-excluded");
        int n = count(Interop.hear());
        List<Callable<Void>> tasks = new ArrayList<>();
        for (CuratorFramework c : List.of(c1, c2)) {
            InterProcessReadWriteLock rw = new InterProcessReadWriteLock(c, path);
            tasks.add(() -> {
                for (int i = 0; i < n; i++) {
                    Helpers.check(rw.writeLock().acquire(WAIT, TimeUnit.SECONDS), "write lock not acquired within %ds", WAIT);
                    try {
                        Interop.exclusive(c, "/rw", "curator");
                    } finally {
                        rw.writeLock().release();
                    }
                }
                return null;
            });
        }
        InterProcessReadWriteLock rw3 = new InterProcessReadWriteLock(c3, path);
        tasks.add(() -> {
            for (int i = 0; i < n; i++) {
                Helpers.check(rw3.readLock().acquire(WAIT, TimeUnit.SECONDS), "read lock not acquired within %ds", WAIT);
                try {
                    Helpers.check(c3.checkExists().forPath("/rw/inside") == null, "a Curator reader held while a writer was inside");
                } finally {
                    rw3.readLock().release();
                }
            }
            return null;
        });
        Helpers.parallel(2 * WAIT, tasks);
        Interop.say("counted");
        Interop.expect("done");
    }

    /** leaderIs checks, from the Curator latches, that id leads. */
    private static void leaderIs(String id, LeaderLatch... ls) throws Exception {
        for (LeaderLatch l : ls) {
            if (l.getId().equals(id)) {
                Helpers.check(l.await(WAIT, TimeUnit.SECONDS), "%s did not lead within %ds", id, WAIT);
            }
        }
        for (LeaderLatch l : ls) {
            if (l.getState() != LeaderLatch.State.STARTED) {
                continue;
            }
            Helpers.equal(l.getId().equals(id), l.hasLeadership(), l.getId() + " hasLeadership");
            Helpers.equal(id, l.getLeader().getId(), l.getId() + "'s getLeader");
        }
    }

    /**
     * latch: Curator LeaderLatch participants and Go's LeaderLatch and
     * Election candidates on /latch, joining in the order go-A, curator-B,
     * go-C, curator-D, lead in that order and never two at once.
     *
     * <pre>
     * go: start curator-B     curator: started  (its node is the 2nd)
     * go: start curator-D     curator: started  (the 4th)
     * go: leader X            curator: ok       (the Curator latches agree X leads)
     * go: close curator-B     curator: closed
     * go: done
     * </pre>
     */
    static void latch() throws Exception {
        CuratorFramework c1 = Interop.client(), c2 = Interop.client();
        LeaderLatch b = new LeaderLatch(c1, "/latch", "curator-B");
        LeaderLatch d = new LeaderLatch(c2, "/latch", "curator-D");
        for (;;) {
            String line = Interop.hear();
            if (line.equals("done")) {
                break;
            }
            String[] f = line.split(" ", 2);
            Helpers.check(f.length == 2, "bad line %s", line);
            LeaderLatch l = f[1].equals("curator-B") ? b : d;
            switch (f[0]) {
                case "start" -> {
                    int before = l.getParticipants().size();
                    l.start();
                    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT);
                    while (l.getParticipants().size() <= before) {
                        Helpers.check(System.nanoTime() < end, "%s's node did not appear", f[1]);
                        Thread.sleep(10);
                    }
                    Interop.say("started");
                }
                case "leader" -> {
                    leaderIs(f[1], b, d);
                    Interop.say("ok");
                }
                case "close" -> {
                    l.close();
                    Interop.say("closed");
                }
                default -> throw new AssertionError("bad line " + line);
            }
        }
        d.close();
    }

    /**
     * barrier: DistributedBarrier and recipe.Barrier on /barrier/b.
     *
     * <pre>
     * go: set                 curator: set      (Curator raises it; Go's Wait blocks)
     * go: remove              curator: removed  (Go's Wait returns)
     * go: go-set              curator: waiting  (waitOnBarrier timed out)
     * go: go-removed          curator: released
     * go: done
     * </pre>
     */
    static void barrier() throws Exception {
        CuratorFramework c = Interop.client();
        DistributedBarrier b = new DistributedBarrier(c, "/barrier/b");
        Interop.expect("set");
        b.setBarrier();
        Interop.say("set");
        Interop.expect("remove");
        b.removeBarrier();
        Interop.say("removed");
        Interop.expect("go-set");
        Helpers.check(!b.waitOnBarrier(SHORT, TimeUnit.MILLISECONDS), "waitOnBarrier returned while a Go barrier was set");
        Interop.say("waiting");
        Interop.expect("go-removed");
        Helpers.check(b.waitOnBarrier(WAIT, TimeUnit.SECONDS), "waitOnBarrier did not return after the Go barrier was removed");
        Interop.say("released");
        Interop.expect("done");
    }

    /**
     * double-barrier: two DistributedDoubleBarrier and two
     * recipe.DoubleBarrier participants, for four, on /double.
     *
     * <pre>
     * go: enter               curator: entering (one has joined, none returned)
     * go: enter               curator: entered  (the second joined; both returned)
     * go: leave               curator: left     (both left, with the Go ones)
     * go: done
     * </pre>
     */
    static void doubleBarrier() throws Exception {
        CuratorFramework c1 = Interop.client(), c2 = Interop.client();
        DistributedDoubleBarrier x = new DistributedDoubleBarrier(c1, "/double", 4);
        DistributedDoubleBarrier y = new DistributedDoubleBarrier(c2, "/double", 4);
        java.util.concurrent.ExecutorService ex = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            Interop.expect("enter");
            int before = c1.getChildren().forPath("/double").size();
            var fx = ex.submit(() -> x.enter(2 * WAIT, TimeUnit.SECONDS));
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT);
            while (c1.getChildren().forPath("/double").size() <= before) {
                Helpers.check(System.nanoTime() < end, "the first Curator participant did not join");
                Thread.sleep(10);
            }
            Helpers.check(!fx.isDone(), "enter returned with 3 of 4 participants");
            Interop.say("entering");
            Interop.expect("enter");
            var fy = ex.submit(() -> y.enter(2 * WAIT, TimeUnit.SECONDS));
            Helpers.check(fx.get(2 * WAIT, TimeUnit.SECONDS), "the first Curator participant timed out entering");
            Helpers.check(fy.get(2 * WAIT, TimeUnit.SECONDS), "the second Curator participant timed out entering");
            Interop.say("entered");
            Interop.expect("leave");
            var lx = ex.submit(() -> x.leave(2 * WAIT, TimeUnit.SECONDS));
            var ly = ex.submit(() -> y.leave(2 * WAIT, TimeUnit.SECONDS));
            Helpers.check(lx.get(2 * WAIT, TimeUnit.SECONDS), "the first Curator participant timed out leaving");
            Helpers.check(ly.get(2 * WAIT, TimeUnit.SECONDS), "the second Curator participant timed out leaving");
            Interop.say("left");
            Interop.expect("done");
        } finally {
            ex.shutdownNow();
        }
    }

    /**
     * queue: SimpleDistributedQueue and recipe.Queue on /queue.
     *
     * <pre>
     * go: take n              curator: took a,b,...  (the Go items, in order)
     * go: offer n             curator: offered       (cur-0..; Go takes them in order)
     * go: mixed n             curator: took a,b,...  (n offered while n taken)
     * go: done
     * </pre>
     */
    static void queue() throws Exception {
        CuratorFramework c1 = Interop.client(), c2 = Interop.client();
        SimpleDistributedQueue q1 = new SimpleDistributedQueue(c1, "/queue");
        SimpleDistributedQueue q2 = new SimpleDistributedQueue(c2, "/queue");
        for (;;) {
            String line = Interop.hear();
            if (line.equals("done")) {
                break;
            }
            String[] f = line.split(" ", 2);
            Helpers.check(f.length == 2, "bad line %s", line);
            int n = Integer.parseInt(f[1]);
            switch (f[0]) {
                case "take" -> Interop.say("took %s", take(q1, n));
                case "offer" -> {
                    for (int i = 0; i < n; i++) {
                        Helpers.check(q1.offer(Helpers.bytes("cur-" + i)), "offer failed");
                    }
                    Interop.say("offered");
                }
                case "mixed" -> {
                    List<String> took = Helpers.parallel(2 * WAIT, List.of(
                            () -> {
                                for (int i = 0; i < n; i++) {
                                    Helpers.check(q2.offer(Helpers.bytes("cur-" + i)), "offer failed");
                                }
                                return "";
                            },
                            () -> take(q1, n)));
                    Interop.say("took %s", took.get(1));
                }
                default -> throw new AssertionError("bad line " + line);
            }
        }
    }

    /** take takes n items from q and returns them, comma-separated. */
    private static String take(SimpleDistributedQueue q, int n) throws Exception {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] b = q.poll(WAIT, TimeUnit.SECONDS);
            Helpers.check(b != null, "no item within %ds after %s", WAIT, out);
            out.add(Helpers.str(b));
        }
        return String.join(",", out);
    }
}
