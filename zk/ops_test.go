package zk_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/zk"
)

// Tests of every operation of the client against both servers. Helpers and
// types here start with "ops" so that they do not meet other test files.

func init() {
	addServerTests(
		serverTest{"ops-create-modes", testOpsCreateModes},
		serverTest{"ops-create2-stat", testOpsCreate2Stat},
		serverTest{"ops-create-ttl", testOpsCreateTTL},
		serverTest{"ops-create-errors", testOpsCreateErrors},
		serverTest{"ops-bad-arguments", testOpsBadArguments},
		serverTest{"ops-invalid-path", testOpsInvalidPath},
		serverTest{"ops-delete", testOpsDelete},
		serverTest{"ops-exists-get-set", testOpsExistsGetSet},
		serverTest{"ops-children", testOpsChildren},
		serverTest{"ops-acl", testOpsACL},
		serverTest{"ops-multi", testOpsMulti},
		serverTest{"ops-multi-failure", testOpsMultiFailure},
		serverTest{"ops-txn", testOpsTxn},
		serverTest{"ops-multiread", testOpsMultiRead},
		serverTest{"ops-ephemerals", testOpsEphemerals},
		serverTest{"ops-all-children-number", testOpsAllChildrenNumber},
		serverTest{"ops-whoami", testOpsWhoAmI},
		serverTest{"ops-auth-failed", testOpsAuthFailed},
		serverTest{"ops-async", testOpsAsync},
		serverTest{"ops-async-bad-arguments", testOpsAsyncBadArguments},
		serverTest{"ops-chroot", testOpsChroot},
		serverTest{"ops-ctx-done-before", testOpsCtxDoneBefore},
		serverTest{"ops-ctx-cancel-waiting", testOpsCtxCancelWaiting},
		serverTest{"ops-ctx-done-addauth", testOpsCtxDoneAddAuth},
	)
}

// opsWait bounds every wait for a callback or an event.
const opsWait = 10 * time.Second

func opsMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func opsCreate(t *testing.T, c *zk.Conn, path string, data []byte, mode zk.CreateMode) string {
	t.Helper()
	name, err := c.Create(testCtx(t), path, data, zk.OpenACL, mode)
	if err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
	return name
}

func opsStat(t *testing.T, c *zk.Conn, path string) *zk.Stat {
	t.Helper()
	ok, st, err := c.Exists(testCtx(t), path)
	if err != nil || !ok {
		t.Fatalf("exists %s = %v, %v", path, ok, err)
	}
	return st
}

func opsAbsent(t *testing.T, c *zk.Conn, path string) {
	t.Helper()
	ok, st, err := c.Exists(testCtx(t), path)
	if err != nil || ok || st != nil {
		t.Fatalf("exists %s = %v, %+v, %v; want false, nil, nil", path, ok, st, err)
	}
}

// opsWantErr checks that err is the *zk.OpError of op on path, with cause
// want (errors.Is) and the message "zk: <op> <path>: ...".
func opsWantErr(t *testing.T, err, want error, op, path string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want %v", err, want)
	}
	var oe *zk.OpError
	if !errors.As(err, &oe) || oe.Op != op || oe.Path != path {
		t.Fatalf("err = %#v (%v), want an *zk.OpError for %s %q", err, err, op, path)
	}
	prefix := "zk: " + op + " " + path + ": "
	if path == "" {
		prefix = "zk: " + op + ": "
	}
	if !strings.HasPrefix(err.Error(), prefix) {
		t.Fatalf("err = %q, want it to start with %q", err, prefix)
	}
}

var opsSeqName = regexp.MustCompile(`^(.*?)(\d{10})$`)

// opsSeq checks that name is prefix followed by a 10-digit counter and
// returns the counter.
func opsSeq(t *testing.T, name, prefix string) int {
	t.Helper()
	m := opsSeqName.FindStringSubmatch(name)
	if m == nil || m[1] != prefix {
		t.Fatalf("sequential name %q, want %q and 10 digits", name, prefix)
	}
	n, _ := strconv.Atoi(m[2])
	return n
}

func opsSorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func opsSameStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if g, w := opsSorted(got), opsSorted(want); !slices.Equal(g, w) {
		t.Fatalf("%s = %q, want %q", what, g, w)
	}
}

// ---- wire recording ----

// opsWire is a dialer that records every request its connections write
// (pings left out) and can hold writes back.
type opsWire struct {
	hold   sync.RWMutex // writes take it shared; Lock holds them back
	mu     sync.Mutex
	frames []opsFrame
	last   net.Conn // the latest connection
}

// opsFrame is a request written: its opcode, and the string that starts
// its body (the path, for most requests).
type opsFrame struct {
	op   proto.OpCode
	path string
}

