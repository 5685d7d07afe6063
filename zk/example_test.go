package zk_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/zk"
)

// The examples need a ZooKeeper or Paddock server on 127.0.0.1:2181, so they
// are compiled but not run (they have no Output comment). docs/client.md
// explains the patterns they show.

// Synchronous calls: each returns when the server has answered, or when
// ctx ends. Errors are matched with errors.Is.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	conn, err := zk.Connect(ctx, "127.0.0.1:2181",
		zk.WithSessionTimeout(10*time.Second),
		zk.WithLogger(slog.Default()),
		zk.WithDefaultWatcher(zk.WatcherFunc(func(e zk.Event) {
			log.Printf("session: %s", e.State) // Disconnected, SyncConnected, Expired...
		})))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	if _, err := conn.Create(ctx, "/config", []byte("v1"), zk.OpenACL, zk.ModePersistent); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		log.Fatal(err)
	}
	data, stat, err := conn.Get(ctx, "/config")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s at version %d\n", data, stat.Version)

	// A conditional update: it fails with ErrBadVersion if someone else
	// wrote /config since we read it.
	_, err = conn.Set(ctx, "/config", []byte("v2"), stat.Version)
	switch {
	case errors.Is(err, zk.ErrBadVersion):
		fmt.Println("lost the race; read again")
	case err != nil:
		var oe *zk.OpError
		if errors.As(err, &oe) {
			log.Printf("%s %s failed: %v", oe.Op, oe.Path, oe.Err)
		}
		log.Fatal(err)
	}
}

// The asynchronous pattern of the ZooKeeper book: make the call, and handle
// its result in a callback (processResult). Many calls are in flight on the
// one connection at once; callbacks run one at a time, in order, on the
// Conn's delivery goroutine. A closure carries what Java passes as ctx.
func ExampleConn_GetAsync() {
	ctx := context.Background()
	conn, err := zk.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	tasks := []string{"task-0000000001", "task-0000000002", "task-0000000003"}
	var wg sync.WaitGroup
	var getTask func(task string)
	getTask = func(task string) {
		wg.Add(1)
		conn.GetAsync(ctx, "/tasks/"+task, nil, func(data []byte, stat *zk.Stat, err error) {
			defer wg.Done()
			switch {
			case err == nil:
				fmt.Printf("%s: %q (version %d)\n", task, data, stat.Version)
			case errors.Is(err, zk.ErrConnectionLoss):
				getTask(task) // a read is safe to repeat
			case errors.Is(err, zk.ErrNoNode):
				fmt.Printf("%s: gone\n", task)
			default:
				log.Printf("%s: %v", task, err)
			}
		})
	}
	for _, task := range tasks {
		getTask(task)
	}
	wg.Wait()
}

// The book's common pattern: an asynchronous exists that also leaves a
// watch. The watcher receives the event; the callback the result.
func ExampleConn_ExistsAsync() {
	ctx := context.Background()
	conn, err := zk.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	done := make(chan struct{})
	myWatcher := zk.WatcherFunc(func(e zk.Event) {
		if e.Type == zk.EventNone {
			return // a session state change, sent to every watcher
		}
		fmt.Println(e.Type, e.Path) // NodeCreated, NodeDataChanged or NodeDeleted
		close(done)
	})
	conn.ExistsAsync(ctx, "/myZnode", myWatcher, func(exists bool, stat *zk.Stat, err error) {
		switch {
		case err != nil:
			log.Print(err) // no watch was left: call again
		case exists:
			fmt.Println("exists, version", stat.Version)
		default:
			fmt.Println("does not exist yet; the watch fires when it is created")
		}
	})
	<-done
}

// A watch fires once: read, act, and leave the next watch with the next
// read, so that no change is missed. A ChanWatcher turns the event into a
// channel receive; its channel is closed when the session ends.
func ExampleConn_GetW() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn, err := zk.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	for {
		w := zk.NewChanWatcher(1)
		data, stat, err := conn.GetW(ctx, "/config", w)
		if errors.Is(err, zk.ErrConnectionLoss) {
			continue // the watch was not set: read again
		}
		if err != nil {
			log.Fatal(err) // ErrNoNode: use ExistsW to wait for creation
		}
		fmt.Printf("config v%d: %s\n", stat.Version, data)

		select {
		case ev, ok := <-w.C:
			if !ok {
				log.Fatal("session ended")
			}
			if ev.Type == zk.EventNodeDeleted {
				return
			}
			// EventNodeDataChanged: loop to read the new value and
			// watch again.
		case <-ctx.Done():
			// Stop watching: remove the watch here even if the server
			// cannot be reached (local).
			conn.RemoveWatches(context.Background(), "/config", w, zk.WatcherData, true)
			return
		}
	}
}

