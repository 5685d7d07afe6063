package zk_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/paddockhq/paddock/zk"
)

// ---- other reads ----

func testOpsEphemerals(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	other := connect(t, s.proc.Addr)
	root := s.root(t, c)
	e1 := opsCreate(t, c, root+"/e1", nil, zk.ModeEphemeral)
	e2 := opsCreate(t, c, root+"/e2-", nil, zk.ModeEphemeralSequential)
	opsCreate(t, c, root+"/p", nil, zk.ModePersistent)
	e3 := opsCreate(t, c, root+"/p/e3", nil, zk.ModeEphemeral)
	opsCreate(t, other, root+"/e4", nil, zk.ModeEphemeral)
	tests := []struct {
		conn   *zk.Conn
		prefix string
		want   []string
	}{
		{c, "/", []string{e1, e2, e3}},
		{c, root, []string{e1, e2, e3}},
		{c, root + "/e", []string{e1, e2}},
		{c, root + "/p", []string{e3}},
		{c, root + "/none", nil},
		{other, root, []string{root + "/e4"}},
	}
	for _, tt := range tests {
		got, err := tt.conn.GetEphemerals(ctx, tt.prefix)
		opsMust(t, err)
		opsSameStrings(t, "getEphemerals "+tt.prefix, got, tt.want)
	}
}

func testOpsAllChildrenNumber(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	root := s.root(t, c)
	for _, p := range []string{"/a", "/a/b", "/a/b/c", "/a/b2", "/d"} {
		opsCreate(t, c, root+p, nil, zk.ModePersistent)
	}
	opsCreate(t, c, root+"/d/e", nil, zk.ModeEphemeral)
	for p, want := range map[string]int{"": 6, "/a": 3, "/a/b": 1, "/d": 1, "/a/b/c": 0} {
		n, err := c.GetAllChildrenNumber(ctx, root+p)
		if err != nil || n != want {
			t.Fatalf("getAllChildrenNumber %s = %d, %v; want %d", root+p, n, err, want)
		}
	}
	_, err := c.GetAllChildrenNumber(ctx, root+"/missing")
	opsWantErr(t, err, zk.ErrNoNode, "getAllChildrenNumber", root+"/missing")
}

// ---- asynchronous forms ----

