import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.cache.TreeCache;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

/** WatchScenarios covers one-time and persistent watches and CuratorCache. */
final class WatchScenarios {
    private WatchScenarios() {}

    /** Recorder is a Watcher that queues the events it sees as "type path". */
    static final class Recorder implements Watcher {
        final BlockingQueue<String> events = new LinkedBlockingQueue<>();

        @Override
        public void process(WatchedEvent e) {
            if (e.getType() != Event.EventType.None) {
                events.add(e.getType() + " " + e.getPath());
            }
        }

        String next(String what) throws InterruptedException {
            return Session.next(events, what);
        }
    }

    /** oneTime: usingWatcher watches fire once, for data, exists and children. */
    static void oneTime() throws Exception {
        CuratorFramework w = Session.client("watch");
        CuratorFramework m = Session.client("watch");
        m.create().forPath("/w", Helpers.bytes("0"));
        Session.sync(w, "/w");

        Recorder a = new Recorder();
        Session.out("getData with watcher a -> %s", Helpers.str(w.getData().usingWatcher(a).forPath("/w")));
        m.setData().forPath("/w", Helpers.bytes("1"));
        Session.out("watcher a: %s", a.next("data watch"));
        m.setData().forPath("/w", Helpers.bytes("2"));
        Session.sync(w, "/w");
        Recorder b = new Recorder();
        Session.out("getData with watcher b -> %s", Helpers.str(w.getData().usingWatcher(b).forPath("/w")));
        m.setData().forPath("/w", Helpers.bytes("3"));
        Session.out("watcher b: %s", b.next("second data watch"));
        // Notifications reach a session in order: had a fired for "2" or
        // "3", it would have been queued before b's event.
        Helpers.check(a.events.isEmpty(), "one-time watcher a fired again: %s", a.events);
        Session.out("watcher a fired once");

        Recorder c = new Recorder();
        Session.out("checkExists /w2 with watcher -> %s", w.checkExists().usingWatcher(c).forPath("/w2"));
        m.create().forPath("/w2", Helpers.bytes("x"));
        Session.out("exists watcher: %s", c.next("exists watch"));

        BlockingQueue<String> cw = new LinkedBlockingQueue<>();
        CuratorWatcher curatorWatcher = e -> cw.add(e.getType() + " " + e.getPath());
        Session.out("getChildren /w with CuratorWatcher -> %s", w.getChildren().usingWatcher(curatorWatcher).forPath("/w"));
        m.create().forPath("/w/c1");
        Session.out("CuratorWatcher: %s", Session.next(cw, "children watch"));

        Session.sync(w, "/w2");
        Recorder d = new Recorder();
        Session.out("getData /w2 with watcher -> %s", Helpers.str(w.getData().usingWatcher(d).forPath("/w2")));
        m.delete().forPath("/w2");
        Session.out("data watcher on delete: %s", d.next("delete watch"));

        m.create().forPath("/w3");
        Session.sync(w, "/w3");
        Recorder ch = new Recorder();
        Session.out("getChildren /w3 with watcher -> %s", w.getChildren().usingWatcher(ch).forPath("/w3"));
        m.delete().forPath("/w3");
        Session.out("children watcher on delete: %s", ch.next("children watch on delete"));

        BlockingQueue<String> listened = new LinkedBlockingQueue<>();
        w.getCuratorListenable().addListener((client, event) -> {
            if (event.getWatchedEvent() != null && event.getWatchedEvent().getType() != Watcher.Event.EventType.None) {
                listened.add(event.getType() + " " + event.getWatchedEvent().getType() + " " + event.getPath());
            }
        });
        Session.out("getData watched() -> %s", Helpers.str(w.getData().watched().forPath("/w")));
        m.setData().forPath("/w", Helpers.bytes("3b"));
        Session.out("CuratorListener: %s", Session.next(listened, "watched() event"));

        Recorder r = new Recorder();
        w.getData().usingWatcher(r).forPath("/w");
        w.watchers().remove(r).ofType(Watcher.WatcherType.Data).forPath("/w");
        Session.out("removed watcher: %s", r.next("watch removal"));
        Session.out("remove it again -> %s", Session.fails(KeeperException.Code.NOWATCHER, "second removal",
                () -> w.watchers().remove(r).ofType(Watcher.WatcherType.Data).forPath("/w")));
        Recorder s = new Recorder();
        w.getData().usingWatcher(s).forPath("/w");
        m.setData().forPath("/w", Helpers.bytes("4"));
        Session.out("watcher set after the removal: %s", s.next("data watch after removal"));
        Helpers.check(r.events.isEmpty(), "a removed watcher fired: %s", r.events);
    }

    /** cache: CuratorCache sees the initial tree, then each change in order. */
    static void cache() throws Exception {
        CuratorFramework k = Session.client("cache");
        CuratorFramework m = Session.client("cache");
        m.create().creatingParentsIfNeeded().forPath("/c/pre", Helpers.bytes("p"));
        m.setData().forPath("/c", Helpers.bytes("root"));
        Session.sync(k, "/c");

        BlockingQueue<String> events = new LinkedBlockingQueue<>();
        CuratorCache cache = CuratorCache.build(k, "/c");
        cache.listenable().addListener(CuratorCacheListener.builder()
                .forAll((type, old, data) -> events.add(describe(type, old, data)))
                .forInitialized(() -> events.add("initialized"))
                .build());
        cache.start();
        try {
            printInitial(events, "initial cache events");
            Session.Body[] steps = {
                () -> m.create().forPath("/c/a", Helpers.bytes("1")),
                () -> m.setData().forPath("/c/a", Helpers.bytes("2")),
                () -> m.create().forPath("/c/a/b", Helpers.bytes("x")),
                () -> m.setData().forPath("/c", Helpers.bytes("root2")),
                () -> m.delete().forPath("/c/a/b"),
                () -> m.delete().forPath("/c/a"),
                () -> m.create().forPath("/c/z", Helpers.bytes("end")),
            };
            runSteps(steps, events, "cache event");
            Helpers.check(events.isEmpty(), "unexpected cache events %s", events);
            List<String> contents = new ArrayList<>();
            cache.stream().forEach(cd -> contents.add(cd.getPath() + "=" + Helpers.str(cd.getData())));
            Collections.sort(contents);
            Session.out("cache contents %s", contents);
        } finally {
            cache.close();
        }
    }