func (w *opsWire) option() zk.Option {
	return zk.WithDialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		w.mu.Lock()
		w.last = nc
		w.mu.Unlock()
		return &opsWireConn{Conn: nc, w: w}, nil
	})
}

// drop closes the latest connection, as a network failure would.
func (w *opsWire) drop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last.Close()
}

func (w *opsWire) sent() []opsFrame {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.frames)
}

type opsWireConn struct {
	net.Conn
	w       *opsWire
	buf     []byte
	started bool // the connect request (no request header) has gone
}

func (c *opsWireConn) Write(b []byte) (int, error) {
	c.w.hold.RLock()
	defer c.w.hold.RUnlock()
	c.buf = append(c.buf, b...)
	for len(c.buf) >= 4 {
		n := int(binary.BigEndian.Uint32(c.buf))
		if len(c.buf) < 4+n {
			break
		}
		frame := c.buf[4 : 4+n]
		c.buf = c.buf[4+n:]
		if !c.started {
			c.started = true
			continue
		}
		if len(frame) < 8 {
			continue
		}
		f := opsFrame{op: proto.OpCode(int32(binary.BigEndian.Uint32(frame[4:8])))}
		if f.op == proto.OpPing {
			continue
		}
		if len(frame) >= 12 {
			if l := int(int32(binary.BigEndian.Uint32(frame[8:12]))); l >= 0 && 12+l <= len(frame) {
				f.path = string(frame[12 : 12+l])
			}
		}
		c.w.mu.Lock()
		c.w.frames = append(c.w.frames, f)
		c.w.mu.Unlock()
	}
	return c.Conn.Write(b)
}

// opsMarker is the path of the exists that opsNothingSent sends after the
// call under test.
const opsMarker = "/zk-ops-test-marker"

// opsNothingSent runs fn, which must fail without sending anything, then an
// exists that reaches the server, and checks that nothing else was written
// meanwhile (but the exists of "/" that opsAsync sends).
func opsNothingSent(t *testing.T, c *zk.Conn, w *opsWire, fn func()) {
	t.Helper()
	before := len(w.sent())
	fn()
	if _, _, err := c.Exists(testCtx(t), opsMarker); err != nil {
		t.Fatal(err)
	}
	marker := false
	for _, f := range w.sent()[before:] {
		switch {
		case f.op == proto.OpExists && f.path == opsMarker:
			marker = true
		case f.op == proto.OpExists && f.path == "/":
		default:
			t.Fatalf("request written: %s %q", f.op, f.path)
		}
	}
	if !marker {
		t.Fatal("the exists that followed was not seen")
	}
}

// ---- asynchronous calls ----

// opsRes holds what a callback was called with.
type opsRes struct {
	name     string
	stat     *zk.Stat
	ok       bool
	data     []byte
	children []string
	acl      []zk.ACL
	results  []zk.OpResult
	paths    []string
	n        int
	ids      []zk.ClientInfo
	err      error
}

// opsAsync starts an asynchronous call whose callback passes its arguments
// to done, waits for the callback, and checks that it runs only once: the
// Conn delivers callbacks in order, so when the callback of a later call has
// run, a second run of the first one would have happened.
func opsAsync(t *testing.T, c *zk.Conn, start func(done func(opsRes))) opsRes {
	t.Helper()
	ch := make(chan opsRes, 4)
	start(func(r opsRes) { ch <- r })
	var r opsRes
	select {
	case r = <-ch:
	case <-time.After(opsWait):
		t.Fatal("callback did not run")
	}
	later := make(chan struct{})
	c.ExistsAsync(context.Background(), "/", nil, func(bool, *zk.Stat, error) { close(later) })
	select {
	case <-later:
	case <-time.After(opsWait):
		t.Fatal("callback of a later call did not run")
	}
	if n := len(ch); n > 0 {
		t.Fatalf("callback ran %d more times", n)
	}
	return r
}

// ---- create ----