func testOpsAsync(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	root := s.root(t, c)
	p := root + "/p"

	r := opsAsync(t, c, func(done func(opsRes)) {
		c.CreateAsync(ctx, p, []byte("v0"), zk.OpenACL, zk.ModePersistent, func(name string, err error) { done(opsRes{name: name, err: err}) })
	})
	if r.err != nil || r.name != p {
		t.Fatalf("createAsync = %q, %v", r.name, r.err)
	}
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.CreateAsync(ctx, p, nil, zk.OpenACL, zk.ModePersistent, func(name string, err error) { done(opsRes{name: name, err: err}) })
	})
	opsWantErr(t, r.err, zk.ErrNodeExists, "create", p)
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.Create2Async(ctx, p+"/s-", nil, zk.OpenACL, zk.ModeEphemeralSequential, func(name string, st *zk.Stat, err error) {
			done(opsRes{name: name, stat: st, err: err})
		})
	})
	if r.err != nil || opsSeq(t, r.name, p+"/s-") != 0 || r.stat.EphemeralOwner != c.SessionID() {
		t.Fatalf("create2Async = %q, %+v, %v", r.name, r.stat, r.err)
	}
	seq := r.name
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.CreateTTLAsync(ctx, p+"/ttl", nil, zk.OpenACL, zk.ModePersistentWithTTL, time.Minute, func(name string, st *zk.Stat, err error) {
			done(opsRes{name: name, stat: st, err: err})
		})
	})
	if r.err != nil || r.name != p+"/ttl" || r.stat.Version != 0 || r.stat.Czxid == 0 {
		t.Fatalf("createTTLAsync = %q, %+v, %v", r.name, r.stat, r.err)
	}
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.ExistsAsync(ctx, p, nil, func(ok bool, st *zk.Stat, err error) { done(opsRes{ok: ok, stat: st, err: err}) })
	})
	if r.err != nil || !r.ok || r.stat.NumChildren != 2 {
		t.Fatalf("existsAsync = %v, %+v, %v", r.ok, r.stat, r.err)
	}
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.ExistsAsync(ctx, p+"/none", nil, func(ok bool, st *zk.Stat, err error) { done(opsRes{ok: ok, stat: st, err: err}) })
	})
	if r.err != nil || r.ok || r.stat != nil {
		t.Fatalf("existsAsync of a missing znode = %v, %+v, %v", r.ok, r.stat, r.err)
	}
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.SetAsync(ctx, p, []byte("v1"), 0, func(st *zk.Stat, err error) { done(opsRes{stat: st, err: err}) })
	})
	if r.err != nil || r.stat.Version != 1 {
		t.Fatalf("setAsync = %+v, %v", r.stat, r.err)
	}
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.SetAsync(ctx, p, []byte("v1"), 0, func(st *zk.Stat, err error) { done(opsRes{stat: st, err: err}) })
	})
	opsWantErr(t, r.err, zk.ErrBadVersion, "setData", p)
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.GetAsync(ctx, p, nil, func(data []byte, st *zk.Stat, err error) { done(opsRes{data: data, stat: st, err: err}) })
	})
	if r.err != nil || string(r.data) != "v1" || r.stat.Version != 1 {
		t.Fatalf("getAsync = %q, %+v, %v", r.data, r.stat, r.err)
	}
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.GetAsync(ctx, p+"/none", nil, func(data []byte, st *zk.Stat, err error) { done(opsRes{data: data, stat: st, err: err}) })
	})
	opsWantErr(t, r.err, zk.ErrNoNode, "getData", p+"/none")
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.ChildrenAsync(ctx, p, nil, func(kids []string, st *zk.Stat, err error) { done(opsRes{children: kids, stat: st, err: err}) })
	})
	if r.err != nil || r.stat.NumChildren != 2 {
		t.Fatalf("childrenAsync = %q, %+v, %v", r.children, r.stat, r.err)
	}
	opsSameStrings(t, "childrenAsync", r.children, []string{seq[len(p)+1:], "ttl"})
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.SetACLAsync(ctx, p, zk.WorldACL(zk.PermAll&^zk.PermDelete), 0, func(st *zk.Stat, err error) { done(opsRes{stat: st, err: err}) })
	})
	if r.err != nil || r.stat.Aversion != 1 {
		t.Fatalf("setACLAsync = %+v, %v", r.stat, r.err)
	}
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.GetACLAsync(ctx, p, func(acl []zk.ACL, st *zk.Stat, err error) { done(opsRes{acl: acl, stat: st, err: err}) })
	})
	if r.err != nil || !slices.Equal(r.acl, zk.WorldACL(zk.PermAll&^zk.PermDelete)) || r.stat.Aversion != 1 {
		t.Fatalf("getACLAsync = %+v, %+v, %v", r.acl, r.stat, r.err)
	}
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.DeleteAsync(ctx, p+"/ttl", -1, func(err error) { done(opsRes{err: err}) })
	})
	opsWantErr(t, r.err, zk.ErrNoAuth, "delete", p+"/ttl") // the parent lacks PermDelete now
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.SyncAsync(ctx, p, func(path string, err error) { done(opsRes{name: path, err: err}) })
	})
	if r.err != nil || r.name != p {
		t.Fatalf("syncAsync = %q, %v", r.name, r.err)
	}
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.MultiAsync(ctx, []zk.Op{&zk.CheckOp{Path: p, Version: 1}, &zk.CreateOp{Path: p + "/m", ACL: zk.OpenACL}},
			func(res []zk.OpResult, err error) { done(opsRes{results: res, err: err}) })
	})
	if r.err != nil || len(r.results) != 2 || r.results[1].Path != p+"/m" {
		t.Fatalf("multiAsync = %+v, %v", r.results, r.err)
	}
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.MultiAsync(ctx, []zk.Op{&zk.CheckOp{Path: p, Version: 0}, &zk.CreateOp{Path: p + "/m2", ACL: zk.OpenACL}},
			func(res []zk.OpResult, err error) { done(opsRes{results: res, err: err}) })
	})
	opsWantErr(t, r.err, zk.ErrBadVersion, "multi", "")
	if len(r.results) != 2 || !errors.Is(r.results[0].Err, zk.ErrBadVersion) || !errors.Is(r.results[1].Err, zk.ErrRuntimeInconsistency) {
		t.Fatalf("failed multiAsync results %+v", r.results)
	}
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.MultiReadAsync(ctx, []zk.Op{&zk.GetDataOp{Path: p}, &zk.GetChildrenOp{Path: p + "/none"}},
			func(res []zk.OpResult, err error) { done(opsRes{results: res, err: err}) })
	})
	if r.err != nil || len(r.results) != 2 || string(r.results[0].Data) != "v1" || !errors.Is(r.results[1].Err, zk.ErrNoNode) {
		t.Fatalf("multiReadAsync = %+v, %v", r.results, r.err)
	}
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.GetEphemeralsAsync(ctx, root, func(paths []string, err error) { done(opsRes{paths: paths, err: err}) })
	})
	if r.err != nil || !slices.Equal(r.paths, []string{seq}) {
		t.Fatalf("getEphemeralsAsync = %q, %v", r.paths, r.err)
	}
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.GetAllChildrenNumberAsync(ctx, root, func(n int, err error) { done(opsRes{n: n, err: err}) })
	})
	if r.err != nil || r.n != 4 {
		t.Fatalf("getAllChildrenNumberAsync = %d, %v", r.n, r.err)
	}
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.AddAuthAsync(ctx, "digest", []byte("carol:pw"), func(err error) { done(opsRes{err: err}) })
	})
	opsMust(t, r.err)
	r = opsAsync(t, c, func(done func(opsRes)) {
		c.WhoAmIAsync(ctx, func(ids []zk.ClientInfo, err error) { done(opsRes{ids: ids, err: err}) })
	})
	if r.err != nil || !slices.Contains(r.ids, zk.ClientInfo{AuthScheme: "digest", User: "carol"}) {
		t.Fatalf("whoAmIAsync = %+v, %v", r.ids, r.err)
	}
}

