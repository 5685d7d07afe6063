package curator_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
	"github.com/paddockhq/paddock/zk"
	"github.com/paddockhq/paddock/zk/recipe"
)

// TestInterop runs Paddock's Go recipes (zk/recipe) and their Apache
// Curator 5.4 counterparts on the same paths, against one Paddock server,
// and requires them to coordinate: each scenario starts the Java program
// in testdata/interop (Interop.java, InteropScenarios.java, with
// testdata/shared/Helpers.java) and plays in
// turns with it over its stdin and stdout, each side checking what it sees.
//
//   - mutex: recipe.Lock and InterProcessMutex exclude each other, either
//     holding first; two Go and two Curator clients increment a counter
//     under the lock without an overlap or a lost update.
//   - selector: a LeaderSelector (whose participants are mutex nodes) waits
//     while a Go Lock holds, reports it as the leader, and excludes it;
//     terms of both never overlap.
//   - rwlock: recipe's read and write locks and InterProcessReadWriteLock:
//     readers share, writers exclude both kinds, a reader queues behind a
//     writer of the other side; writers count, readers see no writer.
//   - latch: Go LeaderLatch and Election candidates and Curator LeaderLatch
//     participants, joined alternately, lead one at a time, in the order
//     they joined, and all agree who leads.
//   - barrier: Barrier and DistributedBarrier hold each other's waiters.
//   - double-barrier: two DoubleBarrier and two DistributedDoubleBarrier
//     participants enter together, for four, and leave together.
//   - queue: Queue and SimpleDistributedQueue take each other's items in
//     FIFO order; with both producing and consuming at once, every item is
//     taken once.
func TestInterop(t *testing.T) {
	if testing.Short() {
		t.Skip("the interop scenarios start a JVM each and take about 20 s; skipped with -short")
	}
	java, javac := jdk(t)
	classes := compile(t, javac, filepath.Join("testdata", "interop"))
	addr := zktest.StartPaddock(t, zktest.PaddockOptions{}).Addr
	for _, sc := range []struct {
		name string
		run  func(t *testing.T, p *peer, addr string)
	}{
		{"mutex", interopMutex},
		{"selector", interopSelector},
		{"rwlock", interopReadWriteLock},
		{"latch", interopLatch},
		{"barrier", interopBarrier},
		{"double-barrier", interopDoubleBarrier},
		{"queue", interopQueue},
	} {
		t.Run(sc.name, func(t *testing.T) {
			start := time.Now()
			p := startPeer(t, java, classes, addr, sc.name)
			sc.run(t, p, addr)
			p.finish()
			t.Logf("passed in %v; dialogue:\n%s", time.Since(start).Round(time.Millisecond), p.dialogue.String())
			if s := p.stderr.String(); s != "" {
				t.Logf("Java stderr:\n%s", s)
			}
		})
	}
}

// waitLimit bounds the Go side's waits for a lock, a leadership, an item.
const waitLimit = 20 * time.Second

// interopCtx returns a context that ends with the test or after a minute.
func interopCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// sessions opens n sessions to addr, closed when the test ends.
func sessions(t *testing.T, addr string, n int) []*zk.Conn {
	t.Helper()
	out := make([]*zk.Conn, n)
	for i := range out {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		c, err := zk.Connect(ctx, addr, zk.WithSessionTimeout(10*time.Second))
		cancel()
		if err != nil {
			t.Fatalf("connect %s: %v", addr, err)
		}
		t.Cleanup(func() { c.Close() })
		out[i] = c
	}
	return out
}

// makeCounter creates dir and dir/counter, holding "0".
func makeCounter(t *testing.T, c *zk.Conn, dir string) {
	t.Helper()
	ctx := interopCtx(t)
	for _, n := range []struct{ path, data string }{{dir, ""}, {dir + "/counter", "0"}} {
		if _, err := c.Create(ctx, n.path, []byte(n.data), zk.OpenACL, zk.ModePersistent); err != nil {
			t.Fatal(err)
		}
	}
}