func testOpsCreateModes(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	root := s.root(t, c)
	tests := []struct {
		name  string
		mode  zk.CreateMode
		owner int64 // EphemeralOwner; -1: the session
	}{
		{"persistent", zk.ModePersistent, 0},
		{"ephemeral", zk.ModeEphemeral, -1},
		{"pseq-", zk.ModePersistentSequential, 0},
		{"eseq-", zk.ModeEphemeralSequential, -1},
		// ZooKeeper keeps a container's and a TTL znode's kind in
		// ephemeralOwner but shows clients 0 (getClientEphemeralOwner).
		{"container", zk.ModeContainer, 0},
	}
	for _, tt := range tests {
		p := root + "/" + tt.name
		parent := opsStat(t, c, root)
		got, err := c.Create(ctx, p, []byte(tt.mode.String()), zk.OpenACL, tt.mode)
		opsMust(t, err)
		if tt.mode.IsSequential() {
			// The counter is the parent's cversion before the create.
			if n := opsSeq(t, got, p); n != int(parent.Cversion) {
				t.Fatalf("%s: counter %d, want the parent's cversion %d", tt.mode, n, parent.Cversion)
			}
		} else if got != p {
			t.Fatalf("%s: created %q, want %q", tt.mode, got, p)
		}
		data, st, err := c.Get(ctx, got)
		opsMust(t, err)
		want := tt.owner
		if want == -1 {
			want = c.SessionID()
		}
		if string(data) != tt.mode.String() || st.EphemeralOwner != want || st.Version != 0 || st.DataLength != int32(len(data)) {
			t.Fatalf("%s: get = %q, %+v; want EphemeralOwner %#x", tt.mode, data, st, want)
		}
	}
	// Sequential counters go up by one per child created in the parent.
	a := opsSeq(t, opsCreate(t, c, root+"/pseq-", nil, zk.ModePersistentSequential), root+"/pseq-")
	b := opsSeq(t, opsCreate(t, c, root+"/eseq-", nil, zk.ModeEphemeralSequential), root+"/eseq-")
	if b != a+1 {
		t.Fatalf("counters %d then %d, want consecutive", a, b)
	}
	// A sequential path may end in '/': the name is the counter alone.
	opsCreate(t, c, root+"/dir", nil, zk.ModePersistent)
	if n := opsSeq(t, opsCreate(t, c, root+"/dir/", nil, zk.ModePersistentSequential), root+"/dir/"); n != 0 {
		t.Fatalf("first counter in a new parent = %d, want 0", n)
	}
	// Ephemeral znodes go with the session.
	c.Close()
	d := connect(t, s.proc.Addr)
	kids, _, err := d.Children(ctx, root)
	opsMust(t, err)
	for _, k := range kids {
		if strings.HasPrefix(k, "ephemeral") || strings.HasPrefix(k, "eseq-") {
			t.Fatalf("ephemeral %s outlived its session: %q", k, kids)
		}
	}
}

func testOpsCreate2Stat(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	root := s.root(t, c)
	before := time.Now().Add(-time.Minute).UnixMilli()
	p := root + "/node"
	name, st, err := c.Create2(ctx, p, []byte("hello"), zk.OpenACL, zk.ModePersistent)
	opsMust(t, err)
	after := time.Now().Add(time.Minute).UnixMilli()
	if name != p {
		t.Fatalf("name %q, want %q", name, p)
	}
	if st.Czxid <= 0 || st.Mzxid != st.Czxid || st.Pzxid != st.Czxid || st.Ctime != st.Mtime ||
		st.Ctime < before || st.Ctime > after || st.Version != 0 || st.Cversion != 0 || st.Aversion != 0 ||
		st.EphemeralOwner != 0 || st.DataLength != 5 || st.NumChildren != 0 {
		t.Fatalf("create2 stat %+v", st)
	}
	if got := opsStat(t, c, p); *got != *st {
		t.Fatalf("exists stat %+v, create2 stat %+v", got, st)
	}
	if pst := opsStat(t, c, root); pst.Pzxid != st.Czxid || pst.NumChildren != 1 || pst.Cversion != 1 {
		t.Fatalf("parent stat %+v after create at zxid %d", pst, st.Czxid)
	}
	// Sequential and ephemeral through create2.
	name, st, err = c.Create2(ctx, root+"/e-", nil, zk.OpenACL, zk.ModeEphemeralSequential)
	opsMust(t, err)
	if opsSeq(t, name, root+"/e-") != 1 || st.EphemeralOwner != c.SessionID() || st.DataLength != 0 {
		t.Fatalf("create2 ephemeral sequential = %q, %+v", name, st)
	}
	// A container through Create2 (the createContainer request).
	name, st, err = c.Create2(ctx, root+"/box", nil, zk.OpenACL, zk.ModeContainer)
	opsMust(t, err)
	if name != root+"/box" || st.EphemeralOwner != 0 {
		t.Fatalf("create2 container = %q, %+v", name, st)
	}
}

