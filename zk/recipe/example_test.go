package recipe_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/paddockhq/paddock/zk"
	"github.com/paddockhq/paddock/zk/recipe"
)

// The examples need a ZooKeeper or Paddock server on 127.0.0.1:2181, so they
// are compiled but not run (they have no Output comment).

func connectExample(ctx context.Context) *zk.Conn {
	conn, err := zk.Connect(ctx, "127.0.0.1:2181", zk.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	return conn
}

// A lock holder works until it is done or until Lost says the lock is no
// longer guaranteed, whichever comes first.
func ExampleLock() {
	ctx := context.Background()
	conn := connectExample(ctx)
	defer conn.Close()

	lock := recipe.NewLock(conn, "/app/locks/report", recipe.WithNodeData([]byte("worker-7")))
	if err := lock.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	defer lock.Unlock(ctx)

	work, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-lock.Lost() // closed by Unlock too
		cancel()
	}()
	doReport(work)
}

func doReport(ctx context.Context) {}

// TryLock takes the lock only if it is free.
func ExampleLock_TryLock() {
	ctx := context.Background()
	conn := connectExample(ctx)
	defer conn.Close()

	lock := recipe.NewLock(conn, "/app/locks/cleanup")
	ok, err := lock.TryLock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if !ok {
		fmt.Println("someone else is cleaning up")
		return
	}
	defer lock.Unlock(ctx)
	// ... clean up ...
}

// Readers share a read/write lock; a writer excludes everyone.
func ExampleNewReadLock() {
	ctx := context.Background()
	conn := connectExample(ctx)
	defer conn.Close()

	r := recipe.NewReadLock(conn, "/app/locks/catalog")
	if err := r.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	// ... read the catalog ...
	r.Unlock(ctx)

	w := recipe.NewWriteLock(conn, "/app/locks/catalog")
	if err := w.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	// ... rewrite the catalog ...
	w.Unlock(ctx)
}

// A candidate campaigns, leads until it loses leadership, and anyone can
// follow who leads.
func ExampleElection() {
	ctx := context.Background()
	conn := connectExample(ctx)
	defer conn.Close()

	e := recipe.NewElection(conn, "/app/election")
	go func() {
		for l := range e.Observe(ctx) {
			fmt.Printf("leader is now %q\n", l.ID)
		}
	}()
	if err := e.Campaign(ctx, []byte("10.0.0.7:8080")); err != nil {
		log.Fatal(err)
	}
	fmt.Println("leading")
	<-e.Lost()
	fmt.Println("no longer leading")
}

// A latch stays in the election until closed.
func ExampleLeaderLatch() {
	ctx := context.Background()
	conn := connectExample(ctx)
	defer conn.Close()

	latch := recipe.NewLeaderLatch(conn, "/app/scheduler", []byte("node-3"))
	if err := latch.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer latch.Close(ctx)
	for {
		if err := latch.Await(ctx); err != nil {
			log.Fatal(err) // closed, or the session expired
		}
		runScheduler(ctx, latch.Lost())
	}
}

func runScheduler(ctx context.Context, lost <-chan struct{}) { <-lost }

// Workers start together and finish together.
func ExampleDoubleBarrier() {
	ctx := context.Background()
	conn := connectExample(ctx)
	defer conn.Close()

	b := recipe.NewDoubleBarrier(conn, "/app/barriers/batch-42", 5)
	if err := b.Enter(ctx); err != nil {
		log.Fatal(err)
	}
	// ... compute ...
	if err := b.Leave(ctx); err != nil {
		log.Fatal(err)
	}
}

// A member joins a group; a view follows the membership.
func ExampleGroup() {
	ctx := context.Background()
	conn := connectExample(ctx)
	defer conn.Close()

	g := recipe.NewGroup(conn, "/app/members")
	m, err := g.Join(ctx, []byte("10.0.0.7:8080"))
	if err != nil {
		log.Fatal(err)
	}
	defer m.Leave(ctx)

	view, err := g.Watch(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer view.Close(ctx)
	for members := range view.Updates() {
		fmt.Println(len(members), "members; the oldest is", string(members[0].Data))
	}
}

// Producers offer, consumers take; each item is taken once.
func ExampleQueue() {
	ctx := context.Background()
	conn := connectExample(ctx)
	defer conn.Close()

	q := recipe.NewQueue(conn, "/app/jobs")
	if err := q.Offer(ctx, []byte("resize image 17")); err != nil {
		log.Fatal(err)
	}
	job, err := q.Take(ctx) // waits for an item
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", job)
}

// The configuration watcher always ends on the latest value.
func ExampleConfigWatcher() {
	ctx := context.Background()
	conn := connectExample(ctx)
	defer conn.Close()

	cfg := recipe.NewConfigWatcher(conn, "/app/config")
	if err := cfg.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer cfg.Close(ctx)
	for v := range cfg.Updates() {
		if v.Exists() {
			fmt.Printf("config version %d: %s\n", v.Stat.Version, v.Data)
		}
	}
	log.Println("watcher stopped:", cfg.Err())
}

// A tree cache answers reads of a subtree from memory.
func ExampleTreeCache() {
	ctx := context.Background()
	conn := connectExample(ctx)
	defer conn.Close()

	cache := recipe.NewTreeCache(conn, "/app/services")
	if err := cache.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer cache.Close(ctx)
	for range cache.Updates() {
		names, _ := cache.Children("/app/services")
		fmt.Println("services:", names)
	}
}

// The master publishes where it listens; workers wait for it.
func ExampleRendezvous() {
	ctx := context.Background()
	conn := connectExample(ctx)
	defer conn.Close()

	r := recipe.NewRendezvous(conn, "/app/rendezvous/job-9")
	addr, err := r.Await(ctx) // a worker
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("master at %s\n", addr)
}