// Argument errors of asynchronous calls reach the callback, on the
// delivery goroutine, once, and nothing is sent.
func testOpsAsyncBadArguments(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	w := &opsWire{}
	c := connect(t, s.proc.Addr, w.option())
	tests := []struct {
		op, path string
		want     error
		start    func(done func(opsRes))
	}{
		{"getData", "bad", zk.ErrInvalidPath, func(done func(opsRes)) {
			c.GetAsync(ctx, "bad", nil, func(_ []byte, _ *zk.Stat, err error) { done(opsRes{err: err}) })
		}},
		{"create", "/x", zk.ErrBadArguments, func(done func(opsRes)) {
			c.CreateAsync(ctx, "/x", nil, zk.OpenACL, zk.CreateMode(77), func(_ string, err error) { done(opsRes{err: err}) })
		}},
		{"createTTL", "/x", zk.ErrBadArguments, func(done func(opsRes)) {
			c.CreateTTLAsync(ctx, "/x", nil, zk.OpenACL, zk.ModePersistentWithTTL, 0, func(_ string, _ *zk.Stat, err error) { done(opsRes{err: err}) })
		}},
		{"create2", "/x/", zk.ErrInvalidPath, func(done func(opsRes)) {
			c.Create2Async(ctx, "/x/", nil, zk.OpenACL, zk.ModePersistent, func(_ string, _ *zk.Stat, err error) { done(opsRes{err: err}) })
		}},
		{"delete", "//", zk.ErrInvalidPath, func(done func(opsRes)) {
			c.DeleteAsync(ctx, "//", -1, func(err error) { done(opsRes{err: err}) })
		}},
		{"exists", "", zk.ErrInvalidPath, func(done func(opsRes)) {
			c.ExistsAsync(ctx, "", nil, func(_ bool, _ *zk.Stat, err error) { done(opsRes{err: err}) })
		}},
		{"setData", "x", zk.ErrInvalidPath, func(done func(opsRes)) {
			c.SetAsync(ctx, "x", nil, -1, func(_ *zk.Stat, err error) { done(opsRes{err: err}) })
		}},
		{"getChildren2", "/.", zk.ErrInvalidPath, func(done func(opsRes)) {
			c.ChildrenAsync(ctx, "/.", nil, func(_ []string, _ *zk.Stat, err error) { done(opsRes{err: err}) })
		}},
		{"getACL", "/a/", zk.ErrInvalidPath, func(done func(opsRes)) {
			c.GetACLAsync(ctx, "/a/", func(_ []zk.ACL, _ *zk.Stat, err error) { done(opsRes{err: err}) })
		}},
		{"setACL", "a", zk.ErrInvalidPath, func(done func(opsRes)) {
			c.SetACLAsync(ctx, "a", zk.OpenACL, -1, func(_ *zk.Stat, err error) { done(opsRes{err: err}) })
		}},
		{"sync", "/a\x00", zk.ErrInvalidPath, func(done func(opsRes)) {
			c.SyncAsync(ctx, "/a\x00", func(_ string, err error) { done(opsRes{err: err}) })
		}},
		{"multi", "", zk.ErrBadArguments, func(done func(opsRes)) {
			c.MultiAsync(ctx, []zk.Op{nil}, func(_ []zk.OpResult, err error) { done(opsRes{err: err}) })
		}},
		{"multiRead", "/x", zk.ErrBadArguments, func(done func(opsRes)) {
			c.MultiReadAsync(ctx, []zk.Op{&zk.DeleteOp{Path: "/x"}}, func(_ []zk.OpResult, err error) { done(opsRes{err: err}) })
		}},
		{"getEphemerals", "e", zk.ErrInvalidPath, func(done func(opsRes)) {
			c.GetEphemeralsAsync(ctx, "e", func(_ []string, err error) { done(opsRes{err: err}) })
		}},
		{"getAllChildrenNumber", "/../a", zk.ErrInvalidPath, func(done func(opsRes)) {
			c.GetAllChildrenNumberAsync(ctx, "/../a", func(_ int, err error) { done(opsRes{err: err}) })
		}},
		{"addWatch", "/x", zk.ErrBadArguments, func(done func(opsRes)) {
			c.AddWatchAsync(ctx, "/x", nil, zk.AddWatchPersistent, func(err error) { done(opsRes{err: err}) })
		}},
		{"checkWatches", "/x", zk.ErrBadArguments, func(done func(opsRes)) {
			c.CheckWatchesAsync(ctx, "/x", zk.WatcherType(0), func(err error) { done(opsRes{err: err}) })
		}},
		{"removeWatches", "/x", zk.ErrNoWatcher, func(done func(opsRes)) {
			c.RemoveWatchesAsync(ctx, "/x", nil, zk.WatcherAny, false, func(err error) { done(opsRes{err: err}) })
		}},
	}
	for _, tt := range tests {
		opsNothingSent(t, c, w, func() {
			r := opsAsync(t, c, tt.start)
			opsWantErr(t, r.err, tt.want, tt.op, tt.path)
		})
	}
}

