import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;

/**
 * Session runs Curator the way applications use it against one server or
 * ensemble and checks every result itself.
 *
 * <p>Usage: {@code java Session <deadline-seconds> <host:port>...}. Each
 * CuratorFramework the scenarios open gets the next address in turn, so
 * that an ensemble's members all serve clients. Stdout is a transcript that
 * holds no session ids, times, zxids or random names, so that it is the same
 * for every correct server. On the first failed check the program prints
 * "FAIL scenario: reason" (stdout and stderr, with a stack trace on stderr)
 * and exits 1; past the deadline it prints the threads' stacks and exits 3;
 * after the last scenario it prints "PASS n scenarios" and exits 0.
 */
public final class Session {
    /** Bounds every wait for a server-side condition. */
    static final long WAIT_SECONDS = 20;

    private static final PrintStream OUT = System.out;
    private static String[] addrs;
    private static int nextAddr;
    private static final List<CuratorFramework> clients = new ArrayList<>();
    private static volatile String scenario = "setup";

    private Session() {}

    /** Body is a scenario or a step that may throw. */
    interface Body {
        void run() throws Exception;
    }

    /** Check is a condition waited for. */
    interface Check {
        boolean ok() throws Exception;
    }

    private record Scenario(String name, Body body) {}

    public static void main(String[] args) {
        if (args.length < 2) {
            System.err.println("usage: java Session <deadline-seconds> <host:port>...");
            System.exit(2);
        }
        long deadline = Long.parseLong(args[0]);
        addrs = Arrays.copyOfRange(args, 1, args.length);
        startWatchdog(deadline);
        List<Scenario> all = List.of(
                new Scenario("connection", BasicScenarios::connection),
                new Scenario("crud", BasicScenarios::crud),
                new Scenario("transaction", BasicScenarios::transaction),
                new Scenario("acl", BasicScenarios::acl),
                new Scenario("session", BasicScenarios::session),
                new Scenario("expiry", BasicScenarios::expiry),
                new Scenario("watches", WatchScenarios::oneTime),
                new Scenario("cache", WatchScenarios::cache),
                new Scenario("tree-cache", WatchScenarios::treeCache),
                new Scenario("persistent-watches", WatchScenarios::persistent),
                new Scenario("mutex", LockScenarios::mutex),
                new Scenario("rwlock", LockScenarios::readWriteLock),
                new Scenario("semaphore", LockScenarios::semaphore),
                new Scenario("leader-latch", LeaderScenarios::latch),
                new Scenario("leader-selector", LeaderScenarios::selector),
                new Scenario("barriers", RecipeScenarios::barriers),
                new Scenario("shared-count", RecipeScenarios::sharedCount),
                new Scenario("atomic-long", RecipeScenarios::atomicLong),
                new Scenario("queues", RecipeScenarios::queues),
                new Scenario("nodes", RecipeScenarios::nodes),
                new Scenario("discovery", RecipeScenarios::discovery));
        try {
            for (Scenario s : all) {
                scenario = s.name();
                out("== %s", s.name());
                s.body().run();
                closeClients();
            }
        } catch (Throwable e) {
            String msg = "FAIL " + scenario + ": " + e;
            synchronized (OUT) {
                OUT.println(msg);
                OUT.flush();
            }
            System.err.println(msg);
            e.printStackTrace();
            System.err.flush();
            Runtime.getRuntime().halt(1);
        }
        out("PASS %d scenarios", all.size());
        OUT.flush();
        Runtime.getRuntime().halt(0);
    }

    /** startWatchdog ends the process with status 3 once the deadline passes. */
    private static void startWatchdog(long seconds) {
        Thread w = new Thread(() -> {
            try {
                Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
            } catch (InterruptedException e) {
                return;
            }
            String msg = "FAIL " + scenario + ": deadline of " + seconds + "s passed";
            OUT.println(msg);
            OUT.flush();
            System.err.println(msg);
            Helpers.printThreads();
            Runtime.getRuntime().halt(3);
        }, "watchdog");
        w.setDaemon(true);
        w.start();
    }

    /** out prints one transcript line. */
    static void out(String format, Object... args) {
        synchronized (OUT) {
            OUT.println(String.format(format, args));
        }
    }

    /** builder returns a CuratorFramework builder for the next address. */
    static CuratorFrameworkFactory.Builder builder(String namespace) {
        String addr = addrs[nextAddr++ % addrs.length];
        return CuratorFrameworkFactory.builder()
                .connectString(addr)
                .retryPolicy(new ExponentialBackoffRetry(100, 5, 2000))
                .sessionTimeoutMs(15000)
                .connectionTimeoutMs(15000)
                .namespace(namespace);
    }

    /** client starts a client with the namespace and waits until it connects. */
    static CuratorFramework client(String namespace) throws InterruptedException {
        return start(builder(namespace).build());
    }

    /**
     * start starts c, waits until it connects and closes it after the
     * scenario.
     */
    static CuratorFramework start(CuratorFramework c) throws InterruptedException {
        synchronized (clients) {
            clients.add(c);
        }
        c.start();
        Helpers.check(c.blockUntilConnected((int) WAIT_SECONDS, TimeUnit.SECONDS), "client did not connect within %ds", WAIT_SECONDS);
        return c;
    }

    /** close closes c now (ending its session). */
    static void close(CuratorFramework c) {
        synchronized (clients) {
            clients.remove(c);
        }
        c.close();
    }

    private static void closeClients() {
        List<CuratorFramework> cs;
        synchronized (clients) {
            cs = new ArrayList<>(clients);
            clients.clear();
        }
        for (CuratorFramework c : cs) {
            c.close();
        }
    }

    /**
     * fails runs body, requires it to throw a KeeperException with the given
     * code and returns the code's name.
     */
    static String fails(KeeperException.Code want, String what, Body body) throws Exception {
        try {
            body.run();
        } catch (KeeperException e) {
            Helpers.equal(want, e.code(), what + " error");
            return e.code().name();
        }
        throw new AssertionError(what + ": succeeded, want " + want);
    }

    /** await waits for the latch to reach zero. */
    static void await(CountDownLatch l, String what) throws InterruptedException {
        Helpers.check(l.await(WAIT_SECONDS, TimeUnit.SECONDS), "%s: not within %ds", what, WAIT_SECONDS);
    }

    /** next takes the next element of q, waiting for it. */
    static <T> T next(BlockingQueue<T> q, String what) throws InterruptedException {
        T v = q.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        Helpers.check(v != null, "%s: nothing within %ds", what, WAIT_SECONDS);
        return v;
    }

    /** waitUntil polls cond until it holds, for at most WAIT_SECONDS. */
    static void waitUntil(String what, Check cond) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!cond.ok()) {
            Helpers.check(System.nanoTime() < end, "%s: not within %ds", what, WAIT_SECONDS);
            Thread.sleep(10);
        }
    }

    /**
     * sync makes c's server catch up with the leader for path, so that c's
     * next read sees every write completed before (other clients may be
     * connected to other members).
     */
    static void sync(CuratorFramework c, String path) throws Exception {
        CountDownLatch done = new CountDownLatch(1);
        int[] rc = {-1};
        c.sync().inBackground((client, event) -> {
            rc[0] = event.getResultCode();
            done.countDown();
        }).forPath(path);
        await(done, "sync " + path);
        Helpers.equal(0, rc[0], "sync " + path + " result code");
    }
}