func testOpsCreateTTL(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	root := s.root(t, c)
	ttl := time.Hour
	p := root + "/ttl"
	name, st, err := c.CreateTTL(ctx, p, []byte("t"), zk.OpenACL, zk.ModePersistentWithTTL, ttl)
	opsMust(t, err)
	if name != p || st.EphemeralOwner != 0 || st.DataLength != 1 || st.Version != 0 || st.Czxid != st.Mzxid {
		t.Fatalf("createTTL = %q, %+v", name, st)
	}
	if got := opsStat(t, c, p); *got != *st {
		t.Fatalf("exists stat %+v, createTTL stat %+v", got, st)
	}
	name, st, err = c.CreateTTL(ctx, root+"/ttlseq-", nil, zk.OpenACL, zk.ModePersistentSequentialWithTTL, 2*time.Second)
	opsMust(t, err)
	if opsSeq(t, name, root+"/ttlseq-") != 1 || st.EphemeralOwner != 0 || *st != *opsStat(t, c, name) {
		t.Fatalf("createTTL sequential = %q, %+v", name, st)
	}
	// A TTL above ZooKeeper's limit (2^40-1 ms) is refused by the server.
	_, _, err = c.CreateTTL(ctx, root+"/huge", nil, zk.OpenACL, zk.ModePersistentWithTTL, time.Duration(1<<40)*time.Millisecond)
	opsWantErr(t, err, zk.ErrBadArguments, "createTTL", root+"/huge")
	opsAbsent(t, c, root+"/huge")
	// NodeExists through createTTL.
	_, _, err = c.CreateTTL(ctx, p, nil, zk.OpenACL, zk.ModePersistentWithTTL, ttl)
	opsWantErr(t, err, zk.ErrNodeExists, "createTTL", p)
}

func testOpsCreateErrors(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	root := s.root(t, c)
	p := opsCreate(t, c, root+"/p", nil, zk.ModePersistent)
	eph := opsCreate(t, c, root+"/eph", nil, zk.ModeEphemeral)
	tests := []struct {
		path string
		mode zk.CreateMode
		want error
	}{
		{p, zk.ModePersistent, zk.ErrNodeExists},
		{p, zk.ModeEphemeral, zk.ErrNodeExists},
		{root + "/missing/child", zk.ModePersistent, zk.ErrNoNode},
		{root + "/missing/seq-", zk.ModePersistentSequential, zk.ErrNoNode},
		{eph + "/child", zk.ModePersistent, zk.ErrNoChildrenForEphemerals},
		{eph + "/eseq-", zk.ModeEphemeralSequential, zk.ErrNoChildrenForEphemerals},
	}
	for _, tt := range tests {
		_, err := c.Create(ctx, tt.path, nil, zk.OpenACL, tt.mode)
		opsWantErr(t, err, tt.want, "create", tt.path)
		_, st, err := c.Create2(ctx, tt.path, nil, zk.OpenACL, tt.mode)
		opsWantErr(t, err, tt.want, "create2", tt.path)
		if st != nil {
			t.Fatalf("create2 failed with a Stat %+v", st)
		}
	}
	_, err := c.Create(ctx, root+"/missing/box", nil, zk.OpenACL, zk.ModeContainer)
	opsWantErr(t, err, zk.ErrNoNode, "createContainer", root+"/missing/box")
	// ACL errors: an empty ACL and "auth" without credentials.
	_, err = c.Create(ctx, root+"/noacl", nil, nil, zk.ModePersistent)
	opsWantErr(t, err, zk.ErrInvalidACL, "create", root+"/noacl")
	_, err = c.Create(ctx, root+"/creator", nil, zk.CreatorACL, zk.ModePersistent)
	opsWantErr(t, err, zk.ErrInvalidACL, "create", root+"/creator")
	kids, _, err := c.Children(ctx, root)
	opsMust(t, err)
	opsSameStrings(t, "children after failed creates", kids, []string{"p", "eph"})
}