// ---- chroot ----

func testOpsChroot(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	top := connect(t, s.proc.Addr)
	root := s.root(t, top)
	base := opsCreate(t, top, root+"/chroot", nil, zk.ModePersistent)
	c := connect(t, s.proc.Addr+base)

	if name := opsCreate(t, c, "/a", []byte("a"), zk.ModePersistent); name != "/a" {
		t.Fatalf("create in chroot = %q, want /a", name)
	}
	name, st, err := c.Create2(ctx, "/b", []byte("b"), zk.OpenACL, zk.ModeEphemeral)
	opsMust(t, err)
	if name != "/b" || st.EphemeralOwner != c.SessionID() {
		t.Fatalf("create2 in chroot = %q, %+v", name, st)
	}
	seq := opsCreate(t, c, "/a/s-", nil, zk.ModePersistentSequential)
	opsSeq(t, seq, "/a/s-")
	res, err := c.Multi(ctx, &zk.CreateOp{Path: "/m-", ACL: zk.OpenACL, Mode: zk.ModeEphemeralSequential},
		&zk.SetDataOp{Path: "/a", Data: []byte("a1"), Version: -1})
	opsMust(t, err)
	mseq := res[0].Path
	opsSeq(t, mseq, "/m-")
	if got, err := c.Sync(ctx, "/a"); err != nil || got != "/a" {
		t.Fatalf("sync in chroot = %q, %v", got, err)
	}
	if got, err := c.Sync(ctx, "/"); err != nil || got != "/" {
		t.Fatalf("sync of the chroot = %q, %v", got, err)
	}
	ephs, err := c.GetEphemerals(ctx, "/")
	opsMust(t, err)
	opsSameStrings(t, "getEphemerals in chroot", ephs, []string{"/b", mseq})
	kids, _, err := c.Children(ctx, "/")
	opsMust(t, err)
	opsSameStrings(t, "children of the chroot", kids, []string{"a", "b", mseq[1:]})
	rr, err := c.MultiRead(ctx, &zk.GetDataOp{Path: "/a"}, &zk.GetChildrenOp{Path: "/a"})
	opsMust(t, err)
	if string(rr[0].Data) != "a1" || !slices.Equal(rr[1].Children, []string{seq[len("/a/"):]}) {
		t.Fatalf("multiRead in chroot = %+v", rr)
	}
	// The data is under the chroot.
	for _, p := range []string{"/a", "/b", seq, mseq} {
		opsStat(t, top, base+p)
	}
	if data, _, err := top.Get(ctx, base+"/a"); err != nil || string(data) != "a1" {
		t.Fatalf("get %s/a = %q, %v", base, data, err)
	}
	// Errors name the caller's path.
	_, _, err = c.Get(ctx, "/none")
	opsWantErr(t, err, zk.ErrNoNode, "getData", "/none")
	// Watch events carry paths relative to the chroot.
	w := zk.NewChanWatcher(4)
	_, _, err = c.GetW(ctx, "/a", w)
	opsMust(t, err)
	_, _, err = c.ExistsW(ctx, "/c", w)
	opsMust(t, err)
	_, err = top.Set(ctx, base+"/a", nil, -1)
	opsMust(t, err)
	opsCreate(t, top, base+"/c", nil, zk.ModePersistent)
	for _, want := range []zk.Event{{Type: zk.EventNodeDataChanged, Path: "/a"}, {Type: zk.EventNodeCreated, Path: "/c"}} {
		select {
		case e := <-w.C:
			if e.Type != want.Type || e.Path != want.Path || e.State != zk.StateSyncConnected {
				t.Fatalf("event %+v, want %s %s", e, want.Type, want.Path)
			}
		case <-time.After(opsWait):
			t.Fatalf("no %s event", want.Type)
		}
	}
	// A persistent watch on the chroot itself reports "/".
	pw := zk.NewChanWatcher(4)
	opsMust(t, c.AddWatch(ctx, "/", pw, zk.AddWatchPersistent))
	_, err = top.Set(ctx, base, []byte("x"), -1)
	opsMust(t, err)
	select {
	case e := <-pw.C:
		if e.Type != zk.EventNodeDataChanged || e.Path != "/" {
			t.Fatalf("event on the chroot %+v, want NodeDataChanged /", e)
		}
	case <-time.After(opsWait):
		t.Fatal("no event on the chroot")
	}
}

