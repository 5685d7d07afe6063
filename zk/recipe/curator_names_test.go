package recipe_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/paddockhq/paddock/zk"
	"github.com/paddockhq/paddock/zk/recipe"
)

func init() {
	addServerTests(
		serverTest{"CuratorNodeNames", testCuratorNodeNames},
		serverTest{"CuratorContenders", testCuratorContenders},
	)
}

// protected is the "_c_<guid>-" prefix Apache Curator's protected creates
// (and zk.Conn.CreateProtected) give a name.
const protected = `_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-`

// onlyChild returns the single child of dir, failing t if there is not
// exactly one.
func onlyChild(t *testing.T, c *zk.Conn, dir string) string {
	t.Helper()
	kids := children(t, c, dir)
	if len(kids) != 1 {
		t.Fatalf("children of %s: %q, want exactly one", dir, kids)
	}
	return kids[0]
}

func matchName(t *testing.T, what, name, pattern string) {
	t.Helper()
	if !regexp.MustCompile(`^` + pattern + `$`).MatchString(name) {
		t.Errorf("%s node %q does not match %s", what, name, pattern)
	}
}

// testCuratorNodeNames: the recipes name their nodes as Apache Curator's
// counterparts do, so that both take part in one ordering on a shared path
// (test/curator's TestInterop runs them together): a Lock "lock-" (as
// InterProcessMutex and LeaderSelector), the read and write locks
// "__READ__" and "__WRIT__" (InterProcessReadWriteLock), an election
// "latch-" (LeaderLatch), each protected; a Queue item a bare "qn-"
// (SimpleDistributedQueue takes no other), and no other node is left after
// Offer.
func testCuratorNodeNames(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	top := root(t)
	for _, k := range []struct {
		what, dir, pattern string
		lock               *recipe.Lock
	}{
		{"Lock", top + "/mutex", protected + `lock-\d{10}`, recipe.NewLock(c, top+"/mutex")},
		{"read lock", top + "/read", protected + `__READ__\d{10}`, recipe.NewReadLock(c, top+"/read")},
		{"write lock", top + "/write", protected + `__WRIT__\d{10}`, recipe.NewWriteLock(c, top+"/write")},
	} {
		if err := k.lock.Lock(ctx); err != nil {
			t.Fatalf("%s: %v", k.what, err)
		}
		matchName(t, k.what, onlyChild(t, c, k.dir), k.pattern)
		if err := k.lock.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}

	l := recipe.NewLeaderLatch(c, top+"/latch", []byte("go"))
	if err := l.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Await(ctx); err != nil {
		t.Fatal(err)
	}
	matchName(t, "LeaderLatch", onlyChild(t, c, top+"/latch"), protected+`latch-\d{10}`)
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e := recipe.NewElection(c, top+"/election")
	if err := e.Campaign(ctx, []byte("go")); err != nil {
		t.Fatal(err)
	}
	matchName(t, "Election", onlyChild(t, c, top+"/election"), protected+`latch-\d{10}`)
	if err := e.Resign(ctx); err != nil {
		t.Fatal(err)
	}

	q := recipe.NewQueue(c, top+"/queue")
	if err := q.Offer(ctx, []byte("item")); err != nil {
		t.Fatal(err)
	}
	matchName(t, "Queue item", onlyChild(t, c, top+"/queue"), `qn-\d{10}`)
	pq := recipe.NewPriorityQueue(c, top+"/pqueue")
	if err := pq.Offer(ctx, []byte("item"), -1); err != nil {
		t.Fatal(err)
	}
	matchName(t, "PriorityQueue item", onlyChild(t, c, top+"/pqueue"), `pq-7fffffff-\d{10}`)
}

// curatorNode creates an ephemeral sequential node named as Curator names
// its contenders ("_c_<guid>-" + name + sequence) under dir, on c.
func curatorNode(ctx context.Context, t *testing.T, c *zk.Conn, dir, name, data string) string {
	t.Helper()
	p, err := c.CreateProtected(ctx, dir+"/"+name, []byte(data), zk.OpenACL, zk.ModeEphemeralSequential)
	if err != nil {
		t.Fatalf("create %s/%s: %v", dir, name, err)
	}
	return p
}

func tryLock(ctx context.Context, t *testing.T, what string, l *recipe.Lock, want bool) {
	t.Helper()
	got, err := l.TryLock(ctx)
	if err != nil {
		t.Fatalf("%s TryLock: %v", what, err)
	}
	if got != want {
		t.Errorf("%s TryLock = %v, want %v", what, got, want)
	}
	if got {
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// testCuratorContenders: nodes named as Curator's recipes name them, made
// by another session, count as contenders: a Curator writer
// ("__WRIT__") excludes Go readers and writers, a Curator reader
// ("__READ__") excludes Go writers only, a Curator mutex node ("lock-")
// excludes a Lock, a Curator LeaderLatch participant ("latch-") leads
// before a Go latch that came after it, and Election.Leader reports its id.
func testCuratorContenders(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	goConn, cur := connect(t, s.proc.Addr), connect(t, s.proc.Addr)
	top := root(t)
	for _, d := range []string{top, top + "/rw", top + "/mutex", top + "/latch"} {
		if _, err := cur.Create(ctx, d, nil, zk.OpenACL, zk.ModePersistent); err != nil {
			t.Fatal(err)
		}
	}

	rw := top + "/rw"
	read, write := recipe.NewReadLock(goConn, rw), recipe.NewWriteLock(goConn, rw)
	w := curatorNode(ctx, t, cur, rw, "__WRIT__", "curator")
	tryLock(ctx, t, "read lock behind a Curator writer", read, false)
	tryLock(ctx, t, "write lock behind a Curator writer", write, false)
	if err := cur.Delete(ctx, w, -1); err != nil {
		t.Fatal(err)
	}
	r := curatorNode(ctx, t, cur, rw, "__READ__", "curator")
	tryLock(ctx, t, "read lock behind a Curator reader", read, true)
	tryLock(ctx, t, "write lock behind a Curator reader", write, false)
	if err := cur.Delete(ctx, r, -1); err != nil {
		t.Fatal(err)
	}
	tryLock(ctx, t, "write lock alone", write, true)

	m := curatorNode(ctx, t, cur, top+"/mutex", "lock-", "curator")
	tryLock(ctx, t, "Lock behind a Curator mutex", recipe.NewLock(goConn, top+"/mutex"), false)
	if err := cur.Delete(ctx, m, -1); err != nil {
		t.Fatal(err)
	}

	dir := top + "/latch"
	p := curatorNode(ctx, t, cur, dir, "latch-", "curator")
	e := recipe.NewElection(goConn, dir)
	leader, err := e.Leader(ctx)
	if err != nil {
		t.Fatalf("Leader with a Curator participant: %v", err)
	}
	if leader.Node != p || string(leader.ID) != "curator" {
		t.Errorf("Leader = %s %q, want %s %q", leader.Node, leader.ID, p, "curator")
	}
	l := recipe.NewLeaderLatch(goConn, dir, []byte("go"))
	if err := l.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer l.Close(context.Background())
	short, cancel := testCtxTimeout(t, 300*time.Millisecond)
	defer cancel()
	if err := l.Await(short); err == nil {
		t.Error("a Go latch led while a Curator participant ahead of it was in the election")
	}
	if err := cur.Delete(ctx, p, -1); err != nil {
		t.Fatal(err)
	}
	if err := l.Await(ctx); err != nil {
		t.Fatalf("the Go latch did not lead once the Curator participant left: %v", err)
	}
}
