package zk_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/zk"
)

// Tests of watches against both servers. Helpers and types here start with
// "wt" so that they do not meet other test files.

func init() {
	addServerTests(
		serverTest{"watch-getw", testWatchGetW},
		serverTest{"watch-existsw", testWatchExistsW},
		serverTest{"watch-childrenw", testWatchChildrenW},
		serverTest{"watch-same-watcher", testWatchSameWatcher},
		serverTest{"watch-persistent", testWatchPersistent},
		serverTest{"watch-persistent-recursive", testWatchPersistentRecursive},
		serverTest{"watch-remove", testWatchRemove},
		serverTest{"watch-check", testWatchCheck},
		serverTest{"watch-async", testWatchAsync},
		serverTest{"watch-default-watcher", testWatchDefaultWatcher},
		serverTest{"watch-order", testWatchOrder},
		serverTest{"watch-chanwatcher-close", testWatchChanWatcherClose},
	)
}

// wtEv is an event without its zxid (ZooKeeper 3.8 sends -1, Paddock the
// zxid of the change).
type wtEv struct {
	Type zk.EventType
	Path string
}

func (e wtEv) String() string { return e.Type.String() + " " + e.Path }

// wtBarrier waits until c has delivered every event and callback it
// received before the reply to a read of path issued now. A server sends a
// watch event before the reply to any later read that can see the change
// behind it, and the Conn delivers them in that order.
func wtBarrier(t *testing.T, c *zk.Conn, path string) {
	t.Helper()
	done := make(chan struct{})
	c.ExistsAsync(context.Background(), path, nil, func(bool, *zk.Stat, error) { close(done) })
	select {
	case <-done:
	case <-time.After(opsWait):
		t.Fatalf("read of %s did not complete", path)
	}
}