// counter returns dir/counter's value.
func counter(t *testing.T, c *zk.Conn, dir string) int {
	t.Helper()
	data, _, err := c.Get(interopCtx(t), dir+"/counter")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(string(data))
	if err != nil {
		t.Fatalf("counter %q: %v", data, err)
	}
	return n
}

// exclusive is the critical section both sides run under a lock (as
// Interop.exclusive): an ephemeral dir/inside node, which fails to be made
// while another holder is inside, then a read and an unconditional write
// of the counter (an overlap would lose an update), then leaving.
func exclusive(ctx context.Context, c *zk.Conn, dir, who string) error {
	if _, err := c.Create(ctx, dir+"/inside", []byte(who), zk.OpenACL, zk.ModeEphemeral); err != nil {
		if errors.Is(err, zk.ErrNodeExists) {
			other, _, _ := c.Get(ctx, dir+"/inside")
			return fmt.Errorf("%s entered the critical section while %s was in it", who, other)
		}
		return err
	}
	data, _, err := c.Get(ctx, dir+"/counter")
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(string(data))
	if err != nil {
		return err
	}
	if _, err := c.Set(ctx, dir+"/counter", []byte(strconv.Itoa(n+1)), -1); err != nil {
		return err
	}
	return c.Delete(ctx, dir+"/inside", -1)
}

// parallel runs the functions at once and returns their errors, joined.
func parallel(fns ...func() error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(fns))
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// underLock runs exclusive n times, each under l.
func underLock(ctx context.Context, l *recipe.Lock, c *zk.Conn, dir string, n int) error {
	for range n {
		if err := l.Lock(ctx); err != nil {
			return err
		}
		err := exclusive(ctx, c, dir, "go")
		if uerr := l.Unlock(ctx); err == nil {
			err = uerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// awaitResult waits for an error sent on ch.
func awaitResult(t *testing.T, ch <-chan error, what string) {
	t.Helper()
	select {
	case err := <-ch:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(waitLimit):
		t.Fatalf("%s: not within %v", what, waitLimit)
	}
}

// pending fails t if ch has a value: what must still be waiting.
func pending(t *testing.T, ch <-chan error, what string) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("%s returned (%v) too early", what, err)
	default:
	}
}

// kids returns the children of dir (none if it does not exist).
func kids(t *testing.T, c *zk.Conn, dir string) []string {
	t.Helper()
	ch, _, err := c.Children(interopCtx(t), dir)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatal(err)
	}
	return ch
}

// waitKids waits until ok holds for dir's children.
func waitKids(t *testing.T, c *zk.Conn, dir, what string, ok func([]string) bool) {
	t.Helper()
	for end := time.Now().Add(waitLimit); ; time.Sleep(10 * time.Millisecond) {
		ch := kids(t, c, dir)
		if ok(ch) {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%s: not within %v; children of %s: %q", what, waitLimit, dir, ch)
		}
	}
}

// mustNotAcquire requires l.Lock to be still waiting after a short while.
func mustNotAcquire(t *testing.T, ctx context.Context, l *recipe.Lock, what string) {
	t.Helper()
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := l.Lock(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%s: Lock = %v, want it to wait", what, err)
	}
}

