import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.atomic.PromotedToLock;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.nodes.GroupMember;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.recipes.queue.SimpleDistributedQueue;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.framework.recipes.shared.SharedCountListener;
import org.apache.curator.framework.recipes.shared.SharedCountReader;
import org.apache.curator.framework.recipes.shared.VersionedValue;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceCache;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceProvider;
import org.apache.curator.x.discovery.details.ServiceCacheListener;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;

/** RecipeScenarios covers barriers, counters, queues, nodes and discovery. */
final class RecipeScenarios {
    private RecipeScenarios() {}

    private static final long SECONDS = Session.WAIT_SECONDS;

    /** barriers: DistributedBarrier and a DistributedDoubleBarrier of three. */
    static void barriers() throws Exception {
        CuratorFramework[] cs = {Session.client("barrier"), Session.client("barrier"), Session.client("barrier")};
        DistributedBarrier a = new DistributedBarrier(cs[0], "/gate");
        DistributedBarrier b = new DistributedBarrier(cs[1], "/gate");
        a.setBarrier();
        Session.sync(cs[1], "/gate");
        Session.out("waitOnBarrier(300ms) while set -> %b", b.waitOnBarrier(300, TimeUnit.MILLISECONDS));
        ExecutorService ex = Executors.newCachedThreadPool();
        try {
            Future<Boolean> waiter = ex.submit(() -> b.waitOnBarrier(SECONDS, TimeUnit.SECONDS));
            a.removeBarrier();
            Session.out("waitOnBarrier after removeBarrier -> %b", waiter.get(2 * SECONDS, TimeUnit.SECONDS));

            AtomicInteger entered = new AtomicInteger();
            List<Future<Boolean>> members = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                DistributedDoubleBarrier d = new DistributedDoubleBarrier(cs[i], "/double", 3);
                Callable<Boolean> member = () -> {
                    boolean in = d.enter(SECONDS, TimeUnit.SECONDS);
                    if (in) {
                        entered.incrementAndGet();
                    }
                    return in && d.leave(SECONDS, TimeUnit.SECONDS);
                };
                if (i == 2) {
                    // Two members are waiting: none may have entered.
                    Session.waitUntil("two members at the double barrier", () -> {
                        Session.sync(cs[2], "/double");
                        return cs[2].checkExists().forPath("/double") != null
                                && cs[2].getChildren().forPath("/double").size() == 2;
                    });
                    Session.out("two of three members wait: entered=%d", entered.get());
                    Helpers.equal(0, entered.get(), "members entered before the third arrived");
                }
                members.add(ex.submit(member));
            }
            List<Boolean> res = new ArrayList<>();
            for (Future<Boolean> f : members) {
                res.add(f.get(3 * SECONDS, TimeUnit.SECONDS));
            }
            Session.out("double barrier enter and leave -> %s, entered=%d", res, entered.get());
            Helpers.equal(List.of(true, true, true), res, "double barrier results");
        } finally {
            ex.shutdownNow();
        }
    }

    /** sharedCount: trySetCount with a stale VersionedValue fails. */
    static void sharedCount() throws Exception {
        CuratorFramework ca = Session.client("shared");
        CuratorFramework cb = Session.client("shared");
        SharedCount a = new SharedCount(ca, "/count", 0);
        SharedCount b = new SharedCount(cb, "/count", 0);
        BlockingQueue<Integer> seenByB = new LinkedBlockingQueue<>();
        b.addListener(new SharedCountListener() {
            @Override
            public void countHasChanged(SharedCountReader r, int n) {
                seenByB.add(n);
            }

            @Override
            public void stateChanged(CuratorFramework c, ConnectionState s) {}
        });
        a.start();
        b.start();
        try {
            VersionedValue<Integer> stale = b.getVersionedValue();
            Session.out("initial: a=%d b=%d", a.getCount(), stale.getValue());
            Helpers.check(a.trySetCount(a.getVersionedValue(), 5), "trySetCount with the current version failed");
            Session.out("a trySetCount(current, 5) -> true");
            Session.out("b listener sees %d", Session.next(seenByB, "count change"));
            boolean ok = b.trySetCount(stale, 7);
            Session.out("b trySetCount(stale, 7) -> %b", ok);
            Helpers.check(!ok, "trySetCount with a stale version succeeded");
            Session.waitUntil("b's count catches up", () -> b.getCount() == 5);
            Helpers.check(b.trySetCount(b.getVersionedValue(), 7), "trySetCount with the fresh version failed");
            Session.out("b trySetCount(fresh, 7) -> true");
            Session.waitUntil("a sees 7", () -> a.getCount() == 7);
            a.setCount(9);
            Session.waitUntil("b sees 9", () -> b.getCount() == 9);
            Session.out("a setCount(9); both see %d %d", a.getCount(), b.getCount());
        } finally {
            a.close();
            b.close();
        }
    }

    /** atomicLong: concurrent increments from three clients add up. */
    static void atomicLong() throws Exception {
        final int each = 10;
        List<Callable<Integer>> tasks = new ArrayList<>();
        List<DistributedAtomicLong> longs = new ArrayList<>();
        List<CuratorFramework> cs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            cs.add(Session.client("atomic"));
            DistributedAtomicLong n = new DistributedAtomicLong(cs.get(i), "/n", new RetryNTimes(10, 10),
                    PromotedToLock.builder().lockPath("/n-lock").retryPolicy(new RetryNTimes(10, 10))
                            .timeout(SECONDS, TimeUnit.SECONDS).build());
            longs.add(n);
            tasks.add(() -> {
                for (int k = 0; k < each; k++) {
                    AtomicValue<Long> v = n.increment();
                    Helpers.check(v.succeeded(), "increment did not succeed");
                    Helpers.check(v.postValue() == v.preValue() + 1, "increment %d -> %d", v.preValue(), v.postValue());
                }
                return each;
            });
        }
        Helpers.parallel(3 * SECONDS, tasks);
        DistributedAtomicLong n = longs.get(0);
        Session.sync(cs.get(0), "/n");
        AtomicValue<Long> got = n.get();
        Session.out("3 clients x %d increments -> %d", each, got.postValue());
        Helpers.equal(30L, got.postValue(), "value");
        AtomicValue<Long> cas = n.compareAndSet(30L, 100L);
        Session.out("compareAndSet(30, 100) -> %b", cas.succeeded());
        Session.sync(cs.get(1), "/n");
        cas = longs.get(1).compareAndSet(30L, 5L);
        Session.out("compareAndSet(30, 5) -> %b, value %d", cas.succeeded(), cas.preValue());
        Helpers.check(!cas.succeeded(), "compareAndSet with a stale expectation succeeded");
        Session.out("decrement -> %d, add(11) -> %d", n.decrement().postValue(), n.add(11L).postValue());
        Session.sync(cs.get(2), "/n");
        Session.out("initialize on an existing value -> %b", longs.get(2).initialize(0L));
    }

    /** queues: SimpleDistributedQueue and DistributedQueue keep FIFO order. */
    static void queues() throws Exception {
        CuratorFramework producer = Session.client("queue");
        CuratorFramework consumer = Session.client("queue");
        SimpleDistributedQueue in = new SimpleDistributedQueue(producer, "/simple");
        SimpleDistributedQueue out = new SimpleDistributedQueue(consumer, "/simple");
        for (int i = 0; i < 10; i++) {
            Helpers.check(in.offer(Helpers.bytes("m" + i)), "offer failed");
        }
        List<String> got = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            byte[] b = out.poll(SECONDS, TimeUnit.SECONDS);
            Helpers.check(b != null, "queue item %d did not arrive", i);
            got.add(Helpers.str(b));
        }
        Session.out("SimpleDistributedQueue took %s", got);
        Session.out("poll on the empty queue -> %s", Helpers.str(out.poll()));

        QueueSerializer<String> ser = new QueueSerializer<>() {
            @Override
            public byte[] serialize(String s) {
                return Helpers.bytes(s);
            }

            @Override
            public String deserialize(byte[] b) {
                return Helpers.str(b);
            }
        };
        BlockingQueue<String> consumed = new LinkedBlockingQueue<>();
        QueueConsumer<String> qc = new QueueConsumer<>() {
            @Override
            public void consumeMessage(String m) {
                consumed.add(m);
            }

            @Override
            public void stateChanged(CuratorFramework c, ConnectionState s) {}
        };
        DistributedQueue<String> cq = QueueBuilder.builder(consumer, qc, ser, "/dq").buildQueue();
        DistributedQueue<String> pq = QueueBuilder.builder(producer, null, ser, "/dq").buildQueue();
        cq.start();
        pq.start();
        try {
            for (int i = 0; i < 5; i++) {
                pq.put("job" + i);
            }
            List<String> jobs = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                jobs.add(Session.next(consumed, "queued job"));
            }
            Session.out("DistributedQueue consumer got %s", jobs);
            Helpers.equal(List.of("job0", "job1", "job2", "job3", "job4"), jobs, "job order");
        } finally {
            pq.close();
            cq.close();
        }
    }

    /** nodes: an ephemeral PersistentNode comes back; GroupMember tracks members. */
    static void nodes() throws Exception {
        CuratorFramework owner = Session.client("nodes");
        CuratorFramework other = Session.client("nodes");
        PersistentNode pn = new PersistentNode(owner, CreateMode.EPHEMERAL, false, "/pn/member", Helpers.bytes("a"));
        pn.start();
        try {
            Helpers.check(pn.waitForInitialCreate(SECONDS, TimeUnit.SECONDS), "PersistentNode not created");
            Session.out("PersistentNode created at %s", pn.getActualPath());
            Session.sync(other, "/pn/member");
            Stat st = other.checkExists().forPath("/pn/member");
            Helpers.check(st != null && st.getEphemeralOwner() != 0, "the PersistentNode is not an ephemeral");
            other.delete().forPath("/pn/member");
            Session.out("other client deleted it; recreated with data %s", Helpers.str(waitForNode(other, "/pn/member")));
            pn.setData(Helpers.bytes("b"));
            Session.waitUntil("the new data", () -> {
                Session.sync(other, "/pn/member");
                return "b".equals(Helpers.str(other.getData().forPath("/pn/member")));
            });
            Session.out("setData reaches the other client");
        } finally {
            pn.close();
        }
        Session.sync(other, "/pn/member");
        Session.out("after close: exists=%b", other.checkExists().forPath("/pn/member") != null);

        GroupMember g1 = new GroupMember(owner, "/group", "m1", Helpers.bytes("one"));
        GroupMember g2 = new GroupMember(other, "/group", "m2", Helpers.bytes("two"));
        g1.start();
        g2.start();
        try {
            Session.waitUntil("both members see both", () -> g1.getCurrentMembers().size() == 2
                    && g2.getCurrentMembers().size() == 2);
            Session.out("m1 sees %s", members(g1));
            Session.out("m2 sees %s", members(g2));
            g1.close();
            Session.waitUntil("m2 sees m1 leave", () -> g2.getCurrentMembers().keySet().equals(Set.of("m2")));
            Session.out("after m1 left, m2 sees %s", members(g2));
        } finally {
            g1.close();
            g2.close();
        }
    }

    private static Map<String, String> members(GroupMember g) {
        Map<String, String> m = new TreeMap<>();
        g.getCurrentMembers().forEach((k, v) -> m.put(k, Helpers.str(v)));
        return m;
    }

    /** waitForNode waits, with exists watches, until path exists and returns its data. */
    private static byte[] waitForNode(CuratorFramework c, String path) throws Exception {
        for (int i = 0; i < 10; i++) {
            WatchScenarios.Recorder w = new WatchScenarios.Recorder();
            if (c.checkExists().usingWatcher(w).forPath(path) != null) {
                return c.getData().forPath(path);
            }
            w.next("creation of " + path);
        }
        throw new AssertionError(path + " was not recreated");
    }

    /** discovery: ServiceDiscovery registers, queries and unregisters instances. */
    static void discovery() throws Exception {
        CuratorFramework ca = Session.client("disco");
        CuratorFramework cb = Session.client("disco");
        ServiceDiscovery<String> reg = ServiceDiscoveryBuilder.builder(String.class).client(ca).basePath("/services")
                .serializer(new JsonInstanceSerializer<>(String.class)).build();
        ServiceDiscovery<String> query = ServiceDiscoveryBuilder.builder(String.class).client(cb).basePath("/services")
                .serializer(new JsonInstanceSerializer<>(String.class)).build();
        reg.start();
        query.start();
        try {
            ServiceInstance<String> web1 = instance("web", "web-1", 8080, "blue");
            ServiceInstance<String> web2 = instance("web", "web-2", 8081, "green");
            ServiceInstance<String> db = instance("db", "db-1", 5432, "primary");
            reg.registerService(web1);
            reg.registerService(web2);
            reg.registerService(db);
            Session.sync(cb, "/services");
            List<String> names = new ArrayList<>(query.queryForNames());
            Collections.sort(names);
            Session.out("services %s", names);
            Session.out("web instances %s", instances(query, "web"));
            ServiceInstance<String> one = query.queryForInstance("db", "db-1");
            Session.out("db-1 -> %s:%d %s", one.getAddress(), one.getPort(), one.getPayload());
            ServiceProvider<String> provider = query.serviceProviderBuilder().serviceName("web").build();
            ServiceCache<String> cache = query.serviceCacheBuilder().name("web").build();
            BlockingQueue<String> changes = new LinkedBlockingQueue<>();
            cache.addListener(new ServiceCacheListener() {
                @Override
                public void cacheChanged() {
                    changes.add("changed");
                }

                @Override
                public void stateChanged(CuratorFramework c, ConnectionState s) {}
            });
            provider.start();
            cache.start();
            try {
                Session.out("ServiceProvider instances %s", ids(provider.getAllInstances()));
                Helpers.check(provider.getInstance() != null, "ServiceProvider gave no instance");
                Session.out("ServiceCache instances %s", ids(cache.getInstances()));
                reg.registerService(instance("web", "web-3", 8082, "red"));
                Session.next(changes, "service cache change");
                Session.waitUntil("ServiceCache sees web-3", () -> cache.getInstances().size() == 3);
                Session.out("after registering web-3: ServiceCache %s", ids(cache.getInstances()));
            } finally {
                cache.close();
                provider.close();
            }
            reg.unregisterService(web2);
            Session.sync(cb, "/services");
            Session.out("after unregistering web-2: %s", instances(query, "web"));
            Session.close(ca);
            Session.sync(cb, "/services");
            Session.out("after the registering session closed: web %s, db %s", instances(query, "web"), instances(query, "db"));
        } finally {
            query.close();
        }
    }

    private static List<String> ids(java.util.Collection<ServiceInstance<String>> is) {
        List<String> s = new ArrayList<>();
        for (ServiceInstance<String> i : is) {
            s.add(i.getId());
        }
        Collections.sort(s);
        return s;
    }

    private static ServiceInstance<String> instance(String name, String id, int port, String payload) throws Exception {
        return ServiceInstance.<String>builder().name(name).id(id).address("127.0.0.1").port(port).payload(payload).build();
    }

    private static List<String> instances(ServiceDiscovery<String> d, String name) throws Exception {
        List<String> s = new ArrayList<>();
        for (ServiceInstance<String> i : d.queryForInstances(name)) {
            s.add(i.getId() + "@" + i.getAddress() + ":" + i.getPort() + "/" + i.getPayload() + "/" + i.getServiceType());
        }
        Collections.sort(s);
        return s;
    }
}