func testOpsBadArguments(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	w := &opsWire{}
	c := connect(t, s.proc.Addr, w.option())
	root := s.root(t, c)
	p := root + "/x"
	tests := []struct {
		name string
		op   string // the OpError's op; "" when not checked
		path string
		call func() error
	}{
		{"create unknown mode", "create", p, func() error {
			_, err := c.Create(ctx, p, nil, zk.OpenACL, zk.CreateMode(42))
			return err
		}},
		{"create2 negative mode", "create2", p, func() error {
			_, _, err := c.Create2(ctx, p, nil, zk.OpenACL, zk.CreateMode(-1))
			return err
		}},
		{"create TTL mode without TTL", "createTTL", p, func() error {
			_, err := c.Create(ctx, p, nil, zk.OpenACL, zk.ModePersistentWithTTL)
			return err
		}},
		{"create2 TTL mode without TTL", "createTTL", p, func() error {
			_, _, err := c.Create2(ctx, p, nil, zk.OpenACL, zk.ModePersistentSequentialWithTTL)
			return err
		}},
		{"createTTL zero TTL", "createTTL", p, func() error {
			_, _, err := c.CreateTTL(ctx, p, nil, zk.OpenACL, zk.ModePersistentWithTTL, 0)
			return err
		}},
		{"createTTL negative TTL", "createTTL", p, func() error {
			_, _, err := c.CreateTTL(ctx, p, nil, zk.OpenACL, zk.ModePersistentSequentialWithTTL, -time.Second)
			return err
		}},
		{"createTTL non-TTL mode", "create2", p, func() error {
			_, _, err := c.CreateTTL(ctx, p, nil, zk.OpenACL, zk.ModePersistent, time.Hour)
			return err
		}},
		{"createTTL ephemeral", "create2", p, func() error {
			_, _, err := c.CreateTTL(ctx, p, nil, zk.OpenACL, zk.ModeEphemeral, time.Hour)
			return err
		}},
		{"multi TTL op without TTL", "createTTL", p, func() error {
			_, err := c.Multi(ctx, &zk.CreateOp{Path: p, ACL: zk.OpenACL, Mode: zk.ModePersistentWithTTL})
			return err
		}},
		{"multi TTL on a plain create", "create2", p, func() error {
			_, err := c.Multi(ctx, &zk.CreateOp{Path: p, ACL: zk.OpenACL, Mode: zk.ModePersistent, TTL: time.Second})
			return err
		}},
		{"multi nil op", "multi", "", func() error {
			_, err := c.Multi(ctx, &zk.CheckOp{Path: root, Version: -1}, nil)
			return err
		}},
		{"multi with a read", "multi", p, func() error {
			_, err := c.Multi(ctx, &zk.GetDataOp{Path: p})
			return err
		}},
		{"multiRead with a write", "multiRead", p, func() error {
			_, err := c.MultiRead(ctx, &zk.GetDataOp{Path: root}, &zk.SetDataOp{Path: p, Version: -1})
			return err
		}},
		{"txn unknown mode", "create2", p, func() error {
			_, err := c.Txn().Create(p, nil, zk.OpenACL, zk.CreateMode(9)).Commit(ctx)
			return err
		}},
		{"addWatch nil watcher", "addWatch", p, func() error {
			return c.AddWatch(ctx, p, nil, zk.AddWatchPersistent)
		}},
		{"addWatch unknown mode", "addWatch", p, func() error {
			return c.AddWatch(ctx, p, zk.NewChanWatcher(1), zk.AddWatchMode(7))
		}},
		{"checkWatches unknown type", "checkWatches", p, func() error {
			return c.CheckWatches(ctx, p, zk.WatcherType(9))
		}},
		{"removeWatches unknown type", "removeWatches", p, func() error {
			return c.RemoveWatches(ctx, p, nil, zk.WatcherType(9), false)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opsNothingSent(t, c, w, func() {
				err := tt.call()
				opsWantErr(t, err, zk.ErrBadArguments, tt.op, tt.path)
			})
		})
	}
	opsAbsent(t, c, p)
}

func testOpsInvalidPath(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	w := &opsWire{}
	c := connect(t, s.proc.Addr, w.option())
	calls := []struct {
		op   string
		call func(p string) error
	}{
		{"create", func(p string) error { _, err := c.Create(ctx, p, nil, zk.OpenACL, zk.ModePersistent); return err }},
		{"create2", func(p string) error { _, _, err := c.Create2(ctx, p, nil, zk.OpenACL, zk.ModeEphemeral); return err }},
		{"createTTL", func(p string) error {
			_, _, err := c.CreateTTL(ctx, p, nil, zk.OpenACL, zk.ModePersistentWithTTL, time.Hour)
			return err
		}},
		{"delete", func(p string) error { return c.Delete(ctx, p, -1) }},
		{"exists", func(p string) error { _, _, err := c.ExistsW(ctx, p, zk.NewChanWatcher(1)); return err }},
		{"getData", func(p string) error { _, _, err := c.Get(ctx, p); return err }},
		{"setData", func(p string) error { _, err := c.Set(ctx, p, nil, -1); return err }},
		{"getChildren2", func(p string) error { _, _, err := c.Children(ctx, p); return err }},
		{"getACL", func(p string) error { _, _, err := c.GetACL(ctx, p); return err }},
		{"setACL", func(p string) error { _, err := c.SetACL(ctx, p, zk.OpenACL, -1); return err }},
		{"sync", func(p string) error { _, err := c.Sync(ctx, p); return err }},
		{"getEphemerals", func(p string) error { _, err := c.GetEphemerals(ctx, p); return err }},
		{"getAllChildrenNumber", func(p string) error { _, err := c.GetAllChildrenNumber(ctx, p); return err }},
		{"addWatch", func(p string) error { return c.AddWatch(ctx, p, zk.NewChanWatcher(1), zk.AddWatchPersistentRecursive) }},
		{"checkWatches", func(p string) error { return c.CheckWatches(ctx, p, zk.WatcherAny) }},
		{"removeWatches", func(p string) error { return c.RemoveWatches(ctx, p, nil, zk.WatcherAny, false) }},
		{"create2", func(p string) error { // a multi names the op with the bad path
			_, err := c.Multi(ctx, &zk.CreateOp{Path: p, ACL: zk.OpenACL})
			return err
		}},
		{"getData", func(p string) error { _, err := c.MultiRead(ctx, &zk.GetDataOp{Path: p}); return err }},
	}
	paths := []string{"", "relative", "/trailing/", "/a//b", "/a/./b", "/a/../b", "/..", "/a\x00b", "/a\x01b", "/a\u0090b", "/a\ufff5b"}
	for _, cl := range calls {
		for _, p := range paths {
			opsNothingSent(t, c, w, func() { opsWantErr(t, cl.call(p), zk.ErrInvalidPath, cl.op, p) })
		}
	}
	// Only sequential creates may end in '/'.
	opsNothingSent(t, c, w, func() {
		_, err := c.Create(ctx, "/x/", nil, zk.OpenACL, zk.ModeEphemeral)
		opsWantErr(t, err, zk.ErrInvalidPath, "create", "/x/")
	})
}