// ---- contexts ----

// A context that is already done fails the call with its error, and nothing
// is sent.
func testOpsCtxDoneBefore(t *testing.T, s *testServer) {
	w := &opsWire{}
	c := connect(t, s.proc.Addr, w.option())
	root := s.root(t, c)
	p := root + "/p"
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	dctx, dcancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer dcancel()
	calls := []struct {
		op, path string
		call     func(ctx context.Context) error
	}{
		{"create", p, func(ctx context.Context) error {
			_, err := c.Create(ctx, p, nil, zk.OpenACL, zk.ModePersistent)
			return err
		}},
		{"getData", p, func(ctx context.Context) error { _, _, err := c.Get(ctx, p); return err }},
		{"exists", p, func(ctx context.Context) error { _, _, err := c.ExistsW(ctx, p, zk.NewChanWatcher(1)); return err }},
		{"multi", "", func(ctx context.Context) error {
			_, err := c.Multi(ctx, &zk.CreateOp{Path: p, ACL: zk.OpenACL})
			return err
		}},
		{"whoAmI", "", func(ctx context.Context) error { _, err := c.WhoAmI(ctx); return err }},
		{"addWatch", p, func(ctx context.Context) error {
			return c.AddWatch(ctx, p, zk.NewChanWatcher(1), zk.AddWatchPersistent)
		}},
	}
	for _, cl := range calls {
		opsNothingSent(t, c, w, func() { opsWantErr(t, cl.call(cctx), context.Canceled, cl.op, cl.path) })
		opsNothingSent(t, c, w, func() { opsWantErr(t, cl.call(dctx), context.DeadlineExceeded, cl.op, cl.path) })
	}
	opsNothingSent(t, c, w, func() {
		r := opsAsync(t, c, func(done func(opsRes)) {
			c.CreateAsync(cctx, p, nil, zk.OpenACL, zk.ModePersistent, func(name string, err error) { done(opsRes{name: name, err: err}) })
		})
		opsWantErr(t, r.err, context.Canceled, "create", p)
	})
	opsAbsent(t, c, p)
	// No watch was left by the calls that did not go.
	if err := c.CheckWatches(testCtx(t), p, zk.WatcherAny); !errors.Is(err, zk.ErrNoWatcher) {
		t.Fatalf("checkWatches after cancelled watch calls: %v", err)
	}
}

