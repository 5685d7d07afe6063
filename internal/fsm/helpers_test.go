package fsm

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/paddockhq/paddock/internal/acl"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/tree"
)

const (
	sess1 int64 = 0x1000000000001
	sess2 int64 = 0x1000000000002
	t0    int64 = 1_700_000_000_000 // entry times start here
)

var (
	openACL   = tree.OpenACL
	readACL   = tree.ReadACL
	aliceID   = proto.ID{Scheme: acl.Digest, ID: acl.DigestID("alice", "pw")}
	bobID     = proto.ID{Scheme: acl.Digest, ID: acl.DigestID("bob", "pw")}
	superID   = proto.ID{Scheme: acl.Super, ID: ""}
	aliceACL  = []proto.ACL{{Perms: proto.PermAll, ID: aliceID}}
	authACL   = []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: acl.Auth, ID: ""}}}
	noCreate  = []proto.ACL{{Perms: proto.PermAll &^ proto.PermCreate, ID: proto.ID{Scheme: acl.World, ID: acl.Anyone}}}
	noDelete  = []proto.ACL{{Perms: proto.PermAll &^ proto.PermDelete, ID: proto.ID{Scheme: acl.World, ID: acl.Anyone}}}
	noWrite   = []proto.ACL{{Perms: proto.PermAll &^ proto.PermWrite, ID: proto.ID{Scheme: acl.World, ID: acl.Anyone}}}
	noAdmin   = []proto.ACL{{Perms: proto.PermAll &^ proto.PermAdmin, ID: proto.ID{Scheme: acl.World, ID: acl.Anyone}}}
	noRead    = []proto.ACL{{Perms: proto.PermAll &^ proto.PermRead, ID: proto.ID{Scheme: acl.World, ID: acl.Anyone}}}
	badDigest = []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: acl.Digest, ID: "nocolon"}}}
)

// harness applies entries at consecutive indexes, always through the encoded
// form (Apply), so every test also exercises the codec.
type harness struct {
	t     *testing.T
	m     *Machine
	index uint64
	now   int64
}

func newHarness(t *testing.T, opts Options) *harness {
	return &harness{t: t, m: New(opts), now: t0}
}

// apply encodes e, applies it at the next index and returns the result. Each
// entry's time is 10 ms after the previous one unless e.Time is set.
func (h *harness) apply(e *Entry) Result {
	h.t.Helper()
	h.index++
	h.now += 10
	if e.Time == 0 {
		e.Time = h.now
	}
	b := e.Encode(nil)
	r := h.m.Apply(h.index, b)
	if r.Index != h.index || r.Zxid != int64(h.index) || r.Type != e.Type || r.Session != e.Session || r.ReqID != e.ReqID {
		h.t.Fatalf("result header %+v does not match entry %d %+v", r, h.index, e)
	}
	if h.m.LastZxid() != int64(h.index) || h.m.AppliedIndex() != h.index {
		h.t.Fatalf("LastZxid %d AppliedIndex %d after index %d", h.m.LastZxid(), h.m.AppliedIndex(), h.index)
	}
	return r
}

func (h *harness) openSession(id int64) {
	h.t.Helper()
	r := h.apply(&Entry{Type: EntryCreateSession, Session: id, Timeout: 30000, Passwd: []byte("passwd")})
	if r.Err != proto.ErrOK || h.m.Session(id) == nil {
		h.t.Fatalf("open session %#x: %v", id, r.Err)
	}
}

// one applies a single-op txn for session with auth and returns its result.
func (h *harness) one(session int64, auth []proto.ID, op Op) (OpResult, Result) {
	h.t.Helper()
	r := h.apply(&Entry{Type: EntryTxn, Session: session, Auth: auth, Ops: []Op{op}})
	if len(r.Ops) != 1 {
		h.t.Fatalf("single op gave %d results (err %v)", len(r.Ops), r.Err)
	}
	if r.Err != r.Ops[0].Err {
		h.t.Fatalf("single op: request error %v, op error %v", r.Err, r.Ops[0].Err)
	}
	return r.Ops[0], r
}

// must applies a single op that has to succeed.
func (h *harness) must(session int64, auth []proto.ID, op Op) OpResult {
	h.t.Helper()
	res, _ := h.one(session, auth, op)
	if res.Err != proto.ErrOK {
		h.t.Fatalf("%v %q: %v", op.Op, op.Path, res.Err)
	}
	return res
}

func (h *harness) multi(session int64, auth []proto.ID, ops ...Op) Result {
	h.t.Helper()
	return h.apply(&Entry{Type: EntryTxn, Session: session, Auth: auth, Multi: true, Ops: ops})
}

func (h *harness) node(path string) *tree.Node {
	h.t.Helper()
	n := h.m.Tree().Get(path)
	if n == nil {
		h.t.Fatalf("no node %q", path)
	}
	return n
}

// Op builders.
func create(path string, data string, flags int32) Op {
	return Op{Op: proto.OpCreate, Path: path, Data: []byte(data), ACL: openACL, Flags: flags}
}

func createACL(path string, list []proto.ACL, flags int32) Op {
	return Op{Op: proto.OpCreate, Path: path, ACL: list, Flags: flags}
}