// wtExpect checks that w has received exactly want (in order) once every
// change to path made before is visible to c.
func wtExpect(t *testing.T, c *zk.Conn, w *zk.ChanWatcher, path string, want ...wtEv) {
	t.Helper()
	wtBarrier(t, c, path)
	var got []wtEv
	for more := true; more; {
		select {
		case e, ok := <-w.C:
			if !ok {
				t.Fatalf("channel closed after %v", got)
			}
			if e.State != zk.StateSyncConnected {
				t.Fatalf("event %+v, want state SyncConnected", e)
			}
			got = append(got, wtEv{e.Type, e.Path})
		default:
			more = false
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
}

func wtCreate(t *testing.T, c *zk.Conn, path string) {
	t.Helper()
	opsCreate(t, c, path, nil, zk.ModePersistent)
}

func wtSet(t *testing.T, c *zk.Conn, path, data string) *zk.Stat {
	t.Helper()
	st, err := c.Set(testCtx(t), path, []byte(data), -1)
	opsMust(t, err)
	return st
}

func wtDelete(t *testing.T, c *zk.Conn, path string) {
	t.Helper()
	opsMust(t, c.Delete(testCtx(t), path, -1))
}

// wtLog is a comparable Watcher (a pointer) that records what it receives,
// along with anything else the test logs in the same sequence.
type wtLog struct {
	mu  sync.Mutex
	log []string
}

func (l *wtLog) Process(e zk.Event) { l.add(fmt.Sprintf("event %s %s %s", e.Type, e.State, e.Path)) }

func (l *wtLog) add(s string) {
	l.mu.Lock()
	l.log = append(l.log, s)
	l.mu.Unlock()
}

func (l *wtLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.log)
}

func testWatchGetW(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	other := connect(t, s.proc.Addr)
	root := s.root(t, c)
	p := root + "/p"
	opsCreate(t, c, p, []byte("v0"), zk.ModePersistent)
	w := zk.NewChanWatcher(8)
	data, _, err := c.GetW(ctx, p, w)
	if err != nil || string(data) != "v0" {
		t.Fatalf("getW = %q, %v", data, err)
	}
	st := wtSet(t, other, p, "v1")
	wtBarrier(t, c, p)
	select {
	case e := <-w.C:
		want := int64(-1) // ZooKeeper 3.8 sends no zxid with events
		if s.kind == "paddock" {
			want = st.Mzxid
		}
		if e.Type != zk.EventNodeDataChanged || e.Path != p || e.State != zk.StateSyncConnected || e.Zxid != want {
			t.Fatalf("event %+v, want NodeDataChanged %s with zxid %d", e, p, want)
		}
	default:
		t.Fatal("no event after set")
	}
	// One-time: a second change fires nothing.
	wtSet(t, other, p, "v2")
	wtExpect(t, c, w, p)
	// Deleting fires NodeDeleted; a change by the watching session too.
	_, _, err = c.GetW(ctx, p, w)
	opsMust(t, err)
	wtDelete(t, c, p)
	wtExpect(t, c, w, p, wtEv{zk.EventNodeDeleted, p})
	// getData on a missing znode leaves no watch.
	_, _, err = c.GetW(ctx, p, w)
	opsWantErr(t, err, zk.ErrNoNode, "getData", p)
	wtCreate(t, other, p)
	wtExpect(t, c, w, p)
}

func testWatchExistsW(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	other := connect(t, s.proc.Addr)
	root := s.root(t, c)
	p := root + "/p"
	w := zk.NewChanWatcher(8)
	ok, st, err := c.ExistsW(ctx, p, w)
	if err != nil || ok || st != nil {
		t.Fatalf("existsW of a missing znode = %v, %+v, %v", ok, st, err)
	}
	wtCreate(t, other, p)
	wtExpect(t, c, w, p, wtEv{zk.EventNodeCreated, p})
	wtSet(t, other, p, "x")
	wtExpect(t, c, w, p)

	ok, st, err = c.ExistsW(ctx, p, w)
	if err != nil || !ok || st.Version != 1 {
		t.Fatalf("existsW = %v, %+v, %v", ok, st, err)
	}
	wtSet(t, other, p, "y")
	wtExpect(t, c, w, p, wtEv{zk.EventNodeDataChanged, p})
	_, _, err = c.ExistsW(ctx, p, w)
	opsMust(t, err)
	wtCreate(t, other, p+"/child") // not an exists event
	wtDelete(t, other, p+"/child")
	wtDelete(t, other, p)
	wtExpect(t, c, w, p, wtEv{zk.EventNodeDeleted, p})
}

func testWatchChildrenW(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	other := connect(t, s.proc.Addr)
	root := s.root(t, c)
	p := root + "/p"
	wtCreate(t, c, p)
	w := zk.NewChanWatcher(8)
	kids, st, err := c.ChildrenW(ctx, p, w)
	if err != nil || len(kids) != 0 || st.NumChildren != 0 {
		t.Fatalf("childrenW = %q, %+v, %v", kids, st, err)
	}
	wtSet(t, other, p, "data") // not a children event
	wtCreate(t, other, p+"/a")
	wtExpect(t, c, w, p, wtEv{zk.EventNodeChildrenChanged, p})
	wtCreate(t, other, p+"/b")
	wtExpect(t, c, w, p)

	_, _, err = c.ChildrenW(ctx, p, w)
	opsMust(t, err)
	wtSet(t, other, p+"/a", "x") // a child's data is not the children
	wtDelete(t, other, p+"/a")
	wtExpect(t, c, w, p, wtEv{zk.EventNodeChildrenChanged, p})

	wtDelete(t, other, p+"/b")
	_, _, err = c.ChildrenW(ctx, p, w)
	opsMust(t, err)
	wtDelete(t, other, p)
	wtExpect(t, c, w, p, wtEv{zk.EventNodeDeleted, p})
	_, _, err = c.ChildrenW(ctx, p, w)
	opsWantErr(t, err, zk.ErrNoNode, "getChildren2", p)
}

// A comparable watcher set by several calls on one path is invoked once per
// event; a WatcherFunc, not comparable, once per registration.
func testWatchSameWatcher(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	other := connect(t, s.proc.Addr)
	root := s.root(t, c)
	p := root + "/p"
	wtCreate(t, c, p)
	w := zk.NewChanWatcher(8)
	watchAll := func() {
		t.Helper()
		_, _, err := c.GetW(ctx, p, w)
		opsMust(t, err)
		_, _, err = c.ExistsW(ctx, p, w)
		opsMust(t, err)
		_, _, err = c.GetW(ctx, p, w)
		opsMust(t, err)
		_, _, err = c.ChildrenW(ctx, p, w)
		opsMust(t, err)
	}
	watchAll()
	wtSet(t, other, p, "x")
	wtExpect(t, c, w, p, wtEv{zk.EventNodeDataChanged, p})
	watchAll() // the child watch is still there, and is not doubled
	wtDelete(t, other, p)
	wtExpect(t, c, w, p, wtEv{zk.EventNodeDeleted, p})

	// The same *wtLog by two calls: one invocation.
	wtCreate(t, c, p)
	l := &wtLog{}
	_, _, err := c.GetW(ctx, p, l)
	opsMust(t, err)
	_, _, err = c.ExistsW(ctx, p, l)
	opsMust(t, err)
	wtSet(t, other, p, "y")
	wtBarrier(t, c, p)
	if got := l.get(); !slices.Equal(got, []string{"event NodeDataChanged SyncConnected " + p}) {
		t.Fatalf("comparable watcher got %q", got)
	}

	var mu sync.Mutex
	calls := 0
	f := zk.WatcherFunc(func(e zk.Event) {
		mu.Lock()
		calls++
		mu.Unlock()
	})
	_, _, err = c.GetW(ctx, p, f)
	opsMust(t, err)
	_, _, err = c.ExistsW(ctx, p, f)
	opsMust(t, err)
	wtSet(t, other, p, "z")
	wtBarrier(t, c, p)
	mu.Lock()
	defer mu.Unlock()
	if calls != 2 {
		t.Fatalf("WatcherFunc registered twice was called %d times, want 2", calls)
	}
}

func testWatchPersistent(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	other := connect(t, s.proc.Addr)
	root := s.root(t, c)
	p := root + "/p"
	w := zk.NewChanWatcher(16)
	opsMust(t, c.AddWatch(ctx, p, w, zk.AddWatchPersistent)) // p need not exist
	wtCreate(t, other, p)
	wtSet(t, other, p, "1")
	wtSet(t, other, p, "2")
	wtCreate(t, other, p+"/c")
	wtSet(t, other, p+"/c", "x") // not p's
	wtCreate(t, other, p+"/c/g")
	wtDelete(t, other, p+"/c/g")
	wtDelete(t, other, p+"/c")
	wtDelete(t, other, p)
	wtCreate(t, other, p)
	wtExpect(t, c, w, p,
		wtEv{zk.EventNodeCreated, p},
		wtEv{zk.EventNodeDataChanged, p},
		wtEv{zk.EventNodeDataChanged, p},
		wtEv{zk.EventNodeChildrenChanged, p},
		wtEv{zk.EventNodeChildrenChanged, p},
		wtEv{zk.EventNodeDeleted, p},
		wtEv{zk.EventNodeCreated, p},
	)
	opsMust(t, c.CheckWatches(ctx, p, zk.WatcherAny))

	// Removing this watcher (WatcherAny: ZooKeeper 3.8 knows no
	// persistent watcher types) ends its events; the last watcher on p,
	// it takes the server's watch too.
	opsMust(t, c.RemoveWatches(ctx, p, w, zk.WatcherAny, false))
	wtExpect(t, c, w, p, wtEv{zk.EventPersistentWatchRemoved, p})
	err := c.CheckWatches(ctx, p, zk.WatcherAny)
	opsWantErr(t, err, zk.ErrNoWatcher, "checkWatches", p)
	wtSet(t, other, p, "3")
	wtCreate(t, other, p+"/d")
	wtExpect(t, c, w, p)
	err = c.RemoveWatches(ctx, p, w, zk.WatcherAny, false)
	opsWantErr(t, err, zk.ErrNoWatcher, "checkWatches", p)

	// Again, removed with every watcher: the server drops it too.
	w2 := zk.NewChanWatcher(16)
	opsMust(t, c.AddWatch(ctx, p, w2, zk.AddWatchPersistent))
	wtDelete(t, other, p+"/d")
	wtExpect(t, c, w2, p, wtEv{zk.EventNodeChildrenChanged, p})
	opsMust(t, c.RemoveWatches(ctx, p, nil, zk.WatcherAny, false))
	wtExpect(t, c, w2, p, wtEv{zk.EventPersistentWatchRemoved, p})
	err = c.CheckWatches(ctx, p, zk.WatcherAny)
	opsWantErr(t, err, zk.ErrNoWatcher, "checkWatches", p)
	wtSet(t, other, p, "4")
	wtExpect(t, c, w2, p)
}

func testWatchPersistentRecursive(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	other := connect(t, s.proc.Addr)
	root := s.root(t, c)
	p := root + "/p"
	w := zk.NewChanWatcher(16)
	opsMust(t, c.AddWatch(ctx, p, w, zk.AddWatchPersistentRecursive))
	wtCreate(t, other, root+"/p-sibling") // not under p
	wtCreate(t, other, p)
	wtCreate(t, other, p+"/a")
	wtCreate(t, other, p+"/a/b")
	wtSet(t, other, p+"/a/b", "x")
	wtSet(t, other, p, "y")
	wtDelete(t, other, p+"/a/b")
	wtDelete(t, other, p+"/a")
	wtSet(t, other, root+"/p-sibling", "z")
	wtExpect(t, c, w, p,
		wtEv{zk.EventNodeCreated, p},
		wtEv{zk.EventNodeCreated, p + "/a"},
		wtEv{zk.EventNodeCreated, p + "/a/b"},
		wtEv{zk.EventNodeDataChanged, p + "/a/b"},
		wtEv{zk.EventNodeDataChanged, p},
		wtEv{zk.EventNodeDeleted, p + "/a/b"},
		wtEv{zk.EventNodeDeleted, p + "/a"},
	)
	opsMust(t, c.RemoveWatches(ctx, p, nil, zk.WatcherAny, false))
	wtExpect(t, c, w, p, wtEv{zk.EventPersistentWatchRemoved, p})
	err := c.CheckWatches(ctx, p, zk.WatcherAny)
	opsWantErr(t, err, zk.ErrNoWatcher, "checkWatches", p)
	wtCreate(t, other, p+"/after")
	wtExpect(t, c, w, p+"/after")
}

func testWatchRemove(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	other := connect(t, s.proc.Addr)
	root := s.root(t, c)
	p := root + "/p"
	wtCreate(t, c, p)

	// One watcher of two: only it goes; the other still fires.
	w1, w2 := zk.NewChanWatcher(4), zk.NewChanWatcher(4)
	for _, w := range []*zk.ChanWatcher{w1, w2} {
		_, _, err := c.GetW(ctx, p, w)
		opsMust(t, err)
	}
	opsMust(t, c.RemoveWatches(ctx, p, w1, zk.WatcherData, false))
	wtExpect(t, c, w1, p, wtEv{zk.EventDataWatchRemoved, p})
	opsMust(t, c.CheckWatches(ctx, p, zk.WatcherData)) // w2 still needs it
	wtSet(t, other, p, "x")
	wtExpect(t, c, w1, p)
	wtExpect(t, c, w2, p, wtEv{zk.EventNodeDataChanged, p})

	// Every watcher of a type.
	for _, w := range []*zk.ChanWatcher{w1, w2} {
		_, _, err := c.ChildrenW(ctx, p, w)
		opsMust(t, err)
	}
	opsMust(t, c.RemoveWatches(ctx, p, nil, zk.WatcherChildren, false))
	wtExpect(t, c, w1, p, wtEv{zk.EventChildWatchRemoved, p})
	wtExpect(t, c, w2, p, wtEv{zk.EventChildWatchRemoved, p})
	err := c.CheckWatches(ctx, p, zk.WatcherChildren)
	opsWantErr(t, err, zk.ErrNoWatcher, "checkWatches", p)
	wtCreate(t, other, p+"/c")
	wtExpect(t, c, w1, p)
	wtExpect(t, c, w2, p)

	// WatcherAny takes a watcher's data and child watches, one event each.
	_, _, err = c.GetW(ctx, p, w1)
	opsMust(t, err)
	_, _, err = c.ChildrenW(ctx, p, w1)
	opsMust(t, err)
	_, _, err = c.ExistsW(ctx, p, w2) // another watcher's stays
	opsMust(t, err)
	opsMust(t, c.RemoveWatches(ctx, p, w1, zk.WatcherAny, false))
	wtBarrier(t, c, p)
	got := []wtEv{}
	for len(w1.C) > 0 {
		e := <-w1.C
		got = append(got, wtEv{e.Type, e.Path})
	}
	slices.SortFunc(got, func(a, b wtEv) int { return int(a.Type - b.Type) })
	if want := []wtEv{{zk.EventDataWatchRemoved, p}, {zk.EventChildWatchRemoved, p}}; !slices.Equal(got, want) {
		t.Fatalf("events after removing any watch: %v, want %v", got, want)
	}
	wtDelete(t, other, p+"/c")
	wtExpect(t, c, w1, p)
	wtExpect(t, c, w2, p)
	wtSet(t, other, p, "y")
	wtExpect(t, c, w2, p, wtEv{zk.EventNodeDataChanged, p})

	// Local removal works while connected as well.
	_, _, err = c.GetW(ctx, p, w1)
	opsMust(t, err)
	opsMust(t, c.RemoveWatches(ctx, p, w1, zk.WatcherData, true))
	wtExpect(t, c, w1, p, wtEv{zk.EventDataWatchRemoved, p})

	// Nothing to remove: ErrNoWatcher, from the client.
	err = c.RemoveWatches(ctx, p, nil, zk.WatcherData, false)
	opsWantErr(t, err, zk.ErrNoWatcher, "removeWatches", p)
	err = c.RemoveWatches(ctx, p, w1, zk.WatcherAny, false)
	opsWantErr(t, err, zk.ErrNoWatcher, "checkWatches", p)
	_, _, err = c.GetW(ctx, p, w2)
	opsMust(t, err)
	err = c.RemoveWatches(ctx, p, w1, zk.WatcherData, false) // w2's is not w1's
	opsWantErr(t, err, zk.ErrNoWatcher, "checkWatches", p)
	err = c.RemoveWatches(ctx, p, nil, zk.WatcherChildren, false)
	opsWantErr(t, err, zk.ErrNoWatcher, "removeWatches", p)
	wtExpect(t, c, w2, p)
}

func testWatchCheck(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	root := s.root(t, c)
	d, k, missing, none := root+"/data", root+"/kids", root+"/missing", root+"/none"
	wtCreate(t, c, d)
	wtCreate(t, c, k)
	wtCreate(t, c, none)
	w := zk.NewChanWatcher(4)
	_, _, err := c.GetW(ctx, d, w)
	opsMust(t, err)
	_, _, err = c.ChildrenW(ctx, k, w)
	opsMust(t, err)
	_, _, err = c.ExistsW(ctx, missing, w)
	opsMust(t, err)
	_, _, err = c.GetW(ctx, root+"/gone", w) // NoNode: no watch
	opsWantErr(t, err, zk.ErrNoNode, "getData", root+"/gone")
	tests := []struct {
		path string
		typ  zk.WatcherType
		ok   bool
	}{
		{d, zk.WatcherData, true},
		{d, zk.WatcherAny, true},
		{d, zk.WatcherChildren, false},
		{k, zk.WatcherChildren, true},
		{k, zk.WatcherAny, true},
		{k, zk.WatcherData, false},
		{missing, zk.WatcherData, true},
		{missing, zk.WatcherChildren, false},
		{none, zk.WatcherAny, false},
		{root + "/gone", zk.WatcherAny, false},
	}
	for _, tt := range tests {
		err := c.CheckWatches(ctx, tt.path, tt.typ)
		if tt.ok {
			if err != nil {
				t.Fatalf("checkWatches %s %d: %v", tt.path, tt.typ, err)
			}
		} else {
			opsWantErr(t, err, zk.ErrNoWatcher, "checkWatches", tt.path)
		}
	}
	// Checking removes nothing.
	wtSet(t, c, d, "x")
	wtExpect(t, c, w, d, wtEv{zk.EventNodeDataChanged, d})
}

// The asynchronous forms of the watch calls.
func testWatchAsync(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	other := connect(t, s.proc.Addr)
	root := s.root(t, c)
	p := root + "/p"
	w := zk.NewChanWatcher(16)

	r := opsAsync(t, c, func(done func(opsRes)) {
		c.ExistsAsync(ctx, p, w, func(ok bool, st *zk.Stat, err error) { done(opsRes{ok: ok, stat: st, err: err}) })
	})
	if r.err != nil || r.ok {
		t.Fatalf("existsAsync = %v, %v", r.ok, r.err)
	}
	wtCreate(t, other, p)
	wtExpect(t, c, w, p, wtEv{zk.EventNodeCreated, p})

	r = opsAsync(t, c, func(done func(opsRes)) {
		c.GetAsync(ctx, p, w, func(data []byte, st *zk.Stat, err error) { done(opsRes{data: data, stat: st, err: err}) })
	})
	opsMust(t, r.err)
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.ChildrenAsync(ctx, p, w, func(kids []string, st *zk.Stat, err error) { done(opsRes{children: kids, stat: st, err: err}) })
	})
	opsMust(t, r.err)
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.CheckWatchesAsync(ctx, p, zk.WatcherChildren, func(err error) { done(opsRes{err: err}) })
	})
	opsMust(t, r.err)
	wtSet(t, other, p, "x")
	wtCreate(t, other, p+"/c")
	wtExpect(t, c, w, p, wtEv{zk.EventNodeDataChanged, p}, wtEv{zk.EventNodeChildrenChanged, p})
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.CheckWatchesAsync(ctx, p, zk.WatcherAny, func(err error) { done(opsRes{err: err}) })
	})
	opsWantErr(t, r.err, zk.ErrNoWatcher, "checkWatches", p)

	rw := zk.NewChanWatcher(16)
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.AddWatchAsync(ctx, p, rw, zk.AddWatchPersistentRecursive, func(err error) { done(opsRes{err: err}) })
	})
	opsMust(t, r.err)
	wtSet(t, other, p+"/c", "y")
	wtExpect(t, c, rw, p+"/c", wtEv{zk.EventNodeDataChanged, p + "/c"})
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.RemoveWatchesAsync(ctx, p, rw, zk.WatcherAny, false, func(err error) { done(opsRes{err: err}) })
	})
	opsMust(t, r.err)
	wtExpect(t, c, rw, p, wtEv{zk.EventPersistentWatchRemoved, p})
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.RemoveWatchesAsync(ctx, p, rw, zk.WatcherAny, false, func(err error) { done(opsRes{err: err}) })
	})
	opsWantErr(t, r.err, zk.ErrNoWatcher, "checkWatches", p)
}

