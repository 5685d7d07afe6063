import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

/**
 * Interop is the Curator side of test/curator's TestInterop: one scenario,
 * played in turns with the Go side, which runs Paddock's zk/recipe on the
 * same paths.
 *
 * <p>Usage: {@code java Interop <deadline-seconds> <host:port> <scenario>}.
 * The two sides take turns over a line protocol: the Go test writes a
 * command line to stdin, this program acts and answers with one line on
 * stdout (see InteropScenarios for each scenario's dialogue). A failed
 * check prints "FAIL reason" and exits 1; past the deadline the program
 * prints its threads' stacks on stderr and exits 3; at the end of the
 * scenario it prints "PASS scenario" and exits 0.
 */
public final class Interop {
    /** Bounds every wait for the other side or a server-side condition. */
    static final long WAIT_SECONDS = 20;
    /** How long a wait that must not succeed is given. */
    static final long SHORT_MILLIS = 300;

    private static final PrintStream OUT = System.out;
    private static final BufferedReader IN =
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    private static String addr;
    private static final List<CuratorFramework> clients = new ArrayList<>();

    private Interop() {}

    /** Body is a scenario. */
    interface Body {
        void run() throws Exception;
    }

    public static void main(String[] args) {
        if (args.length != 3) {
            System.err.println("usage: java Interop <deadline-seconds> <host:port> <scenario>");
            System.exit(2);
        }
        watchdog(Long.parseLong(args[0]));
        addr = args[1];
        String name = args[2];
        Body body = switch (name) {
            case "mutex" -> InteropScenarios::mutex;
            case "selector" -> InteropScenarios::selector;
            case "rwlock" -> InteropScenarios::readWriteLock;
            case "latch" -> InteropScenarios::latch;
            case "barrier" -> InteropScenarios::barrier;
            case "double-barrier" -> InteropScenarios::doubleBarrier;
            case "queue" -> InteropScenarios::queue;
            default -> null;
        };
        if (body == null) {
            System.err.println("unknown scenario " + name);
            System.exit(2);
        }
        try {
            body.run();
            for (CuratorFramework c : clients) {
                c.close();
            }
        } catch (Throwable e) {
            say("FAIL %s", e);
            System.err.println("FAIL " + name + ": " + e);
            e.printStackTrace();
            System.err.flush();
            Runtime.getRuntime().halt(1);
        }
        say("PASS %s", name);
        Runtime.getRuntime().halt(0);
    }

    /** watchdog ends the process with status 3 once the deadline passes. */
    private static void watchdog(long seconds) {
        Thread w = new Thread(() -> {
            try {
                Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
            } catch (InterruptedException e) {
                return;
            }
            say("FAIL deadline of %ds passed", seconds);
            Helpers.printThreads();
            Runtime.getRuntime().halt(3);
        }, "watchdog");
        w.setDaemon(true);
        w.start();
    }

    /** say writes one line to the Go side. */
    static void say(String format, Object... args) {
        synchronized (OUT) {
            OUT.println(String.format(format, args));
            OUT.flush();
        }
    }

    /** hear reads the Go side's next line (the watchdog bounds the wait). */
    static String hear() throws Exception {
        String line = IN.readLine();
        Helpers.check(line != null, "the Go side closed stdin");
        return line;
    }

    /** expect reads the Go side's next line and requires it to be want. */
    static void expect(String want) throws Exception {
        Helpers.equal(want, hear(), "line from the Go side");
    }

    /** client starts a client and waits until it connects. */
    static CuratorFramework client() throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(addr)
                .retryPolicy(new ExponentialBackoffRetry(100, 5, 2000))
                .sessionTimeoutMs(15000)
                .connectionTimeoutMs(15000)
                .build();
        clients.add(c);
        c.start();
        Helpers.check(c.blockUntilConnected((int) WAIT_SECONDS, TimeUnit.SECONDS), "client did not connect within %ds", WAIT_SECONDS);
        return c;
    }

    /**
     * exclusive is the critical section both sides run under a lock: it
     * marks the section taken with an ephemeral node (which fails if another
     * holder is inside), then increments the counter with a read and an
     * unconditional write (an overlap would lose an update), then leaves.
     */
    static void exclusive(CuratorFramework c, String dir, String who) throws Exception {
        try {
            c.create().withMode(CreateMode.EPHEMERAL).forPath(dir + "/inside", Helpers.bytes(who));
        } catch (KeeperException.NodeExistsException e) {
            String other = Helpers.str(c.getData().forPath(dir + "/inside"));
            throw new AssertionError(who + " entered the critical section while " + other + " was in it");
        }
        int n = Integer.parseInt(Helpers.str(c.getData().forPath(dir + "/counter")));
        c.setData().forPath(dir + "/counter", Helpers.bytes(Integer.toString(n + 1)));
        c.delete().forPath(dir + "/inside");
    }
}