func create2(path string, flags int32) Op {
	return Op{Op: proto.OpCreate2, Path: path, ACL: openACL, Flags: flags}
}

func container(path string) Op {
	return Op{Op: proto.OpCreateContainer, Path: path, ACL: openACL, Flags: proto.FlagContainer}
}

func createTTL(path string, flags int32, ttl int64) Op {
	return Op{Op: proto.OpCreateTTL, Path: path, ACL: openACL, Flags: flags, TTL: ttl}
}

func del(path string, version int32) Op { return Op{Op: proto.OpDelete, Path: path, Version: version} }

func delContainer(path string) Op { return Op{Op: proto.OpDeleteContainer, Path: path} }

func setData(path, data string, version int32) Op {
	return Op{Op: proto.OpSetData, Path: path, Data: []byte(data), Version: version}
}

func setACL(path string, list []proto.ACL, version int32) Op {
	return Op{Op: proto.OpSetACL, Path: path, ACL: list, Version: version}
}

func check(path string, version int32) Op { return Op{Op: proto.OpCheck, Path: path, Version: version} }

// nodeDump is everything known about one node.
type nodeDump struct {
	Stat     proto.Stat
	Data     []byte
	DataNil  bool
	ACL      []proto.ACL
	Owner    int64
	Cversion int32
	Kind     tree.Kind
}

// stateDump is the whole replicated state.
type stateDump struct {
	Applied    uint64
	LastZxid   int64
	Sessions   []Session
	Nodes      map[string]nodeDump
	Count      int
	DataSize   int64
	Ephemerals map[int64][]string
	Containers []string
	TTLs       []string
}

func dumpMachine(m *Machine) stateDump {
	t := m.Tree()
	d := stateDump{
		Applied: m.AppliedIndex(), LastZxid: m.LastZxid(),
		Nodes: make(map[string]nodeDump), Count: t.NodeCount(), DataSize: t.DataSize(),
		Ephemerals: make(map[int64][]string), Containers: t.Containers(), TTLs: t.TTLNodes(),
	}
	for _, s := range m.Sessions() {
		d.Sessions = append(d.Sessions, *s)
	}
	for _, s := range t.EphemeralSessions() {
		d.Ephemerals[s] = t.Ephemerals(s)
	}
	t.Walk(func(path string, n *tree.Node) {
		d.Nodes[path] = nodeDump{Stat: t.Stat(n), Data: n.Data, DataNil: n.Data == nil, ACL: t.ACL(n),
			Owner: n.EphemeralOwner, Cversion: n.Cversion, Kind: t.Kind(n)}
	})
	return d
}

// snapshotDump restores a snapshot into a fresh machine with opts and
// dumps it.
func snapshotDump(t *testing.T, opts Options, b []byte) stateDump {
	t.Helper()
	m := New(opts)
	if err := m.Restore(b); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	return dumpMachine(m)
}

func diffState(a, b stateDump) string {
	var out bytes.Buffer
	paths := make(map[string]bool)
	for p := range a.Nodes {
		paths[p] = true
	}
	for p := range b.Nodes {
		paths[p] = true
	}
	sorted := make([]string, 0, len(paths))
	for p := range paths {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	for _, p := range sorted {
		na, oka := a.Nodes[p]
		nb, okb := b.Nodes[p]
		switch {
		case !oka:
			fmt.Fprintf(&out, "%s: only in second %+v\n", p, nb)
		case !okb:
			fmt.Fprintf(&out, "%s: only in first %+v\n", p, na)
		case !reflect.DeepEqual(na, nb):
			fmt.Fprintf(&out, "%s:\n  %+v\n  %+v\n", p, na, nb)
		}
	}
	a.Nodes, b.Nodes = nil, nil
	if !reflect.DeepEqual(a, b) {
		fmt.Fprintf(&out, "machine-wide:\n  %+v\n  %+v\n", a, b)
	}
	return out.String()
}

// aclTableSize reads the number of interned ACL lists from a snapshot.
func aclTableSize(t *testing.T, b []byte) int {
	t.Helper()
	d := proto.NewDecoder(b)
	d.Int32()
	d.Int32()
	d.Int64()
	n := d.Int32()
	for i := int32(0); i < n; i++ {
		d.Int64()
		d.Int32()
		d.Buffer()
		d.Int64() // owner
		d.Int64() // the last write's connection and number
		d.Int64()
	}
	size := d.Int32()
	if d.Err() != nil {
		t.Fatalf("snapshot header: %v", d.Err())
	}
	return int(size)
}

// checkState verifies that a snapshot of m restores to the same state and
// that the ACL table holds exactly the lists in use.
func checkState(t *testing.T, m *Machine) {
	t.Helper()
	b := m.AppendSnapshot(nil)
	want := dumpMachine(m)
	if d := diffState(want, snapshotDump(t, m.opts, b)); d != "" {
		t.Fatalf("snapshot round trip differs:\n%s", d)
	}
	used := make(map[string]bool)
	for _, n := range want.Nodes {
		used[fmt.Sprint(n.ACL)] = true
	}
	if got := aclTableSize(t, b); got != len(used) {
		t.Fatalf("snapshot holds %d ACL lists, %d in use", got, len(used))
	}
}