// The default watcher gets the session's state changes: SyncConnected when
// connected, Closed after Close, nothing in between here.
func testWatchDefaultWatcher(t *testing.T, s *testServer) {
	events := make(chan zk.Event, 16)
	c := connect(t, s.proc.Addr, zk.WithDefaultWatcher(zk.WatcherFunc(func(e zk.Event) { events <- e })))
	root := s.root(t, c)
	w := zk.NewChanWatcher(4)
	_, _, err := c.GetW(testCtx(t), root, w)
	opsMust(t, err)
	wtSet(t, c, root, "x") // a watch event goes to w, not to the default watcher
	wtExpect(t, c, w, root, wtEv{zk.EventNodeDataChanged, root})
	opsMust(t, c.Close())
	var got []zk.Event
	for len(got) == 0 || got[len(got)-1].State != zk.StateClosed {
		select {
		case e := <-events:
			got = append(got, e)
		case <-time.After(opsWait):
			t.Fatalf("no Closed event; got %+v", got)
		}
	}
	want := []zk.Event{
		{Type: zk.EventNone, State: zk.StateSyncConnected, Zxid: -1},
		{Type: zk.EventNone, State: zk.StateClosed, Zxid: -1},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("default watcher got %+v, want %+v", got, want)
	}
	if st := c.State(); st != zk.StateClosed {
		t.Fatalf("state %s after Close", st)
	}
}