// ---- delete, exists, get, set, children ----

func testOpsDelete(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	root := s.root(t, c)
	p := opsCreate(t, c, root+"/p", nil, zk.ModePersistent)
	opsWantErr(t, c.Delete(ctx, p, 3), zk.ErrBadVersion, "delete", p)
	_, err := c.Set(ctx, p, []byte("1"), 0)
	opsMust(t, err)
	opsWantErr(t, c.Delete(ctx, p, 0), zk.ErrBadVersion, "delete", p)
	opsStat(t, c, p)
	opsMust(t, c.Delete(ctx, p, 1))
	opsAbsent(t, c, p)
	opsWantErr(t, c.Delete(ctx, p, -1), zk.ErrNoNode, "delete", p)

	q := opsCreate(t, c, root+"/q", nil, zk.ModePersistent)
	opsCreate(t, c, q+"/child", nil, zk.ModeEphemeral)
	opsWantErr(t, c.Delete(ctx, q, -1), zk.ErrNotEmpty, "delete", q)
	opsMust(t, c.Delete(ctx, q+"/child", -1))
	opsMust(t, c.Delete(ctx, q, -1))
	if st := opsStat(t, c, root); st.NumChildren != 0 || st.Cversion != 4 {
		t.Fatalf("root stat after two creates and two deletes: %+v", st)
	}
}

func testOpsExistsGetSet(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	root := s.root(t, c)
	p := root + "/p"
	opsAbsent(t, c, p)
	_, _, err := c.Get(ctx, p)
	opsWantErr(t, err, zk.ErrNoNode, "getData", p)
	_, err = c.Set(ctx, p, nil, -1)
	opsWantErr(t, err, zk.ErrNoNode, "setData", p)

	opsCreate(t, c, p, []byte("v0"), zk.ModePersistent)
	data, st0, err := c.Get(ctx, p)
	opsMust(t, err)
	if string(data) != "v0" || st0.Version != 0 || st0.DataLength != 2 {
		t.Fatalf("get = %q, %+v", data, st0)
	}
	if st := opsStat(t, c, p); *st != *st0 {
		t.Fatalf("exists stat %+v, get stat %+v", st, st0)
	}
	st1, err := c.Set(ctx, p, []byte("v1!"), 0)
	opsMust(t, err)
	if st1.Version != 1 || st1.DataLength != 3 || st1.Czxid != st0.Czxid || st1.Mzxid <= st0.Mzxid ||
		st1.Ctime != st0.Ctime || st1.Mtime < st0.Mtime || st1.Pzxid != st0.Pzxid || st1.Cversion != 0 {
		t.Fatalf("set stat %+v after %+v", st1, st0)
	}
	_, err = c.Set(ctx, p, []byte("stale"), 0)
	opsWantErr(t, err, zk.ErrBadVersion, "setData", p)
	st2, err := c.Set(ctx, p, nil, -1)
	opsMust(t, err)
	if st2.Version != 2 || st2.DataLength != 0 {
		t.Fatalf("set any version: %+v", st2)
	}
	data, st, err := c.Get(ctx, p)
	opsMust(t, err)
	if len(data) != 0 || *st != *st2 {
		t.Fatalf("get = %q, %+v; want empty data, %+v", data, st, st2)
	}
	// Sync returns the path; a sync needs no znode.
	for _, sp := range []string{p, root + "/missing", "/"} {
		got, err := c.Sync(ctx, sp)
		if err != nil || got != sp {
			t.Fatalf("sync %s = %q, %v", sp, got, err)
		}
	}
}