func interopMutex(t *testing.T, p *peer, addr string) {
	ctx := interopCtx(t)
	cs := sessions(t, addr, 2)
	makeCounter(t, cs[0], "/mutex")
	l := recipe.NewLock(cs[0], "/mutex/lock")
	if err := l.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	p.send("go-holds")
	p.expect("curator-excluded")
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	p.send("go-released")
	p.expect("curator-holds")
	if ok, err := l.TryLock(ctx); ok || err != nil {
		t.Fatalf("TryLock while an InterProcessMutex holds = %v, %v; want false", ok, err)
	}
	mustNotAcquire(t, ctx, l, "while an InterProcessMutex holds")
	got := make(chan error, 1)
	go func() { got <- l.Lock(ctx) }()
	p.send("go-waiting")
	p.expect("curator-released")
	awaitResult(t, got, "Lock after the InterProcessMutex was released")
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	const n = 10
	p.send("count %d", n)
	err := parallel(
		func() error { return underLock(ctx, recipe.NewLock(cs[0], "/mutex/lock"), cs[0], "/mutex", n) },
		func() error { return underLock(ctx, recipe.NewLock(cs[1], "/mutex/lock"), cs[1], "/mutex", n) },
	)
	p.expect("counted")
	if err != nil {
		t.Fatal(err)
	}
	if got := counter(t, cs[0], "/mutex"); got != 4*n {
		t.Errorf("counter = %d after %d increments under the lock", got, 4*n)
	}
	if left := kids(t, cs[0], "/mutex/lock"); len(left) != 0 {
		t.Errorf("lock nodes left: %q", left)
	}
	p.send("done")
}

func interopSelector(t *testing.T, p *peer, addr string) {
	ctx := interopCtx(t)
	cs := sessions(t, addr, 2)
	makeCounter(t, cs[0], "/selector")
	path := "/selector/leader"
	l := recipe.NewLock(cs[0], path, recipe.WithNodeData([]byte("go-leader")))
	if err := l.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	p.send("go-holds")
	p.expect("curator-waits")
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	p.send("go-released")
	p.expect("curator-leads")
	if ok, err := l.TryLock(ctx); ok || err != nil {
		t.Fatalf("TryLock while a LeaderSelector leads = %v, %v; want false", ok, err)
	}
	p.send("go-excluded")
	p.expect("curator-released")

	const n = 10
	p.send("count %d", n)
	err := parallel(
		func() error { return underLock(ctx, recipe.NewLock(cs[0], path), cs[0], "/selector", n) },
		func() error { return underLock(ctx, recipe.NewLock(cs[1], path), cs[1], "/selector", n) },
	)
	p.expect("counted")
	if err != nil {
		t.Fatal(err)
	}
	if got := counter(t, cs[0], "/selector"); got != 4*n {
		t.Errorf("counter = %d after %d terms", got, 4*n)
	}
	p.send("done")
}

func interopReadWriteLock(t *testing.T, p *peer, addr string) {
	ctx := interopCtx(t)
	cs := sessions(t, addr, 3)
	makeCounter(t, cs[0], "/rw")
	path := "/rw/lock"
	w := recipe.NewWriteLock(cs[0], path)
	if err := w.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	p.send("go-writes")
	p.expect("curator-excluded")
	if err := w.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	r := recipe.NewReadLock(cs[0], path)
	if err := r.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	p.send("go-reads")
	p.expect("curator-reads")
	r2 := recipe.NewReadLock(cs[1], path)
	if ok, err := r2.TryLock(ctx); !ok || err != nil {
		t.Fatalf("read TryLock beside a Curator reader = %v, %v; want true", ok, err)
	}
	if err := r2.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	w2 := recipe.NewWriteLock(cs[1], path)
	mustNotAcquire(t, ctx, w2, "write lock beside a Curator reader")
	got := make(chan error, 1)
	go func() { got <- w2.Lock(ctx) }()
	waitKids(t, cs[0], path, "the Go writer's node", func(ch []string) bool {
		return slices.ContainsFunc(ch, func(c string) bool { return strings.Contains(c, "__WRIT__") })
	})
	p.send("go-writer-queued")
	p.expect("curator-behind-writer")
	if err := r.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	pending(t, got, "write Lock while a Curator reader holds")
	p.send("go-read-released")
	p.expect("curator-read-released")
	awaitResult(t, got, "write Lock after the readers left")
	p.send("go-writes")
	p.expect("curator-excluded")
	if err := w2.Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	const n = 10
	p.send("count %d", n)
	read := func() error {
		l := recipe.NewReadLock(cs[2], path)
		for range n {
			if err := l.Lock(ctx); err != nil {
				return err
			}
			ok, _, err := cs[2].Exists(ctx, "/rw/inside")
			if uerr := l.Unlock(ctx); err == nil {
				err = uerr
			}
			if err != nil {
				return err
			}
			if ok {
				return errors.New("a Go reader held while a writer was inside")
			}
		}
		return nil
	}
	err := parallel(
		func() error { return underLock(ctx, recipe.NewWriteLock(cs[0], path), cs[0], "/rw", n) },
		func() error { return underLock(ctx, recipe.NewWriteLock(cs[1], path), cs[1], "/rw", n) },
		read,
	)
	p.expect("counted")
	if err != nil {
		t.Fatal(err)
	}
	if got := counter(t, cs[0], "/rw"); got != 4*n {
		t.Errorf("counter = %d after %d increments under the write lock", got, 4*n)
	}
	p.send("done")
}