// Cancelling a context while the call waits returns at once; the request
// itself still goes, and is applied.
func testOpsCtxCancelWaiting(t *testing.T, s *testServer) {
	w := &opsWire{}
	c := connect(t, s.proc.Addr, w.option())
	root := s.root(t, c)
	p := root + "/abandoned"

	w.hold.Lock() // nothing reaches the server
	held := true
	defer func() {
		if held {
			w.hold.Unlock()
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(50*time.Millisecond, cancel)
	defer timer.Stop()
	start := time.Now()
	_, err := c.Create(ctx, p, []byte("late"), zk.OpenACL, zk.ModePersistent)
	opsWantErr(t, err, context.Canceled, "create", p)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cancelled create returned after %v", d)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	_, err = c.MultiRead(ctx2, &zk.GetDataOp{Path: p})
	opsWantErr(t, err, context.DeadlineExceeded, "multiRead", "")

	w.hold.Unlock()
	held = false
	// The session answers in order: a read now sees the abandoned create.
	data, _, err := c.Get(testCtx(t), p)
	if err != nil || string(data) != "late" {
		t.Fatalf("get after the abandoned create = %q, %v", data, err)
	}
}

// An AddAuth refused for a done context does not send its credentials, not
// even later: after a reconnection the session has only the identities it
// had.
func testOpsCtxDoneAddAuth(t *testing.T, s *testServer) {
	w := &opsWire{}
	events := make(chan zk.Event, 16)
	c := connect(t, s.proc.Addr, w.option(), zk.WithDefaultWatcher(zk.WatcherFunc(func(e zk.Event) { events <- e })))
	opsMust(t, c.AddAuth(testCtx(t), "digest", []byte("real:pw")))
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	opsNothingSent(t, c, w, func() {
		opsWantErr(t, c.AddAuth(cctx, "digest", []byte("ghost:pw")), context.Canceled, "auth", "")
		r := opsAsync(t, c, func(done func(opsRes)) {
			c.AddAuthAsync(cctx, "digest", []byte("ghost2:pw"), func(err error) { done(opsRes{err: err}) })
		})
		opsWantErr(t, r.err, context.Canceled, "auth", "")
	})
	w.drop()
	for _, want := range []zk.State{zk.StateSyncConnected, zk.StateDisconnected, zk.StateSyncConnected} {
		select {
		case e := <-events:
			if e.Type != zk.EventNone || e.State != want {
				t.Fatalf("default watcher got %+v, want %s", e, want)
			}
		case <-time.After(opsWait):
			t.Fatalf("no %s event", want)
		}
	}
	ids, err := c.WhoAmI(testCtx(t))
	opsMust(t, err)
	want := []zk.ClientInfo{{AuthScheme: "ip", User: "127.0.0.1"}, {AuthScheme: "digest", User: "real"}}
	if !slices.Equal(opsSortedIDs(ids), opsSortedIDs(want)) {
		t.Fatalf("whoAmI after reconnecting = %+v, want %+v", ids, want)
	}
}
