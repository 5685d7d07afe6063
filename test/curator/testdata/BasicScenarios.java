import static org.apache.zookeeper.KeeperException.Code.BADVERSION;
import static org.apache.zookeeper.KeeperException.Code.INVALIDACL;
import static org.apache.zookeeper.KeeperException.Code.NOAUTH;
import static org.apache.zookeeper.KeeperException.Code.NODEEXISTS;
import static org.apache.zookeeper.KeeperException.Code.NONODE;
import static org.apache.zookeeper.KeeperException.Code.NOTEMPTY;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.regex.Pattern;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;

/** BasicScenarios covers the framework's own operations and sessions. */
final class BasicScenarios {
    private BasicScenarios() {}

    /** PROTECTED matches a protected ephemeral sequential node's path. */
    private static final Pattern PROTECTED =
            Pattern.compile("/crud/eph/_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-node-[0-9]{10}");

    /** connection: a ConnectionStateListener sees CONNECTED; close ends the session. */
    static void connection() throws Exception {
        List<ConnectionState> states = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch connected = new CountDownLatch(1);
        CuratorFramework c = Session.builder("connection").build();
        c.getConnectionStateListenable().addListener((client, state) -> {
            states.add(state);
            if (state == ConnectionState.CONNECTED) {
                connected.countDown();
            }
        });
        Session.start(c);
        Session.await(connected, "CONNECTED state");
        Session.out("connection states %s", states);
        Helpers.equal(List.of(ConnectionState.CONNECTED), new ArrayList<>(states), "connection states");
        Helpers.check(c.getZookeeperClient().isConnected(), "isConnected is false");
        ZooKeeper zk = c.getZookeeperClient().getZooKeeper();
        Session.out("zookeeper state %s, namespace %s", zk.getState(), c.getNamespace());
        Helpers.check(zk.getSessionId() != 0, "session id is 0");
        Session.close(c);
        Session.out("after close: zookeeper state %s", zk.getState());
        Helpers.equal(ZooKeeper.States.CLOSED, zk.getState(), "state after close");
    }