func interopLatch(t *testing.T, p *peer, addr string) {
	ctx := interopCtx(t)
	cs := sessions(t, addr, 3)
	path := "/latch"
	a := recipe.NewLeaderLatch(cs[0], path, []byte("go-A"))
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	wctx, cancel := context.WithTimeout(ctx, waitLimit)
	err := a.Await(wctx)
	cancel()
	if err != nil {
		t.Fatalf("the first participant did not lead: %v", err)
	}
	p.send("start curator-B")
	p.expect("started")
	e := recipe.NewElection(cs[1], path)
	campaigned := make(chan error, 1)
	go func() { campaigned <- e.Campaign(ctx, []byte("go-C")) }()
	waitKids(t, cs[0], path, "go-C's node", func(ch []string) bool { return len(ch) == 3 })
	p.send("start curator-D")
	p.expect("started")

	observer := recipe.NewElection(cs[2], path)
	leads := func(id string) {
		t.Helper()
		p.send("leader %s", id) // the Curator side checks its participants
		p.expect("ok")
		l, err := observer.Leader(ctx)
		if err != nil || string(l.ID) != id {
			t.Fatalf("Election.Leader = %q, %v; want %s", l.ID, err, id)
		}
		if a.IsLeader() != (id == "go-A") {
			t.Fatalf("go-A IsLeader = %v while %s leads", a.IsLeader(), id)
		}
		if id != "go-C" {
			pending(t, campaigned, "go-C's Campaign while "+id+" leads")
		}
	}
	leads("go-A")
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	leads("curator-B")
	p.send("close curator-B")
	p.expect("closed")
	awaitResult(t, campaigned, "go-C's Campaign after curator-B left")
	leads("go-C")
	if err := e.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	leads("curator-D")
	p.send("done")
}

func interopBarrier(t *testing.T, p *peer, addr string) {
	ctx := interopCtx(t)
	c := sessions(t, addr, 1)[0]
	b := recipe.NewBarrier(c, "/barrier/b")
	p.send("set")
	p.expect("set")
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err := b.Wait(short)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait on a DistributedBarrier that is set = %v, want it to wait", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- b.Wait(ctx) }()
	p.send("remove")
	p.expect("removed")
	awaitResult(t, waited, "Wait after the DistributedBarrier was removed")
	if err := b.Set(ctx); err != nil {
		t.Fatal(err)
	}
	p.send("go-set")
	p.expect("waiting")
	if err := b.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	p.send("go-removed")
	p.expect("released")
	p.send("done")
}