func testOpsChildren(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	root := s.root(t, c)
	kids, st, err := c.Children(ctx, root)
	opsMust(t, err)
	if len(kids) != 0 || st.NumChildren != 0 {
		t.Fatalf("children of an empty znode = %q, %+v", kids, st)
	}
	var last *zk.Stat
	for _, n := range []string{"c", "a", "b"} {
		_, last, err = c.Create2(ctx, root+"/"+n, nil, zk.OpenACL, zk.ModePersistent)
		opsMust(t, err)
	}
	opsCreate(t, c, root+"/a/grandchild", nil, zk.ModePersistent)
	kids, st, err = c.Children(ctx, root)
	opsMust(t, err)
	opsSameStrings(t, "children", kids, []string{"a", "b", "c"})
	if st.NumChildren != 3 || st.Cversion != 3 || st.Pzxid != last.Czxid {
		t.Fatalf("parent stat %+v, want 3 children, cversion 3, pzxid %d", st, last.Czxid)
	}
	if full := opsStat(t, c, root); *full != *st {
		t.Fatalf("children stat %+v, exists stat %+v", st, full)
	}
	_, _, err = c.Children(ctx, root+"/missing")
	opsWantErr(t, err, zk.ErrNoNode, "getChildren2", root+"/missing")
}

// ---- ACLs and authentication ----

func testOpsACL(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	other := connect(t, s.proc.Addr)
	root := s.root(t, c)

	// World ACL: read only.
	ro := root + "/readonly"
	_, err := c.Create(ctx, ro, []byte("r"), zk.ReadACL, zk.ModePersistent)
	opsMust(t, err)
	acl, st, err := c.GetACL(ctx, ro)
	opsMust(t, err)
	if !slices.Equal(acl, zk.ReadACL) || st.Aversion != 0 {
		t.Fatalf("getACL = %+v, %+v", acl, st)
	}
	if data, _, err := other.Get(ctx, ro); err != nil || string(data) != "r" {
		t.Fatalf("get a world-readable znode = %q, %v", data, err)
	}
	_, err = other.Set(ctx, ro, nil, -1)
	opsWantErr(t, err, zk.ErrNoAuth, "setData", ro)
	_, err = c.Create(ctx, ro+"/child", nil, zk.OpenACL, zk.ModePersistent)
	opsWantErr(t, err, zk.ErrNoAuth, "create", ro+"/child")
	_, err = c.SetACL(ctx, ro, zk.OpenACL, -1)
	opsWantErr(t, err, zk.ErrNoAuth, "setACL", ro)

	// Digest ACL: only a session authenticated as the user gets in.
	dg := root + "/digest"
	userACL := zk.DigestACL(zk.PermAll, "alice", "secret")
	_, err = c.Create(ctx, dg, []byte("d"), userACL, zk.ModePersistent)
	opsMust(t, err)
	_, _, err = c.Get(ctx, dg)
	opsWantErr(t, err, zk.ErrNoAuth, "getData", dg)
	_, _, err = c.GetACL(ctx, dg) // getACL needs READ or ADMIN
	opsWantErr(t, err, zk.ErrNoAuth, "getACL", dg)
	wrong := connect(t, s.proc.Addr)
	opsMust(t, wrong.AddAuth(ctx, "digest", []byte("alice:wrong")))
	_, _, err = wrong.Get(ctx, dg)
	opsWantErr(t, err, zk.ErrNoAuth, "getData", dg)
	opsMust(t, c.AddAuth(ctx, "digest", []byte("alice:secret")))
	if data, _, err := c.Get(ctx, dg); err != nil || string(data) != "d" {
		t.Fatalf("get after addAuth = %q, %v", data, err)
	}
	if acl, _, err = c.GetACL(ctx, dg); err != nil || !slices.Equal(acl, userACL) {
		t.Fatalf("getACL = %+v, %v; want %+v", acl, err, userACL)
	}
	_, _, err = other.Get(ctx, dg)
	opsWantErr(t, err, zk.ErrNoAuth, "getData", dg)
	// Without ADMIN, getACL hides the digests' hashes.
	mk := root + "/masked"
	_, err = c.Create(ctx, mk, nil, append(zk.WorldACL(zk.PermRead), userACL...), zk.ModePersistent)
	opsMust(t, err)
	acl, _, err = other.GetACL(ctx, mk)
	opsMust(t, err)
	if want := []zk.ACL{zk.ReadACL[0], {Perms: zk.PermAll, ID: zk.ID{Scheme: "digest", ID: "alice:x"}}}; !slices.Equal(acl, want) {
		t.Fatalf("getACL without ADMIN = %+v, want %+v", acl, want)
	}
	if acl, _, err = c.GetACL(ctx, mk); err != nil || !slices.Equal(acl, append(zk.WorldACL(zk.PermRead), userACL...)) {
		t.Fatalf("getACL with ADMIN = %+v, %v", acl, err)
	}

	// Auth ACL: the creator's identities (here alice), not the session's ip.
	au := root + "/auth"
	_, err = c.Create(ctx, au, nil, zk.CreatorACL, zk.ModePersistent)
	opsMust(t, err)
	acl, _, err = c.GetACL(ctx, au)
	opsMust(t, err)
	if !slices.Equal(acl, userACL) {
		t.Fatalf("ACL of a CreatorACL znode = %+v, want %+v", acl, userACL)
	}
	_, err = other.Set(ctx, au, nil, -1)
	opsWantErr(t, err, zk.ErrNoAuth, "setData", au)

	// SetACL with the ACL version.
	op := root + "/open"
	opsCreate(t, c, op, nil, zk.ModePersistent)
	st, err = c.SetACL(ctx, op, zk.WorldACL(zk.PermRead|zk.PermAdmin), 0)
	opsMust(t, err)
	if st.Aversion != 1 || st.Version != 0 {
		t.Fatalf("setACL stat %+v", st)
	}
	_, err = c.SetACL(ctx, op, zk.OpenACL, 0)
	opsWantErr(t, err, zk.ErrBadVersion, "setACL", op)
	acl, st, err = other.GetACL(ctx, op)
	opsMust(t, err)
	if !slices.Equal(acl, zk.WorldACL(zk.PermRead|zk.PermAdmin)) || st.Aversion != 1 {
		t.Fatalf("getACL after setACL = %+v, %+v", acl, st)
	}
	_, err = other.Set(ctx, op, nil, -1)
	opsWantErr(t, err, zk.ErrNoAuth, "setData", op)
	st, err = other.SetACL(ctx, op, zk.OpenACL, -1)
	opsMust(t, err)
	if st.Aversion != 2 {
		t.Fatalf("setACL any version: %+v", st)
	}
	_, err = c.SetACL(ctx, root+"/missing", zk.OpenACL, -1)
	opsWantErr(t, err, zk.ErrNoNode, "setACL", root+"/missing")
	_, _, err = c.GetACL(ctx, root+"/missing")
	opsWantErr(t, err, zk.ErrNoNode, "getACL", root+"/missing")
	_, err = c.SetACL(ctx, op, nil, -1)
	opsWantErr(t, err, zk.ErrInvalidACL, "setACL", op)
}