    /** treeCache: the older TreeCache, built on one-time watches, sees the same. */
    @SuppressWarnings("deprecation") // TreeCache is deprecated in favour of CuratorCache, not gone
    static void treeCache() throws Exception {
        CuratorFramework k = Session.client("treecache");
        CuratorFramework m = Session.client("treecache");
        m.create().creatingParentsIfNeeded().forPath("/t/pre", Helpers.bytes("p"));
        Session.sync(k, "/t");
        BlockingQueue<String> events = new LinkedBlockingQueue<>();
        TreeCache cache = TreeCache.newBuilder(k, "/t").build();
        cache.getListenable().addListener((client, e) -> {
            switch (e.getType()) {
                case NODE_ADDED, NODE_UPDATED, NODE_REMOVED -> events.add(e.getType() + " " + e.getData().getPath()
                        + " data=" + Helpers.str(e.getData().getData()));
                case INITIALIZED -> events.add("initialized");
                default -> { }
            }
        });
        cache.start();
        try {
            printInitial(events, "initial tree cache events");
            Session.Body[] steps = {
                () -> m.create().forPath("/t/a", Helpers.bytes("1")),
                () -> m.setData().forPath("/t/a", Helpers.bytes("2")),
                () -> m.create().forPath("/t/a/b", Helpers.bytes("x")),
                () -> m.delete().forPath("/t/a/b"),
                () -> m.delete().forPath("/t/a"),
                () -> m.setData().forPath("/t", Helpers.bytes("root")),
            };
            runSteps(steps, events, "tree cache event");
            Session.out("current children of /t: %s", new java.util.TreeSet<>(cache.getCurrentChildren("/t").keySet()));
        } finally {
            cache.close();
        }
    }

    private static String describe(CuratorCacheListener.Type type, ChildData old, ChildData data) {
        StringBuilder b = new StringBuilder(type.toString());
        ChildData any = data != null ? data : old;
        b.append(' ').append(any.getPath());
        if (data != null) {
            b.append(" data=").append(Helpers.str(data.getData()));
        }
        if (old != null) {
            b.append(" old=").append(Helpers.str(old.getData()));
        }
        return b.toString();
    }

    /** persistent: PERSISTENT_RECURSIVE and PERSISTENT watches keep firing. */
    static void persistent() throws Exception {
        CuratorFramework p = Session.client("persist");
        CuratorFramework m = Session.client("persist");
        m.create().forPath("/r", Helpers.bytes("r"));
        m.create().forPath("/flat", Helpers.bytes("f"));
        Session.sync(p, "/");

        Recorder rec = new Recorder();
        p.watchers().add().withMode(AddWatchMode.PERSISTENT_RECURSIVE).usingWatcher(rec).forPath("/r");
        Session.Body[] steps = {
            () -> m.create().forPath("/r/a", Helpers.bytes("1")),
            () -> m.setData().forPath("/r/a", Helpers.bytes("2")),
            () -> m.create().forPath("/r/a/b"),
            () -> m.setData().forPath("/r", Helpers.bytes("r2")),
            () -> m.delete().forPath("/r/a/b"),
            () -> m.delete().forPath("/r/a"),
            () -> m.create().forPath("/r/z"),
        };
        for (Session.Body step : steps) {
            step.run();
            Session.out("recursive: %s", rec.next("persistent recursive event"));
        }

        Recorder flat = new Recorder();
        p.watchers().add().withMode(AddWatchMode.PERSISTENT).usingWatcher(flat).forPath("/flat");
        m.create().forPath("/flat/x");
        Session.out("persistent: %s", flat.next("persistent event"));
        m.setData().forPath("/flat", Helpers.bytes("f2"));
        Session.out("persistent: %s", flat.next("persistent event"));
        m.setData().forPath("/flat/x", Helpers.bytes("x2"));
        m.setData().forPath("/flat", Helpers.bytes("f3"));
        // A change below /flat must not fire the non-recursive watch: the
        // next event is the later change of /flat itself.
        Session.out("persistent: %s", flat.next("persistent event"));

        // (The 3.8 client cannot remove a persistent watch: it looks only
        // at standard watches and throws NoWatcherException.)
        Helpers.check(rec.events.isEmpty(), "unexpected recursive events %s", rec.events);
    }

    /**
     * printInitial prints, sorted, a cache's events up to "initialized"
     * (their order is not defined), then "initialized".
     */
    static void printInitial(java.util.concurrent.BlockingQueue<String> events, String what) throws Exception {
        List<String> initial = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            String e = Session.next(events, what);
            if (e.equals("initialized")) {
                break;
            }
            initial.add(e);
        }
        Collections.sort(initial);
        for (String e : initial) {
            Session.out("initial: %s", e);
        }
        Session.out("initialized");
    }

    /** runSteps runs each step and prints the one event it must cause. */
    static void runSteps(Session.Body[] steps, java.util.concurrent.BlockingQueue<String> events, String what) throws Exception {
        for (Session.Body step : steps) {
            step.run();
            Session.out("event: %s", Session.next(events, what));
        }
    }
}