func interopDoubleBarrier(t *testing.T, p *peer, addr string) {
	ctx := interopCtx(t)
	cs := sessions(t, addr, 2)
	path := "/double"
	bs := []*recipe.DoubleBarrier{recipe.NewDoubleBarrier(cs[0], path, 4), recipe.NewDoubleBarrier(cs[1], path, 4)}
	entered := make(chan error, len(bs))
	for _, b := range bs {
		go func() { entered <- b.Enter(ctx) }()
	}
	waitKids(t, cs[0], path, "the Go participants", func(ch []string) bool { return len(ch) == 2 })
	p.send("enter")
	p.expect("entering")
	pending(t, entered, "Enter with three participants of four")
	if ch := kids(t, cs[0], path); slices.Contains(ch, "ready") {
		t.Fatalf("ready with three participants of four: %q", ch)
	}
	p.send("enter")
	p.expect("entered")
	for range bs {
		awaitResult(t, entered, "Enter with four participants")
	}
	p.send("leave")
	left := make(chan error, len(bs))
	for _, b := range bs {
		go func() { left <- b.Leave(ctx) }()
	}
	p.expect("left")
	for range bs {
		awaitResult(t, left, "Leave")
	}
	if ch := kids(t, cs[0], path); len(ch) != 0 {
		t.Errorf("nodes left in the double barrier: %q", ch)
	}
	p.send("done")
}

func interopQueue(t *testing.T, p *peer, addr string) {
	ctx := interopCtx(t)
	cs := sessions(t, addr, 2)
	path := "/queue"
	q := recipe.NewQueue(cs[0], path)
	var want []string
	for i := range 5 {
		item := fmt.Sprintf("go-%d", i)
		if err := q.Offer(ctx, []byte(item)); err != nil {
			t.Fatal(err)
		}
		want = append(want, item)
	}
	p.send("take 5")
	if got := p.expectPrefix("took "); got != strings.Join(want, ",") {
		t.Fatalf("SimpleDistributedQueue took %s from a Go producer, want %s", got, strings.Join(want, ","))
	}
	p.send("offer 5")
	p.expect("offered")
	take := func(q *recipe.Queue, n int) ([]string, error) {
		var out []string
		for range n {
			wctx, cancel := context.WithTimeout(ctx, waitLimit)
			data, err := q.Take(wctx)
			cancel()
			if err != nil {
				return out, err
			}
			out = append(out, string(data))
		}
		return out, nil
	}
	got, err := take(q, 5)
	if err != nil {
		t.Fatal(err)
	}
	if want := "cur-0,cur-1,cur-2,cur-3,cur-4"; strings.Join(got, ",") != want {
		t.Fatalf("Go took %s from a Curator producer, want %s", strings.Join(got, ","), want)
	}

	// Both produce and consume at once.
	const n = 20
	p.send("mixed %d", n)
	var goTook []string
	err = parallel(
		func() error {
			producer := recipe.NewQueue(cs[1], path)
			for i := range n {
				if err := producer.Offer(ctx, fmt.Appendf(nil, "go-%d", i)); err != nil {
					return err
				}
			}
			return nil
		},
		func() error {
			var err error
			goTook, err = take(q, n)
			return err
		},
	)
	curTook := strings.Split(p.expectPrefix("took "), ",")
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for who, took := range map[string][]string{"Go": goTook, "Curator": curTook} {
		last := map[string]int{} // producer -> last index taken
		for _, item := range took {
			count[item]++
			producer, i, _ := strings.Cut(item, "-")
			k, _ := strconv.Atoi(i)
			if prev, ok := last[producer]; ok && k < prev {
				t.Errorf("the %s consumer took %s after %s-%d: not in FIFO order", who, item, producer, prev)
			}
			last[producer] = k
		}
	}
	for _, producer := range []string{"go", "cur"} {
		for i := range n {
			if c := count[fmt.Sprintf("%s-%d", producer, i)]; c != 1 {
				t.Errorf("item %s-%d taken %d times", producer, i, c)
			}
		}
	}
	if ch := kids(t, cs[0], path); len(ch) != 0 {
		t.Errorf("nodes left in the queue: %q", ch)
	}
	p.send("done")
}