// A watch event reaches its watcher before the callback of a later read on
// the same Conn that sees the change.
func testWatchOrder(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	other := connect(t, s.proc.Addr)
	root := s.root(t, c)
	for i := range 20 {
		p := fmt.Sprintf("%s/n%d", root, i)
		wtCreate(t, c, p)
		l := &wtLog{}
		_, _, err := c.GetW(ctx, p, l)
		opsMust(t, err)
		st := wtSet(t, other, p, "new")
		done := make(chan struct{})
		c.GetAsync(ctx, p, nil, func(data []byte, got *zk.Stat, err error) {
			if err != nil {
				l.add("callback error " + err.Error())
			} else {
				l.add(fmt.Sprintf("callback %s version %d", data, got.Version))
			}
			close(done)
		})
		select {
		case <-done:
		case <-time.After(opsWait):
			t.Fatal("getAsync callback did not run")
		}
		want := []string{
			"event NodeDataChanged SyncConnected " + p,
			fmt.Sprintf("callback new version %d", st.Version),
		}
		if got := l.get(); !slices.Equal(got, want) {
			t.Fatalf("delivered %q, want %q", got, want)
		}
	}
}

// A ChanWatcher with a watch set gets the final Closed event and its
// channel is closed; later calls fail with ErrClosed.
func testWatchChanWatcherClose(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	root := s.root(t, c)
	w := zk.NewChanWatcher(4)
	idle := zk.NewChanWatcher(4) // its watch fired: no longer registered
	_, _, err := c.GetW(ctx, root, w)
	opsMust(t, err)
	_, _, err = c.ExistsW(ctx, root+"/x", idle)
	opsMust(t, err)
	wtCreate(t, c, root+"/x")
	wtExpect(t, c, idle, root+"/x", wtEv{zk.EventNodeCreated, root + "/x"})
	opsMust(t, c.Close())
	var got []zk.Event
	for closed := false; !closed; {
		select {
		case e, ok := <-w.C:
			if !ok {
				closed = true
				break
			}
			got = append(got, e)
		case <-time.After(opsWait):
			t.Fatalf("channel not closed; got %+v", got)
		}
	}
	if want := []zk.Event{{Type: zk.EventNone, State: zk.StateClosed, Zxid: -1}}; !slices.Equal(got, want) {
		t.Fatalf("ChanWatcher got %+v before closing, want %+v", got, want)
	}
	if st := c.State(); st != zk.StateClosed {
		t.Fatalf("state %s after Close", st)
	}
	_, _, err = c.Get(ctx, root)
	if !errors.Is(err, zk.ErrClosed) {
		t.Fatalf("get after Close: %v", err)
	}
	r := opsAsync(t, c, func(done func(opsRes)) {
		c.GetAsync(ctx, root, w, func(_ []byte, _ *zk.Stat, err error) { done(opsRes{err: err}) })
	})
	opsWantErr(t, r.err, zk.ErrClosed, "getData", root)
	select {
	case e, ok := <-idle.C:
		t.Fatalf("a ChanWatcher without a watch got %+v, %v at Close", e, ok)
	default:
	}
}
