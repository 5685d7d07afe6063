package recipe_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
	"github.com/paddockhq/paddock/zk"
	"github.com/paddockhq/paddock/zk/recipe"
)

func init() {
	addServerTests(
		serverTest{"ConfigWatcher", testConfigWatcher},
		serverTest{"NodeCache", testNodeCache},
		serverTest{"TreeCache", testTreeCache},
		serverTest{"TreeCacheReconnect", testTreeCacheReconnect},
		serverTest{"CacheFallback", testCacheFallback},
		serverTest{"CacheCloseRemovesWatch", testCacheCloseRemovesWatch},
	)
}

// nodeSource is what ConfigWatcher and NodeCache have in common.
type nodeSource interface {
	Start(context.Context) error
	Value(context.Context) (recipe.Node, error)
	Updates() <-chan recipe.Node
	Close(context.Context) error
}

// checkNodeWatcher runs one scenario against a watcher of path: a writer
// on another session sets the znode fifty times as fast as it can; the
// values received never go back in version and the last one is the last
// written; then deletion and re-creation are seen.
func checkNodeWatcher(t *testing.T, ctx context.Context, w nodeSource, writer *zk.Conn, path string) {
	t.Helper()
	if _, err := writer.Create(ctx, path, []byte("0"), zk.OpenACL, zk.ModePersistent); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Close(ctx)
	first, err := w.Value(ctx)
	if err != nil || !first.Exists() {
		t.Fatalf("Value after Start = %+v, %v", first, err)
	}
	const n = 50
	done := make(chan error, 1)
	go func() {
		for i := 1; i <= n; i++ {
			if _, err := writer.Set(ctx, path, []byte(strconv.Itoa(i)), -1); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	last := int32(-1)
	deadline := time.After(20 * time.Second)
	for got := ""; got != strconv.Itoa(n); {
		select {
		case v, ok := <-w.Updates():
			if !ok {
				t.Fatal("Updates closed")
			}
			if !v.Exists() {
				t.Fatalf("update says the znode is gone: %+v", v)
			}
			if v.Stat.Version <= last {
				t.Fatalf("update version %d after %d: went back", v.Stat.Version, last)
			}
			if string(v.Data) != strconv.Itoa(int(v.Stat.Version)) {
				t.Fatalf("update data %q with version %d: data and Stat disagree", v.Data, v.Stat.Version)
			}
			last, got = v.Stat.Version, string(v.Data)
		case <-deadline:
			t.Fatalf("last update %d, want %d", last, n)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if v, err := w.Value(ctx); err != nil || string(v.Data) != strconv.Itoa(n) {
		t.Errorf("Value = %q, %v; want %d", v.Data, err, n)
	}
	if err := writer.Delete(ctx, path, -1); err != nil {
		t.Fatal(err)
	}
	awaitNode(t, w, func(v recipe.Node) bool { return !v.Exists() }, "deletion")
	if _, err := writer.Create(ctx, path, []byte("again"), zk.OpenACL, zk.ModePersistent); err != nil {
		t.Fatal(err)
	}
	awaitNode(t, w, func(v recipe.Node) bool { return v.Exists() && string(v.Data) == "again" }, "re-creation")
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for range w.Updates() {
	}
}

func awaitNode(t *testing.T, w nodeSource, cond func(recipe.Node) bool, what string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case v, ok := <-w.Updates():
			if !ok {
				t.Fatalf("Updates closed before the %s", what)
			}
			if cond(v) {
				return
			}
		case <-deadline:
			t.Fatalf("no update shows the %s", what)
		}
	}
}

// testConfigWatcher: the paper's configuration watcher (one-time watches)
// ends on the latest value and never goes back; a missing znode is a value.
func testConfigWatcher(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	cs := conns(t, s.proc.Addr, 2)
	missing := recipe.NewConfigWatcher(cs[0], root(t)+"-missing")
	if _, err := missing.Value(ctx); !errors.Is(err, recipe.ErrNotStarted) {
		t.Errorf("Value before Start: %v, want ErrNotStarted", err)
	}
	if err := missing.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := missing.Value(ctx); err != nil || v.Exists() {
		t.Errorf("Value of a missing znode = %+v, %v", v, err)
	}
	missing.Close(ctx)
	if err := missing.Err(); !errors.Is(err, recipe.ErrClosed) {
		t.Errorf("Err after Close = %v, want ErrClosed", err)
	}
	checkNodeWatcher(t, ctx, recipe.NewConfigWatcher(cs[0], root(t)), cs[1], root(t))
}

// testNodeCache: the same scenario for NodeCache with its persistent watch
// and with one-time watches forced; PersistentWatch says which is in use.
func testNodeCache(t *testing.T, s *testServer) {
	for _, tc := range []struct {
		name       string
		opts       []recipe.Option
		persistent bool
	}{
		{"persistent", nil, true},
		{"one-time", []recipe.Option{recipe.WithOneTimeWatches()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			cs := conns(t, s.proc.Addr, 2)
			c := recipe.NewNodeCache(cs[0], root(t), tc.opts...)
			checkNodeWatcher(t, ctx, c, cs[1], root(t))
			if c.PersistentWatch() != tc.persistent {
				t.Errorf("PersistentWatch = %v, want %v", c.PersistentWatch(), tc.persistent)
			}
		})
	}
}

// treeModes are the two ways a TreeCache keeps current.
var treeModes = []struct {
	name       string
	opts       []recipe.Option
	persistent bool
}{
	{"persistent", nil, true},
	{"one-time", []recipe.Option{recipe.WithOneTimeWatches()}, false},
}

// readTree reads the subtree at p from the server, as "path=data" lines.
func readTree(ctx context.Context, c *zk.Conn, p string) ([]string, error) {
	data, _, err := c.Get(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := []string{p + "=" + string(data)}
	children, _, err := c.Children(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, ch := range children {
		sub, err := readTree(ctx, c, p+"/"+ch)
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
	}
	slices.Sort(out)
	return out, nil
}

// cacheTree renders the cache as readTree does, checking that its child
// lists agree with its nodes.
func cacheTree(t *testing.T, c *recipe.TreeCache) []string {
	var out []string
	nodes := c.Nodes()
	for _, n := range nodes {
		out = append(out, n.Path+"="+string(n.Data))
		ch, _ := c.Children(n.Path)
		for _, name := range ch {
			if _, ok := c.Get(n.Path + "/" + name); !ok {
				t.Errorf("cache lists child %s of %s but has no such node", name, n.Path)
			}
		}
	}
	slices.Sort(out)
	return out
}

// awaitTree waits until the cache holds exactly the server's subtree.
func awaitTree(t *testing.T, ctx context.Context, c *recipe.TreeCache, conn *zk.Conn, root string) {
	t.Helper()
	want, err := readTree(ctx, conn, root)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(15 * time.Second)
	for {
		got := cacheTree(t, c)
		if slices.Equal(got, want) {
			return
		}
		select {
		case _, ok := <-c.Updates():
			if !ok {
				t.Fatalf("cache stopped (%v); has %v, want %v", c.Err(), got, want)
			}
		case <-deadline:
			t.Fatalf("cache has\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// randomOps makes n seeded random changes (create, set, delete of leaves
// and of whole branches) under root, which it creates if need be.
func randomOps(t *testing.T, ctx context.Context, c *zk.Conn, root string, seed uint64, n int) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	names := []string{"a", "b", "c"}
	for i := 0; i < n; i++ {
		// A random path of depth 1 to 3 under root.
		p := root
		for d := r.IntN(3); d >= 0; d-- {
			p += "/" + names[r.IntN(len(names))]
		}
		var err error
		switch r.IntN(3) {
		case 0:
			_, err = c.Create(ctx, p, fmt.Appendf(nil, "v%d", i), zk.OpenACL, zk.ModePersistent)
		case 1:
			_, err = c.Set(ctx, p, fmt.Appendf(nil, "v%d", i), -1)
		case 2:
			err = deleteTree(ctx, c, p)
		}
		if err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("op %d on %s: %v", i, p, err)
		}
	}
}

func deleteTree(ctx context.Context, c *zk.Conn, p string) error {
	children, _, err := c.Children(ctx, p)
	if err != nil {
		return err
	}
	for _, ch := range children {
		if err := deleteTree(ctx, c, p+"/"+ch); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
	}
	return c.Delete(ctx, p, -1)
}

// testTreeCache: a cache started before its root exists follows seeded
// random changes from another session, in both modes, until it holds
// exactly the server's subtree; the root's deletion empties it.
func testTreeCache(t *testing.T, s *testServer) {
	for _, m := range treeModes {
		t.Run(m.name, func(t *testing.T) {
			ctx := testCtx(t)
			cs := conns(t, s.proc.Addr, 2)
			top := root(t)
			c := recipe.NewTreeCache(cs[0], top, m.opts...)
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer c.Close(ctx)
			if c.PersistentWatch() != m.persistent {
				t.Errorf("PersistentWatch = %v, want %v", c.PersistentWatch(), m.persistent)
			}
			if n := c.Nodes(); len(n) != 0 {
				t.Fatalf("cache of a missing root has %v", n)
			}
			if _, err := cs[1].Create(ctx, top, []byte("root"), zk.OpenACL, zk.ModePersistent); err != nil {
				t.Fatal(err)
			}
			for round := range 3 {
				randomOps(t, ctx, cs[1], top, uint64(round), 60)
				awaitTree(t, ctx, c, cs[1], top)
			}
			if n, ok := c.Get(top); !ok || string(n.Data) != "root" || n.Stat == nil {
				t.Errorf("Get(root) = %+v, %v", n, ok)
			}
			if err := deleteTree(ctx, cs[1], top); err != nil {
				t.Fatal(err)
			}
			awaitTree(t, ctx, c, cs[1], top)
			if _, err := cs[1].Create(ctx, top, []byte("back"), zk.OpenACL, zk.ModePersistent); err != nil {
				t.Fatal(err)
			}
			awaitTree(t, ctx, c, cs[1], top)
			if err := c.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if !errors.Is(c.Err(), recipe.ErrClosed) {
				t.Errorf("Err after Close = %v", c.Err())
			}
		})
	}
}

// testTreeCacheReconnect: changes made while the cache's session is
// disconnected (its redial refused, for less than the session timeout) are
// in the cache once it is back, in both modes: a persistent watch is not
// told of them, so the cache must read the tree again.
func testTreeCacheReconnect(t *testing.T, s *testServer) {
	for _, m := range treeModes {
		t.Run(m.name, func(t *testing.T) {
			ctx := testCtx(t)
			var fn faultNet
			states := newStateLog()
			a := connect(t, s.proc.Addr, fn.option(), states.option())
			b := connect(t, s.proc.Addr)
			top := root(t)
			if _, err := b.Create(ctx, top, []byte("root"), zk.OpenACL, zk.ModePersistent); err != nil {
				t.Fatal(err)
			}
			randomOps(t, ctx, b, top, 7, 30)
			c := recipe.NewTreeCache(a, top, m.opts...)
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer c.Close(ctx)
			awaitTree(t, ctx, c, b, top)
			before := cacheTree(t, c)
			n := states.len()
			fn.cut(true)
			states.await(t, n, zk.StateDisconnected, 10*time.Second)
			randomOps(t, ctx, b, top, 8, 30)
			want, err := readTree(ctx, b, top)
			if err != nil {
				t.Fatal(err)
			}
			if slices.Equal(before, want) {
				t.Fatal("the changes while disconnected changed nothing; pick another seed")
			}
			fn.heal()
			states.await(t, n, zk.StateSyncConnected, 10*time.Second)
			awaitTree(t, ctx, c, b, top)
			if c.Err() != nil {
				t.Errorf("cache stopped: %v", c.Err())
			}
		})
	}
}

// noAddWatch is a dialer whose connections rewrite every addWatch request
// (opcode 106) into an opcode the server does not know (999), so that the
// server answers UNIMPLEMENTED as a server older than 3.6 answers addWatch.
// The other requests pass unchanged.
func noAddWatch() zk.Option {
	return zk.WithDialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &filterConn{Conn: nc, filter: func(frame []byte) verdict {
			if opcode(frame) == 106 {
				binary.BigEndian.PutUint32(frame[8:12], 999)
			}
			return send
		}}, nil
	})
}

// testCacheFallback: against a server that refuses addWatch, NodeCache and
// TreeCache find out (ErrUnimplemented) and keep current with one-time
// watches.
func testCacheFallback(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	a := connect(t, s.proc.Addr, noAddWatch())
	b := connect(t, s.proc.Addr)
	top := root(t)
	if err := a.AddWatch(ctx, top, zk.WatcherFunc(func(zk.Event) {}), zk.AddWatchPersistent); !errors.Is(err, zk.ErrUnimplemented) {
		t.Fatalf("AddWatch through the rewriter: %v, want ErrUnimplemented", err)
	}
	nc := recipe.NewNodeCache(a, top)
	tc := recipe.NewTreeCache(a, top)
	for _, start := range []func(context.Context) error{nc.Start, tc.Start} {
		if err := start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	defer nc.Close(ctx)
	defer tc.Close(ctx)
	if nc.PersistentWatch() || tc.PersistentWatch() {
		t.Fatalf("PersistentWatch = %v, %v; want the one-time fallback", nc.PersistentWatch(), tc.PersistentWatch())
	}
	if _, err := b.Create(ctx, top, []byte("root"), zk.OpenACL, zk.ModePersistent); err != nil {
		t.Fatal(err)
	}
	awaitNode(t, nc, func(n recipe.Node) bool { return string(n.Data) == "root" }, "creation")
	randomOps(t, ctx, b, top, 3, 40)
	awaitTree(t, ctx, tc, b, top)
	if _, err := b.Set(ctx, top, []byte("changed"), -1); err != nil {
		t.Fatal(err)
	}
	awaitNode(t, nc, func(n recipe.Node) bool { return string(n.Data) == "changed" }, "change")
	if err := tc.Err(); err != nil {
		t.Errorf("tree cache stopped: %v", err)
	}
}

// testCacheCloseRemovesWatch: a NodeCache or TreeCache that used a
// persistent watch leaves no watch on the server once closed (the server's
// wchp lists the paths it watches); otherwise the server would go on
// sending every change of the subtree to a session that drops them.
func testCacheCloseRemovesWatch(t *testing.T, s *testServer) {
	type cache interface {
		Start(context.Context) error
		Close(context.Context) error
		PersistentWatch() bool
	}
	for _, tc := range []struct {
		name string
		new  func(*zk.Conn, string) cache
	}{
		{"NodeCache", func(c *zk.Conn, p string) cache { return recipe.NewNodeCache(c, p) }},
		{"TreeCache", func(c *zk.Conn, p string) cache { return recipe.NewTreeCache(c, p) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			conn := connect(t, s.proc.Addr)
			p := root(t)
			if _, err := conn.Create(ctx, p, nil, zk.OpenACL, zk.ModePersistent); err != nil {
				t.Fatal(err)
			}
			watched := func() bool {
				out, err := zktest.FourLetterWord(s.proc.Addr, "wchp")
				if err != nil {
					t.Fatal(err)
				}
				return slices.Contains(strings.Split(out, "\n"), p)
			}
			c := tc.new(conn, p)
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if !c.PersistentWatch() {
				t.Fatal("the cache does not use a persistent watch")
			}
			if !watched() {
				t.Fatalf("wchp does not list %s while the cache runs", p)
			}
			if err := c.Close(ctx); err != nil {
				t.Fatal(err)
			}
			// Close waits for the removal's answer: nothing to wait for.
			if watched() {
				t.Errorf("wchp still lists %s after Close: the server keeps the cache's watch", p)
			}
		})
	}
}
