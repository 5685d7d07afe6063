import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Helpers are the checks and small utilities both of test/curator's Java
 * programs use: TestCurator's (testdata/Session.java and its scenarios) and
 * TestInterop's (testdata/interop). The test compiles this file together
 * with each program's files.
 */
final class Helpers {
    private Helpers() {}

    /** check fails the scenario with the message unless ok holds. */
    static void check(boolean ok, String format, Object... args) {
        if (!ok) {
            throw new AssertionError(String.format(format, args));
        }
    }

    /** equal fails the scenario unless got equals want. */
    static void equal(Object want, Object got, String what) {
        if (!java.util.Objects.equals(want, got)) {
            throw new AssertionError(what + ": got " + got + ", want " + want);
        }
    }

    /**
     * parallel runs the tasks on their own threads and returns their
     * results in order, failing if any throws or runs past limitSeconds.
     */
    static <T> List<T> parallel(long limitSeconds, List<Callable<T>> tasks) throws Exception {
        ExecutorService ex = Executors.newFixedThreadPool(tasks.size());
        try {
            List<Future<T>> fs = new ArrayList<>();
            for (Callable<T> task : tasks) {
                fs.add(ex.submit(task));
            }
            List<T> res = new ArrayList<>();
            for (Future<T> f : fs) {
                try {
                    res.add(f.get(limitSeconds, TimeUnit.SECONDS));
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof Exception x) {
                        throw x;
                    }
                    if (e.getCause() instanceof Error x) {
                        throw x;
                    }
                    throw e;
                }
            }
            return res;
        } finally {
            ex.shutdownNow();
        }
    }

    /** bytes returns s in UTF-8. */
    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** str returns b decoded as UTF-8, or "null" for null. */
    static String str(byte[] b) {
        return b == null ? "null" : new String(b, StandardCharsets.UTF_8);
    }

    /** printThreads prints every thread's stack on stderr (past a deadline). */
    static void printThreads() {
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            System.err.println("thread " + e.getKey().getName());
            for (StackTraceElement f : e.getValue()) {
                System.err.println("\tat " + f);
            }
        }
        System.err.flush();
    }
}