    /** crud: creates, reads, versioned writes and deletes under a namespace. */
    static void crud() throws Exception {
        CuratorFramework c = Session.client("app");
        CuratorFramework raw = Session.client(null);

        String p = c.create().creatingParentsIfNeeded().forPath("/crud/a/b/c", Helpers.bytes("v0"));
        Session.out("create creatingParentsIfNeeded -> %s", p);
        Helpers.equal("/crud/a/b/c", p, "created path");
        Session.sync(raw, "/app/crud/a/b/c");
        Stat rs = raw.checkExists().forPath("/app/crud/a/b/c");
        Helpers.check(rs != null, "the namespaced node is not at /app/crud/a/b/c");
        Session.out("un-namespaced client sees /app/crud/a/b/c: %s", Helpers.str(raw.getData().forPath("/app/crud/a/b/c")));
        Session.out("parent /crud/a data %s", Helpers.str(c.getData().forPath("/crud/a")));

        Stat st = new Stat();
        byte[] d = c.getData().storingStatIn(st).forPath(p);
        Session.out("getData %s: version=%d dataLength=%d numChildren=%d ephemeralOwner=%d",
                Helpers.str(d), st.getVersion(), st.getDataLength(), st.getNumChildren(), st.getEphemeralOwner());
        Helpers.equal("v0", Helpers.str(d), "data");
        Stat s1 = c.setData().withVersion(0).forPath(p, Helpers.bytes("v1"));
        Session.out("setData withVersion(0) -> version=%d", s1.getVersion());
        Helpers.equal(1, s1.getVersion(), "version after setData");
        Session.out("setData withVersion(0) again -> %s",
                Session.fails(BADVERSION, "stale setData", () -> c.setData().withVersion(0).forPath(p, Helpers.bytes("x"))));
        Session.out("setData any version -> version=%d", c.setData().forPath(p, Helpers.bytes("v2")).getVersion());
        Session.out("create existing -> %s", Session.fails(NODEEXISTS, "create existing", () -> c.create().forPath(p)));
        Session.out("create without parents -> %s",
                Session.fails(NONODE, "create without parent", () -> c.create().forPath("/crud/missing/x")));
        Session.out("checkExists missing -> %s", c.checkExists().forPath("/crud/missing"));
        Helpers.check(c.checkExists().forPath("/crud/missing") == null, "checkExists of a missing node is not null");

        c.create().forPath("/crud/a/b2");
        c.create().forPath("/crud/a/b1", Helpers.bytes("x"));
        List<String> kids = new ArrayList<>(c.getChildren().forPath("/crud/a"));
        Collections.sort(kids);
        Session.out("getChildren /crud/a -> %s", kids);
        Helpers.equal(List.of("b", "b1", "b2"), kids, "children");
        Stat ps = c.checkExists().forPath("/crud/a");
        Session.out("checkExists /crud/a: numChildren=%d cversion=%d version=%d", ps.getNumChildren(), ps.getCversion(), ps.getVersion());

        long session = c.getZookeeperClient().getZooKeeper().getSessionId();
        for (int i = 0; i < 2; i++) {
            String e = c.create().creatingParentsIfNeeded().withProtection()
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath("/crud/eph/node-", Helpers.bytes("e"));
            Helpers.check(PROTECTED.matcher(e).matches(), "protected ephemeral sequential path %s", e);
            Stat es = c.checkExists().forPath(e);
            Helpers.check(es != null && es.getEphemeralOwner() == session, "%s: ephemeralOwner is not the session", e);
            Session.out("withProtection EPHEMERAL_SEQUENTIAL -> %s (owned by the session)",
                    e.replaceAll("_c_[0-9a-f-]{36}-", "_c_<uuid>-"));
        }
        String seq = c.create().withMode(CreateMode.PERSISTENT_SEQUENTIAL).forPath("/crud/seq-", Helpers.bytes("s"));
        Session.out("PERSISTENT_SEQUENTIAL -> %s", seq);

        c.create().creatingParentContainersIfNeeded().forPath("/crud/box/item");
        Session.out("creatingParentContainersIfNeeded parent ephemeralOwner=%#x",
                c.checkExists().forPath("/crud/box").getEphemeralOwner());
        c.create().withTtl(60000).withMode(CreateMode.PERSISTENT_WITH_TTL).forPath("/crud/ttl");
        Session.out("PERSISTENT_WITH_TTL ephemeralOwner=%#x", c.checkExists().forPath("/crud/ttl").getEphemeralOwner());

        Stat cs = new Stat();
        c.create().storingStatIn(cs).forPath("/crud/stat", Helpers.bytes("abc"));
        Session.out("create storingStatIn: %s", stat(cs));
        c.create().orSetData().forPath("/crud/upsert", Helpers.bytes("1"));
        c.create().orSetData().forPath("/crud/upsert", Helpers.bytes("2"));
        Stat us = new Stat();
        Session.out("create orSetData twice -> %s %s", Helpers.str(c.getData().storingStatIn(us).forPath("/crud/upsert")), stat(us));
        c.create().idempotent().forPath("/crud/idem", Helpers.bytes("d"));
        c.create().idempotent().forPath("/crud/idem", Helpers.bytes("d"));
        Session.out("create idempotent twice -> ok; with other data -> %s", Session.fails(NODEEXISTS, "idempotent create",
                () -> c.create().idempotent().forPath("/crud/idem", Helpers.bytes("e"))));
        c.createContainers("/crud/containers/x");
        Session.out("createContainers -> %s", c.getChildren().forPath("/crud/containers"));
        byte[] big = new byte[900 * 1024];
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) (i * 31 + i / 7);
        }
        c.create().forPath("/crud/big", big);
        Stat bs = new Stat();
        byte[] back = c.getData().storingStatIn(bs).forPath("/crud/big");
        Helpers.check(java.util.Arrays.equals(big, back), "900 KiB of data did not round-trip");
        Session.out("900 KiB node: dataLength=%d, read back equal", bs.getDataLength());
        Stat gs = new Stat();
        List<String> ck = new ArrayList<>(c.getChildren().storingStatIn(gs).forPath("/crud"));
        Collections.sort(ck);
        Session.out("getChildren storingStatIn /crud -> %s %s", ck, stat(gs));
        Session.out("negotiated session timeout %d", c.getZookeeperClient().getZooKeeper().getSessionTimeout());

        BlockingQueue<CuratorEvent> bg = new LinkedBlockingQueue<>();
        c.create().inBackground((client, event) -> bg.add(event)).forPath(p);
        CuratorEvent ev = Session.next(bg, "background create");
        Session.out("background create existing -> %s %s %s", ev.getType(), KeeperException.Code.get(ev.getResultCode()), ev.getPath());
        Helpers.equal(NODEEXISTS.intValue(), ev.getResultCode(), "background create result");
        c.getData().inBackground((client, event) -> bg.add(event)).forPath(p);
        ev = Session.next(bg, "background getData");
        Session.out("background getData -> %s %s %s version=%d", ev.getType(),
                KeeperException.Code.get(ev.getResultCode()), Helpers.str(ev.getData()), ev.getStat().getVersion());
        c.getChildren().inBackground((client, event) -> bg.add(event)).forPath("/crud");
        ev = Session.next(bg, "background getChildren");
        List<String> bk = new ArrayList<>(ev.getChildren());
        Collections.sort(bk);
        Session.out("background getChildren /crud -> %s %s", KeeperException.Code.get(ev.getResultCode()), bk);

        Session.out("delete withVersion(7) -> %s",
                Session.fails(BADVERSION, "delete with bad version", () -> c.delete().withVersion(7).forPath(p)));
        Session.out("delete non-empty -> %s", Session.fails(NOTEMPTY, "delete non-empty", () -> c.delete().forPath("/crud/a")));
        Session.out("delete missing -> %s", Session.fails(NONODE, "delete missing", () -> c.delete().forPath("/crud/missing")));
        c.delete().quietly().forPath("/crud/missing");
        c.delete().withVersion(2).forPath(p);
        c.delete().guaranteed().deletingChildrenIfNeeded().forPath("/crud");
        Session.out("after guaranteed deletingChildrenIfNeeded: /crud exists=%b", c.checkExists().forPath("/crud") != null);
        Helpers.check(c.checkExists().forPath("/crud") == null, "/crud survived its recursive delete");
        Session.sync(raw, "/app");
        Session.out("un-namespaced client: /app children %s", raw.getChildren().forPath("/app"));
    }

    /**
     * stat formats the fields of st that do not depend on time or zxids,
     * and how its zxids and times relate: ctime equals mtime when one txn
     * set both, else mtime is not earlier (two txns may share a
     * millisecond on a fast server, so their equality is not compared).
     */
    static String stat(Stat st) {
        boolean oneTxn = st.getCzxid() == st.getMzxid();
        return String.format("version=%d cversion=%d aversion=%d dataLength=%d numChildren=%d"
                + " czxid==mzxid:%b pzxid==czxid:%b %s",
                st.getVersion(), st.getCversion(), st.getAversion(), st.getDataLength(), st.getNumChildren(),
                oneTxn, st.getPzxid() == st.getCzxid(),
                oneTxn ? "ctime==mtime:" + (st.getCtime() == st.getMtime())
                        : "ctime<=mtime:" + (st.getCtime() <= st.getMtime()));
    }

    /** transaction: a multi that succeeds and one that fails, per-op results. */
    static void transaction() throws Exception {
        CuratorFramework c = Session.client("tx");
        c.create().forPath("/t", Helpers.bytes("t0"));
        List<CuratorOp> ops = List.of(
                c.transactionOp().create().forPath("/t/a", Helpers.bytes("a")),
                c.transactionOp().create().withMode(CreateMode.PERSISTENT_SEQUENTIAL).forPath("/t/s-", Helpers.bytes("s")),
                c.transactionOp().setData().withVersion(0).forPath("/t", Helpers.bytes("t1")),
                c.transactionOp().check().withVersion(0).forPath("/t/a"),
                c.transactionOp().create().forPath("/t/b"),
                c.transactionOp().delete().forPath("/t/b"),
                c.transactionOp().create().withTtl(60000).withMode(CreateMode.PERSISTENT_WITH_TTL).forPath("/t/ttl"),
                c.transactionOp().create().withMode(CreateMode.CONTAINER).forPath("/t/box"),
                c.transactionOp().create().withMode(CreateMode.EPHEMERAL).withACL(ZooDefs.Ids.READ_ACL_UNSAFE)
                        .forPath("/t/ro", Helpers.bytes("ro")));
        Session.out("transaction of %d ops:", ops.size());
        for (CuratorTransactionResult r : c.transaction().forOperations(ops)) {
            Session.out("  %s", describe(r));
            Helpers.equal(0, r.getError(), "op error");
        }
        Session.out("after: /t=%s /t/a=%s /t/b exists=%b", Helpers.str(c.getData().forPath("/t")),
                Helpers.str(c.getData().forPath("/t/a")), c.checkExists().forPath("/t/b") != null);
        Session.out("after: /t/ro acl %s ephemeral=%b", acls(c.getACL().forPath("/t/ro")),
                c.checkExists().forPath("/t/ro").getEphemeralOwner() != 0);

        List<CuratorOp> many = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            many.add(c.transactionOp().create().forPath(String.format("/t/many/n%03d", i), Helpers.bytes("v" + i)));
        }
        c.create().forPath("/t/many");
        List<CuratorTransactionResult> mr = c.transaction().forOperations(many);
        List<String> mk = c.getChildren().forPath("/t/many");
        Session.out("transaction of 200 creates -> %d results, last %s; %d children",
                mr.size(), mr.get(mr.size() - 1).getResultPath(), mk.size());
        Helpers.equal(200, mk.size(), "children created by the multi");

        List<CuratorOp> bad = List.of(
                c.transactionOp().create().forPath("/t/c", Helpers.bytes("c")),
                c.transactionOp().setData().withVersion(5).forPath("/t/a", Helpers.bytes("x")),
                c.transactionOp().delete().forPath("/t/a"));
        try {
            c.transaction().forOperations(bad);
            throw new AssertionError("a transaction with a stale version succeeded");
        } catch (KeeperException e) {
            Session.out("failing transaction -> %s", e.code());
            Helpers.equal(BADVERSION, e.code(), "failing transaction");
            for (OpResult r : e.getResults()) {
                Session.out("  %s", describe(r));
            }
        }
        BlockingQueue<CuratorEvent> bg = new LinkedBlockingQueue<>();
        c.transaction().inBackground((client, event) -> bg.add(event)).forOperations(List.of(
                c.transactionOp().check().withVersion(0).forPath("/t/a"),
                c.transactionOp().create().forPath("/t/a"),
                c.transactionOp().create().forPath("/t/d")));
        CuratorEvent ev = Session.next(bg, "background transaction");
        Session.out("failing background transaction -> %s %s", ev.getType(), KeeperException.Code.get(ev.getResultCode()));
        for (CuratorTransactionResult r : ev.getOpResults()) {
            Session.out("  %s", describe(r));
        }
        Session.out("after failures: /t/c exists=%b /t/d exists=%b /t/a=%s", c.checkExists().forPath("/t/c") != null,
                c.checkExists().forPath("/t/d") != null, Helpers.str(c.getData().forPath("/t/a")));
        Helpers.check(c.checkExists().forPath("/t/c") == null, "a failed transaction's create took effect");
    }

    private static String describe(CuratorTransactionResult r) {
        Stat s = r.getResultStat();
        return String.format("%s %s -> path=%s stat=%s error=%s", r.getType(), r.getForPath(), r.getResultPath(),
                s == null ? "none" : "version " + s.getVersion(), KeeperException.Code.get(r.getError()));
    }

    private static String describe(OpResult r) {
        if (r instanceof OpResult.ErrorResult e) {
            return "ErrorResult " + KeeperException.Code.get(e.getErr());
        }
        return r.getClass().getSimpleName();
    }

    /** acl: digest ACLs with several identities, authorization() on the builder. */
    static void acl() throws Exception {
        String alice = DigestAuthenticationProvider.generateDigest("alice:secret");
        String bob = DigestAuthenticationProvider.generateDigest("bob:pw");
        CuratorFramework ca = authed("alice:secret");
        CuratorFramework cb = authed("bob:pw");
        CuratorFramework wrong = authed("alice:wrong");
        CuratorFramework sup = authed("super:test");
        CuratorFramework anon = Session.client("acl");

        List<ACL> acl = List.of(
                new ACL(ZooDefs.Perms.ALL, new Id("digest", alice)),
                new ACL(ZooDefs.Perms.READ, new Id("digest", bob)));
        ca.create().withACL(acl).forPath("/secret", Helpers.bytes("s0"));
        Session.out("getACL /secret -> %s", acls(ca.getACL().forPath("/secret")));
        for (CuratorFramework c : List.of(cb, wrong, sup, anon)) {
            Session.sync(c, "/secret");
        }
        Session.out("anonymous getData -> %s", Session.fails(NOAUTH, "anonymous read", () -> anon.getData().forPath("/secret")));
        Session.out("anonymous setData -> %s",
                Session.fails(NOAUTH, "anonymous write", () -> anon.setData().forPath("/secret", Helpers.bytes("x"))));
        Session.out("anonymous create child -> %s",
                Session.fails(NOAUTH, "anonymous create", () -> anon.create().forPath("/secret/x")));
        Session.out("wrong password getData -> %s",
                Session.fails(NOAUTH, "wrong password read", () -> wrong.getData().forPath("/secret")));
        Session.out("bob getData -> %s", Helpers.str(cb.getData().forPath("/secret")));
        Session.out("bob setData -> %s",
                Session.fails(NOAUTH, "bob write", () -> cb.setData().forPath("/secret", Helpers.bytes("x"))));
        Session.out("super getData -> %s", Helpers.str(sup.getData().forPath("/secret")));
        Session.out("alice setData -> version=%d", ca.setData().forPath("/secret", Helpers.bytes("s1")).getVersion());
        ca.create().forPath("/secret/child");
        Session.out("alice setACL withVersion(5) -> %s", Session.fails(BADVERSION, "stale setACL",
                () -> ca.setACL().withVersion(5).withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath("/secret")));
        Session.out("bob setACL -> %s", Session.fails(NOAUTH, "bob setACL",
                () -> cb.setACL().withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath("/secret")));
        Stat as = ca.setACL().withVersion(0).withACL(ZooDefs.Ids.READ_ACL_UNSAFE).forPath("/secret");
        Session.out("alice setACL withVersion(0) to world read -> aversion=%d", as.getAversion());
        Session.out("alice setACL again -> %s", Session.fails(NOAUTH, "setACL without ADMIN",
                () -> ca.setACL().withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath("/secret")));
        Session.sync(anon, "/secret");
        Session.out("anonymous getData after setACL -> %s", Helpers.str(anon.getData().forPath("/secret")));

        ca.create().withACL(ZooDefs.Ids.CREATOR_ALL_ACL).forPath("/mine", Helpers.bytes("m"));
        Session.out("CREATOR_ALL_ACL -> %s", acls(ca.getACL().forPath("/mine")));
        Helpers.equal(List.of(new ACL(ZooDefs.Perms.ALL, new Id("digest", alice))), ca.getACL().forPath("/mine"), "CREATOR_ALL_ACL");
        Session.out("anonymous create with CREATOR_ALL_ACL -> %s", Session.fails(INVALIDACL, "anonymous creator ACL",
                () -> anon.create().withACL(ZooDefs.Ids.CREATOR_ALL_ACL).forPath("/theirs")));
        Session.sync(cb, "/mine");
        Session.out("bob getData /mine -> %s", Session.fails(NOAUTH, "bob read", () -> cb.getData().forPath("/mine")));
    }

    private static CuratorFramework authed(String userPassword) throws InterruptedException {
        return Session.start(Session.builder("acl").authorization("digest", Helpers.bytes(userPassword)).build());
    }

    private static String acls(List<ACL> list) {
        List<String> s = new ArrayList<>();
        for (ACL a : list) {
            s.add(a.getId().getScheme() + ":" + a.getId().getId() + ":" + a.getPerms());
        }
        return s.toString();
    }

    /** session: closing a client removes its ephemerals for everyone. */
    static void session() throws Exception {
        CuratorFramework x = Session.client("sess");
        CuratorFramework y = Session.client("sess");
        x.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath("/s/e1", Helpers.bytes("1"));
        x.create().withMode(CreateMode.EPHEMERAL).forPath("/s/e2");
        x.create().forPath("/s/p");
        Session.sync(y, "/s");
        BlockingQueue<WatchedEvent> events = new LinkedBlockingQueue<>();
        Stat st = y.checkExists().usingWatcher((Watcher) events::add).forPath("/s/e1");
        Helpers.check(st != null && st.getEphemeralOwner() != 0, "/s/e1 is not an ephemeral seen by the other client");
        List<String> kids = new ArrayList<>(y.getChildren().forPath("/s"));
        Collections.sort(kids);
        Session.out("other client sees %s", kids);
        Session.out("create under an ephemeral -> %s", Session.fails(KeeperException.Code.NOCHILDRENFOREPHEMERALS,
                "child of an ephemeral", () -> x.create().forPath("/s/e1/c")));
        Session.close(x);
        WatchedEvent e = Session.next(events, "deletion of the closed session's ephemeral");
        Session.out("after the owner closed: watch %s %s", e.getType(), e.getPath());
        Helpers.equal(Watcher.Event.EventType.NodeDeleted, e.getType(), "event type");
        kids = new ArrayList<>(y.getChildren().forPath("/s"));
        Collections.sort(kids);
        Session.out("other client sees %s", kids);
        Helpers.equal(List.of("p"), kids, "children after the owner closed");
    }

    /**
     * expiry: a session closed behind the client's back (through a second
     * handle with its id and password, as Curator's own tests expire
     * sessions) makes the client report LOST, then RECONNECTED with a new
     * session; its ephemerals are gone and a PersistentNode comes back.
     */
    static void expiry() throws Exception {
        BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
        CuratorFramework c = Session.builder("expiry").build();
        c.getConnectionStateListenable().addListener((client, state) -> states.add(state));
        Session.start(c);
        Session.out("state %s", Session.next(states, "first state"));
        CuratorFramework o = Session.client("expiry");
        c.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath("/e/plain");
        org.apache.curator.framework.recipes.nodes.PersistentNode pn = new org.apache.curator.framework.recipes.nodes.PersistentNode(
                c, CreateMode.EPHEMERAL, false, "/e/pn", Helpers.bytes("pn"));
        pn.start();
        try {
            Helpers.check(pn.waitForInitialCreate(Session.WAIT_SECONDS, java.util.concurrent.TimeUnit.SECONDS),
                    "PersistentNode not created");
            Session.sync(o, "/e");
            WatchScenarios.Recorder w = new WatchScenarios.Recorder();
            Helpers.check(o.checkExists().usingWatcher(w).forPath("/e/plain") != null, "the other client does not see /e/plain");

            ZooKeeper zk = c.getZookeeperClient().getZooKeeper();
            long old = zk.getSessionId();
            CountDownLatch up = new CountDownLatch(1);
            ZooKeeper killer = new ZooKeeper(c.getZookeeperClient().getCurrentConnectionString(), 15000, e -> {
                if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                    up.countDown();
                }
            }, old, zk.getSessionPasswd());
            Session.await(up, "second handle on the session");
            Helpers.equal(old, killer.getSessionId(), "second handle's session");
            killer.close();
            Session.out("session closed by a second handle; other client's watch: %s", w.next("ephemeral deletion"));

            List<ConnectionState> seen = new ArrayList<>();
            ConnectionState s;
            do {
                s = Session.next(states, "LOST");
                seen.add(s);
            } while (s != ConnectionState.LOST);
            do {
                s = Session.next(states, "RECONNECTED");
                seen.add(s);
            } while (s != ConnectionState.RECONNECTED);
            System.err.println("expiry: connection states " + seen);
            Session.out("client states: LOST, then RECONNECTED");
            long now = c.getZookeeperClient().getZooKeeper().getSessionId();
            Helpers.check(now != old, "the client kept its closed session");
            Session.waitUntil("PersistentNode recreated under the new session", () -> {
                Session.sync(o, "/e");
                Stat st = o.checkExists().forPath("/e/pn");
                return st != null && st.getEphemeralOwner() == now;
            });
            Session.out("PersistentNode recreated under the new session; /e children %s", o.getChildren().forPath("/e"));
        } finally {
            pn.close();
        }
    }
}