// The same loop in callback style, as Java watchers are written: the
// watcher calls the function that reads and watches again.
func ExampleWatcherFunc() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	conn, err := zk.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	var watchConfig func()
	watcher := zk.WatcherFunc(func(e zk.Event) {
		if e.Type == zk.EventNodeDataChanged {
			watchConfig()
		}
	})
	watchConfig = func() {
		conn.GetAsync(ctx, "/config", watcher, func(data []byte, _ *zk.Stat, err error) {
			switch {
			case errors.Is(err, zk.ErrConnectionLoss):
				watchConfig()
			case err != nil:
				log.Print(err)
			default:
				fmt.Printf("config: %s\n", data)
			}
		})
	}
	watchConfig()
	<-ctx.Done() // until interrupted; every change to /config is printed
}

// A persistent recursive watch reports every change under a path until it
// is removed; a ChanWatcher with a buffer delivers the events to a loop.
// A consumer slower than the changes holds up the Conn's delivery (nothing
// is dropped), so keep up or give the channel room.
func ExampleChanWatcher() {
	ctx := context.Background()
	conn, err := zk.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	w := zk.NewChanWatcher(64)
	if err := conn.AddWatch(ctx, "/services", w, zk.AddWatchPersistentRecursive); err != nil {
		log.Fatal(err)
	}
	for ev := range w.C {
		switch ev.Type {
		case zk.EventNodeCreated, zk.EventNodeDataChanged, zk.EventNodeDeleted:
			fmt.Println(ev.Type, ev.Path, ev.Zxid)
		case zk.EventPersistentWatchRemoved:
			return // RemoveWatches(ctx, "/services", w, zk.WatcherPersistentRecursive, false)
		case zk.EventNone:
			fmt.Println("session ended:", ev.State) // the channel is closed next
		}
	}
}

// Multi applies its operations atomically: the book's assignment that
// creates /assign/worker-1/task-1 and deletes /tasks/task-1 in one step.
func ExampleConn_Multi() {
	ctx := context.Background()
	conn, err := zk.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	data := []byte("run this")
	results, err := conn.Multi(ctx,
		&zk.CreateOp{Path: "/assign/worker-1/task-1", Data: data, ACL: zk.OpenACL, Mode: zk.ModePersistent},
		&zk.DeleteOp{Path: "/tasks/task-1", Version: -1},
	)
	var me *zk.MultiError
	switch {
	case errors.As(err, &me):
		// Nothing was applied; me says which operation refused.
		fmt.Printf("op %d (%s %s) failed: %v\n", me.Index, me.Op, me.Path, me.Err)
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Println("assigned as", results[0].Path)
	}
}

// Txn builds a Multi by chaining. Check makes the transaction conditional
// on a znode it does not change: here, that /master-path has not moved
// since it was read.
func ExampleTxn() {
	ctx := context.Background()
	conn, err := zk.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	parent, stat, err := conn.Get(ctx, "/master-path")
	if err != nil {
		log.Fatal(err)
	}
	results, err := conn.Txn().
		Check("/master-path", stat.Version).
		Create(string(parent)+"/task-", []byte("job"), zk.OpenACL, zk.ModePersistentSequential).
		Commit(ctx)
	if errors.Is(err, zk.ErrBadVersion) {
		fmt.Println("the master moved; read /master-path again")
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("created", results[1].Path)
}

// CreateProtected answers the book's question "has my sequential znode
// been created?" after a connection loss: it names the znode with a GUID
// and, after a loss, looks for it before trying again, so a task is never
// submitted twice.
func ExampleConn_CreateProtected() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := zk.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	name, err := conn.CreateProtected(ctx, "/tasks/task-", []byte("job"), zk.OpenACL, zk.ModePersistentSequential)
	if err != nil {
		log.Fatal(err)
	}
	// name is /tasks/_c_<guid>-task-0000000007; readers recover the
	// name given:
	base := name[strings.LastIndexByte(name, '/')+1:]
	task, _ := zk.ParseProtectedName(base)
	fmt.Println(name, "is", task)
}

// Retry repeats a call that failed with ErrConnectionLoss, backing off,
// until it succeeds, fails otherwise, or ctx ends. Use it for calls that
// are safe to repeat: reads, unconditional sets, deletes (ErrNoNode on a
// repeat means the first attempt did it).
func ExampleRetry() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := zk.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	var stat *zk.Stat
	err = zk.Retry(ctx, func(ctx context.Context) error {
		var err error
		stat, err = conn.Set(ctx, "/config", []byte("v3"), -1)
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("now at version", stat.Version)
}

// WithExecutor moves callbacks and watcher invocations off the Conn's
// delivery goroutine. Order is then the executor's business: this one
// keeps it by running tasks on one goroutine of its own, behind a queue.
func ExampleWithExecutor() {
	tasks := make(chan func(), 1024)
	go func() {
		for t := range tasks {
			t()
		}
	}()
	ctx := context.Background()
	conn, err := zk.Connect(ctx, "127.0.0.1:2181", zk.WithExecutor(func(task func()) { tasks <- task }))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	done := make(chan struct{})
	conn.ChildrenAsync(ctx, "/workers", nil, func(children []string, _ *zk.Stat, err error) {
		defer close(done)
		fmt.Println(children, err) // runs on the executor's goroutine
	})
	<-done
}