func testOpsWhoAmI(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	ids, err := c.WhoAmI(ctx)
	opsMust(t, err)
	ip := zk.ClientInfo{AuthScheme: "ip", User: "127.0.0.1"}
	if !slices.Equal(ids, []zk.ClientInfo{ip}) {
		t.Fatalf("whoAmI = %+v, want %+v", ids, ip)
	}
	opsMust(t, c.AddAuth(ctx, "digest", []byte("bob:pw")))
	ids, err = c.WhoAmI(ctx)
	opsMust(t, err)
	want := []zk.ClientInfo{ip, {AuthScheme: "digest", User: "bob"}}
	// In no particular order: ZooKeeper lists the digest first.
	if !slices.Equal(opsSortedIDs(ids), opsSortedIDs(want)) {
		t.Fatalf("whoAmI after addAuth = %+v, want %+v", ids, want)
	}
}

func opsSortedIDs(ids []zk.ClientInfo) []zk.ClientInfo {
	ids = slices.Clone(ids)
	slices.SortFunc(ids, func(a, b zk.ClientInfo) int {
		return strings.Compare(a.AuthScheme+":"+a.User, b.AuthScheme+":"+b.User)
	})
	return ids
}

func testOpsAuthFailed(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	events := make(chan zk.Event, 16)
	c := connect(t, s.proc.Addr, zk.WithDefaultWatcher(zk.WatcherFunc(func(e zk.Event) { events <- e })))
	err := c.AddAuth(ctx, "nosuchscheme", []byte("x"))
	opsWantErr(t, err, zk.ErrAuthFailed, "auth", "")
	deadline := time.After(opsWait)
	for e := (zk.Event{}); e.State != zk.StateAuthFailed; {
		select {
		case e = <-events:
			if e.Type != zk.EventNone {
				t.Fatalf("default watcher got %+v", e)
			}
		case <-deadline:
			t.Fatal("no AuthFailed event")
		}
	}
	if st := c.State(); st != zk.StateAuthFailed {
		t.Fatalf("state %s, want AuthFailed", st)
	}
	_, _, err = c.Get(ctx, "/")
	opsWantErr(t, err, zk.ErrAuthFailed, "getData", "/")
	r := opsAsync(t, c, func(done func(opsRes)) {
		c.CreateAsync(ctx, "/x", nil, zk.OpenACL, zk.ModeEphemeral, func(name string, err error) { done(opsRes{name: name, err: err}) })
	})
	opsWantErr(t, r.err, zk.ErrAuthFailed, "create", "/x")
	if err := c.AddAuth(ctx, "digest", []byte("a:b")); !errors.Is(err, zk.ErrAuthFailed) {
		t.Fatalf("addAuth after AuthFailed: %v", err)
	}
}
