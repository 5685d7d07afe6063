import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.leader.Participant;

/** LeaderScenarios covers LeaderLatch and LeaderSelector with three sessions. */
final class LeaderScenarios {
    private LeaderScenarios() {}

    private static final long SECONDS = Session.WAIT_SECONDS;

    /**
     * latch: three participants, one leader; closing the leader's latch,
     * then the next leader's session, elects the next in line.
     */
    static void latch() throws Exception {
        CuratorFramework[] cs = new CuratorFramework[3];
        LeaderLatch[] ls = new LeaderLatch[3];
        BlockingQueue<String> changes = new LinkedBlockingQueue<>();
        for (int i = 0; i < 3; i++) {
            cs[i] = Session.client("leader");
            String id = "p" + i;
            ls[i] = new LeaderLatch(cs[i], "/latch", id);
            ls[i].addListener(new LeaderLatchListener() {
                @Override
                public void isLeader() {
                    changes.add(id + " isLeader");
                }

                @Override
                public void notLeader() {
                    changes.add(id + " notLeader");
                }
            });
        }
        try {
            ls[0].start();
            Helpers.check(ls[0].await(SECONDS, TimeUnit.SECONDS), "the only participant did not lead");
            Session.out("listener: %s", Session.next(changes, "first leader"));
            for (int i = 1; i < 3; i++) {
                LeaderLatch l = ls[i];
                int want = i + 1;
                l.start();
                Session.waitUntil("participant p" + i + " joined", () -> l.getParticipants().size() == want);
            }
            Session.out("participants %s", participants(ls[2]));
            Session.out("hasLeadership %s", leadership(ls));
            for (int i = 0; i < 3; i++) {
                Session.sync(cs[i], "/latch");
                Session.out("p%d sees leader %s", i, ls[i].getLeader().getId());
                Helpers.equal("p0", ls[i].getLeader().getId(), "leader");
            }

            ls[0].close();
            Helpers.check(ls[1].await(SECONDS, TimeUnit.SECONDS), "no new leader after the leader closed its latch");
            Session.out("leader p0 closed its latch; listener: %s", Session.next(changes, "second leader"));
            Session.out("hasLeadership %s", leadership(ls));
            Session.sync(cs[2], "/latch");
            Session.out("p2 sees participants %s", participants(ls[2]));

            Session.close(cs[1]);
            Helpers.check(ls[2].await(SECONDS, TimeUnit.SECONDS), "no new leader after the leader's session closed");
            String next;
            do {
                next = Session.next(changes, "third leader");
            } while (!next.startsWith("p2"));
            Session.out("leader p1's session closed; listener: %s", next);
            Session.out("p2 sees participants %s", participants(ls[2]));
        } finally {
            ls[2].close();
        }
    }

    private static List<String> participants(LeaderLatch l) throws Exception {
        List<String> ps = new ArrayList<>();
        for (Participant p : l.getParticipants()) {
            ps.add(p.getId() + (p.isLeader() ? "*" : ""));
        }
        return ps;
    }

    private static String leadership(LeaderLatch[] ls) {
        List<String> s = new ArrayList<>();
        int leaders = 0;
        for (LeaderLatch l : ls) {
            boolean has = l.getState() == LeaderLatch.State.STARTED && l.hasLeadership();
            s.add(l.getId() + "=" + has);
            if (has) {
                leaders++;
            }
        }
        Helpers.equal(1, leaders, "number of leaders " + s);
        return s.toString();
    }

    /**
     * selector: three LeaderSelectors each lead, never two at a time; the
     * one with autoRequeue leads again, the others once.
     */
    static void selector() throws Exception {
        AtomicInteger active = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        List<String> leaders = Collections.synchronizedList(new ArrayList<>());
        List<LeaderSelector> sels = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                String id = "s" + i;
                LeaderSelector sel = new LeaderSelector(Session.client("selector"), "/sel", new LeaderSelectorListenerAdapter() {
                    @Override
                    public void takeLeadership(CuratorFramework client) throws Exception {
                        int a = active.incrementAndGet();
                        most.accumulateAndGet(a, Math::max);
                        try {
                            Thread.sleep(50); // the leader's work
                        } finally {
                            active.decrementAndGet();
                            leaders.add(id);
                        }
                    }
                });
                sel.setId(id);
                if (i == 0) {
                    sel.autoRequeue();
                }
                sels.add(sel);
            }
            for (LeaderSelector s : sels) {
                s.start();
            }
            Session.waitUntil("every selector led, the autoRequeue one twice", () -> {
                synchronized (leaders) {
                    return leaders.contains("s1") && leaders.contains("s2") && Collections.frequency(leaders, "s0") >= 2;
                }
            });
            synchronized (leaders) {
                Session.out("led: s0 at least twice (autoRequeue), s1 %d, s2 %d; most at once %d",
                        Collections.frequency(leaders, "s1"), Collections.frequency(leaders, "s2"), most.get());
            }
            Helpers.equal(1, most.get(), "most concurrent leaders");
        } finally {
            for (LeaderSelector s : sels) {
                s.close();
            }
        }
    }
}
