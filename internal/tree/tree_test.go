package tree

import (
	"reflect"
	"sort"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// TestNewReservedNodes checks a fresh tree against what Apache ZooKeeper
// serves on a fresh server (stat, data, ACL of each reserved node).
func TestNewReservedNodes(t *testing.T) {
	tr := New(Options{ExtendedTypes: true})
	cases := []struct {
		path string
		stat proto.Stat
		acl  []proto.ACL
		kids []string
	}{
		{"/", proto.Stat{Cversion: -1, NumChildren: 1}, OpenACL, []string{"zookeeper"}},
		{ZooKeeperPath, proto.Stat{Cversion: -2, NumChildren: 2}, OpenACL, []string{"config", "quota"}},
		{QuotaPath, proto.Stat{}, OpenACL, nil},
		{ConfigPath, proto.Stat{Aversion: -1}, ReadACL, nil},
	}
	for _, tc := range cases {
		n := mustGet(t, tr, tc.path)
		if got := n.Stat(); got != tc.stat {
			t.Errorf("%s: Stat = %+v, want %+v", tc.path, got, tc.stat)
		}
		if n.Data == nil || len(n.Data) != 0 {
			t.Errorf("%s: Data = %#v, want empty and not null", tc.path, n.Data)
		}
		if got := tr.ACL(n); !reflect.DeepEqual(got, tc.acl) {
			t.Errorf("%s: ACL = %v, want %v", tc.path, got, tc.acl)
		}
		kids := n.Children()
		sort.Strings(kids)
		if len(kids) != len(tc.kids) || (len(kids) > 0 && !reflect.DeepEqual(kids, tc.kids)) {
			t.Errorf("%s: Children = %v, want %v", tc.path, kids, tc.kids)
		}
		if n.Kind() != Persistent {
			t.Errorf("%s: Kind = %v", tc.path, n.Kind())
		}
	}
	if got := tr.NodeCount(); got != 4 {
		t.Errorf("NodeCount = %d, want 4", got)
	}
	// zk_approximate_data_size of a fresh Apache ZooKeeper.
	if got := tr.DataSize(); got != 44 {
		t.Errorf("DataSize = %d, want 44", got)
	}
	if got := tr.ACLLists(); got != 2 {
		t.Errorf("ACLLists = %d, want 2", got)
	}
	if uses, _ := tr.ACLUses(OpenACL); uses != 3 {
		t.Errorf("OpenACL uses = %d, want 3", uses)
	}
	if uses, _ := tr.ACLUses(ReadACL); uses != 1 {
		t.Errorf("ReadACL uses = %d, want 1", uses)
	}
	checkInvariants(t, tr)
}

func TestGetOddPaths(t *testing.T) {
	tr := New(Options{ExtendedTypes: true})
	tr.Create("/a", nil, OpenACL, 0, 1, 1)
	tr.Create("/a/b", nil, OpenACL, 0, 2, 2)
	cases := []struct {
		path  string
		found bool
	}{
		{"/", true},
		{"/a", true},
		{"/a/b", true},
		{"/zookeeper/config", true},
		{"", false},
		{"a", false},
		{"a/b", false},
		{"/a/", false},
		{"//a", false},
		{"/a//b", false},
		{"/a/b/", false},
		{"/a/b/c", false},
		{"/b", false},
		{"//", false},
		{"/a/b/..", false},
		{"/a/b/../..", false},
		{"/a/./b", false},
	}
	for _, tc := range cases {
		if got := tr.Get(tc.path) != nil; got != tc.found {
			t.Errorf("Get(%q) found = %v, want %v", tc.path, got, tc.found)
		}
	}
}

func TestCreateStat(t *testing.T) {
	tr := New(Options{ExtendedTypes: true})
	data := []byte("hello")
	n := tr.Create("/a", data, OpenACL, 0, 5, 1000)
	want := proto.Stat{Czxid: 5, Mzxid: 5, Ctime: 1000, Mtime: 1000, DataLength: 5, Pzxid: 5}
	if got := n.Stat(); got != want {
		t.Fatalf("Stat = %+v, want %+v", got, want)
	}
	// "/" has two children now but one counted creation: 2*1 - 2 = 0.
	root := mustGet(t, tr, "/")
	if got := root.Stat(); got.Cversion != 0 || got.Pzxid != 5 || got.NumChildren != 2 || got.Mzxid != 0 {
		t.Fatalf("root Stat = %+v", got)
	}

	tr.Create("/a/x", nil, OpenACL, 0, 6, 1001)
	tr.Create("/a/y", []byte{}, OpenACL, 0, 7, 1002)
	a := mustGet(t, tr, "/a")
	if got := a.Stat(); got.Cversion != 2 || got.NumChildren != 2 || got.Pzxid != 7 || got.Mzxid != 5 || got.Version != 0 {
		t.Fatalf("after two creates /a Stat = %+v", got)
	}
	if a.Cversion != 2 {
		t.Fatalf("persisted cversion = %d, want 2", a.Cversion)
	}
	if x := mustGet(t, tr, "/a/x"); x.Data != nil || x.Stat().DataLength != 0 {
		t.Fatalf("nil data not kept: %#v", x.Data)
	}
	if y := mustGet(t, tr, "/a/y"); y.Data == nil {
		t.Fatal("empty data became nil")
	}

	// Deleting counts as a child change: cversion = 2*creates - children.
	tr.Delete("/a/x", 8)
	if got := a.Stat(); got.Cversion != 3 || got.NumChildren != 1 || got.Pzxid != 8 {
		t.Fatalf("after delete /a Stat = %+v", got)
	}
	if a.Cversion != 2 {
		t.Fatalf("delete changed the persisted cversion to %d", a.Cversion)
	}
	// A delete with an older zxid (WAL replay over a fuzzy state) keeps the
	// newer pzxid, as DataTree.deleteNode does.
	tr.Create("/a/z", nil, OpenACL, 0, 20, 1003)
	tr.Delete("/a/z", 9)
	// Three creations, one child left: 2*3 - 1.
	if got := a.Stat(); got.Pzxid != 20 || got.Cversion != 5 {
		t.Fatalf("old-zxid delete: /a Stat = %+v", got)
	}
	checkInvariants(t, tr)
}

func TestSetDataSetACL(t *testing.T) {
	tr := New(Options{ExtendedTypes: true})
	n := tr.Create("/a", []byte("abc"), OpenACL, 0, 2, 100)
	size := tr.DataSize()
	tr.SetData(n, []byte("abcdefg"), 1, 3, 200)
	want := proto.Stat{Czxid: 2, Mzxid: 3, Ctime: 100, Mtime: 200, Version: 1, DataLength: 7, Pzxid: 2}
	if got := n.Stat(); got != want {
		t.Fatalf("after SetData Stat = %+v, want %+v", got, want)
	}
	if tr.DataSize() != size+4 {
		t.Fatalf("DataSize = %d, want %d", tr.DataSize(), size+4)
	}
	tr.SetData(n, nil, 2, 4, 300)
	if n.Data != nil || tr.DataSize() != size-3 {
		t.Fatalf("SetData(nil): Data %#v DataSize %d want %d", n.Data, tr.DataSize(), size-3)
	}

	tr.SetACL(n, digestACL, 1)
	want = proto.Stat{Czxid: 2, Mzxid: 4, Ctime: 100, Mtime: 300, Version: 2, Aversion: 1, Pzxid: 2}
	if got := n.Stat(); got != want {
		t.Fatalf("after SetACL Stat = %+v, want %+v", got, want)
	}
	if got := tr.ACL(n); !reflect.DeepEqual(got, digestACL) {
		t.Fatalf("ACL = %v", got)
	}
	// Root data counts toward DataSize too.
	root := mustGet(t, tr, "/")
	before := tr.DataSize()
	tr.SetData(root, []byte("xy"), 1, 5, 400)
	if tr.DataSize() != before+2 {
		t.Fatalf("root SetData: DataSize %d, want %d", tr.DataSize(), before+2)
	}
	checkInvariants(t, tr)
}

func TestKindsAndIndexes(t *testing.T) {
	tr := New(Options{ExtendedTypes: true})
	tr.Create("/p", nil, OpenACL, 0, 1, 1)
	tr.Create("/p/e1", nil, OpenACL, 0x11, 2, 1)
	tr.Create("/p/e2", nil, OpenACL, 0x11, 3, 1)
	tr.Create("/e3", nil, OpenACL, 0x22, 4, 1)
	tr.Create("/c", nil, OpenACL, ContainerOwner, 5, 1)
	tr.Create("/t", nil, OpenACL, TTLOwner(1500), 6, 1)
	tr.Create("/tmax", nil, OpenACL, TTLOwner(MaxTTL), 7, 1)

	kinds := []struct {
		path  string
		kind  Kind
		owner int64 // as clients see it
		ttl   int64
	}{
		{"/p", Persistent, 0, 0},
		{"/p/e1", Ephemeral, 0x11, 0},
		{"/e3", Ephemeral, 0x22, 0},
		{"/c", Container, 0, 0},
		{"/t", TTL, 0, 1500},
		{"/tmax", TTL, 0, MaxTTL},
	}
	for _, k := range kinds {
		n := mustGet(t, tr, k.path)
		if n.Kind() != k.kind || n.Stat().EphemeralOwner != k.owner || n.TTL() != k.ttl {
			t.Errorf("%s: kind %v owner %#x ttl %d; want %v %#x %d",
				k.path, n.Kind(), n.Stat().EphemeralOwner, n.TTL(), k.kind, k.owner, k.ttl)
		}
	}
	if TTLOwner(1500) != -0x100000000000000|1500 {
		t.Errorf("TTLOwner(1500) = %#x", uint64(TTLOwner(1500)))
	}
	if got := tr.Ephemerals(0x11); !reflect.DeepEqual(got, []string{"/p/e1", "/p/e2"}) {
		t.Errorf("Ephemerals(0x11) = %v", got)
	}
	if got := tr.Ephemerals(0x33); len(got) != 0 {
		t.Errorf("Ephemerals(unknown) = %v", got)
	}
	if got := tr.EphemeralSessions(); !reflect.DeepEqual(got, []int64{0x11, 0x22}) {
		t.Errorf("EphemeralSessions = %v", got)
	}
	if got := tr.EphemeralCount(); got != 3 {
		t.Errorf("EphemeralCount = %d", got)
	}
	if got := tr.Containers(); !reflect.DeepEqual(got, []string{"/c"}) {
		t.Errorf("Containers = %v", got)
	}
	if got := tr.TTLNodes(); !reflect.DeepEqual(got, []string{"/t", "/tmax"}) {
		t.Errorf("TTLNodes = %v", got)
	}
	checkInvariants(t, tr)

	tr.Delete("/e3", 8)
	tr.Delete("/c", 9)
	tr.Delete("/t", 10)
	tr.Delete("/p/e1", 11)
	if got := tr.EphemeralSessions(); !reflect.DeepEqual(got, []int64{0x11}) {
		t.Errorf("after deletes EphemeralSessions = %v", got)
	}
	if got := tr.Ephemerals(0x11); !reflect.DeepEqual(got, []string{"/p/e2"}) {
		t.Errorf("after deletes Ephemerals(0x11) = %v", got)
	}
	if len(tr.Containers()) != 0 || !reflect.DeepEqual(tr.TTLNodes(), []string{"/tmax"}) {
		t.Errorf("after deletes containers %v ttls %v", tr.Containers(), tr.TTLNodes())
	}
	checkInvariants(t, tr)
}

// TestOwnerTopByteFF: a session of a server with myid 255 has the top
// byte 0xFF, as a TTL node's ephemeralOwner has. Without extended types
// (where TTL nodes do not exist) the owner is a session, as ZooKeeper's
// EphemeralType.get has it, in every classification the tree makes,
// restored snapshots included; with them it is a TTL node.
func TestOwnerTopByteFF(t *testing.T) {
	const session = -0x100000000000000 | 0x1234567 // 0xFF00000001234567
	for _, extended := range []bool{false, true} {
		opts := Options{ExtendedTypes: extended}
		tr := New(opts)
		tr.Create("/e", nil, OpenACL, session, 1, 1)
		tr.Create("/c", nil, OpenACL, ContainerOwner, 2, 1)
		wantKind, wantOwner, wantEph, wantTTLs := Ephemeral, int64(session), []string{"/e"}, []string(nil)
		if extended {
			wantKind, wantOwner, wantEph, wantTTLs = TTL, 0, nil, []string{"/e"}
		}
		for name, tr := range map[string]*Tree{"built": tr, "restored": roundTrip(t, tr, opts)} {
			n := mustGet(t, tr, "/e")
			if k, o := tr.Kind(n), tr.Stat(n).EphemeralOwner; k != wantKind || o != wantOwner {
				t.Errorf("extended=%v %s: kind %v, client-visible owner %#x; want %v, %#x",
					extended, name, k, uint64(o), wantKind, uint64(wantOwner))
			}
			if got := tr.Ephemerals(session); !equalStrings(got, wantEph) {
				t.Errorf("extended=%v %s: Ephemerals = %v, want %v", extended, name, got, wantEph)
			}
			if got := tr.TTLNodes(); !equalStrings(got, wantTTLs) {
				t.Errorf("extended=%v %s: TTLNodes = %v, want %v", extended, name, got, wantTTLs)
			}
			if c := mustGet(t, tr, "/c"); tr.Kind(c) != Container {
				t.Errorf("extended=%v %s: /c is %v", extended, name, tr.Kind(c))
			}
			checkInvariants(t, tr)
		}
		tr.Delete("/e", 3)
		if got := tr.EphemeralCount() + len(tr.TTLNodes()); got != 0 {
			t.Errorf("extended=%v: %d indexed after the delete", extended, got)
		}
	}

	// A snapshot with a TTL node that has a child, written with extended
	// types, is refused without them: the child would sit under an
	// ephemeral node.
	tr := New(Options{ExtendedTypes: true})
	tr.Create("/t", nil, OpenACL, TTLOwner(1000), 1, 1)
	tr.Create("/t/k", nil, OpenACL, 0, 2, 1)
	if _, err := DecodeSnapshot(proto.NewDecoder(tr.AppendSnapshot(nil)), Options{}); err == nil {
		t.Error("a TTL node with a child restored without extended types")
	}
}

// roundTrip restores tr's snapshot with opts.
func roundTrip(t *testing.T, tr *Tree, opts Options) *Tree {
	t.Helper()
	back, err := DecodeSnapshot(proto.NewDecoder(tr.AppendSnapshot(nil)), opts)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

func TestDeleteReinsert(t *testing.T) {
	tr := New(Options{ExtendedTypes: true})
	tr.Create("/p", []byte("parent"), OpenACL, 0, 1, 10)
	tr.Create("/p/e", []byte("eph"), digestACL, 0x55, 2, 20)
	before := dumpTree(tr)
	p := mustGet(t, tr, "/p")
	oldCversion, oldPzxid := p.Cversion, p.Pzxid

	at := placeOf(tr, "/p/e")
	n := tr.Delete("/p/e", 3)
	if tr.Get("/p/e") != nil || n == nil || string(n.Data) != "eph" {
		t.Fatalf("Delete returned %v", n)
	}
	if uses, _ := tr.ACLUses(digestACL); uses != 0 {
		t.Fatalf("deleted node's ACL still used %d times", uses)
	}
	if len(tr.Ephemerals(0x55)) != 0 || p.Pzxid != 3 {
		t.Fatalf("after Delete: ephemerals %v pzxid %d", tr.Ephemerals(0x55), p.Pzxid)
	}
	checkInvariants(t, tr)

	tr.Reinsert("/p/e", n, digestACL, at)
	p.Cversion, p.Pzxid = oldCversion, oldPzxid
	if d := diffDumps(before, dumpTree(tr)); d != "" {
		t.Fatalf("Reinsert did not restore the tree:\n%s", d)
	}
	checkInvariants(t, tr)
}

func TestACLInterning(t *testing.T) {
	tr := New(Options{ExtendedTypes: true})
	a := tr.Create("/a", nil, digestACL, 0, 1, 1)
	b := tr.Create("/b", nil, digestACL, 0, 2, 1)
	if a.ACL != b.ACL {
		t.Fatalf("equal lists got refs %d and %d", a.ACL, b.ACL)
	}
	if uses, _ := tr.ACLUses(digestACL); uses != 2 || tr.ACLLists() != 3 {
		t.Fatalf("uses %d lists %d, want 2 and 3", uses, tr.ACLLists())
	}
	// The tree keeps its own copy.
	mine := append([]proto.ACL(nil), mixedACL...)
	c := tr.Create("/c", nil, mine, 0, 3, 1)
	mine[0].Perms = 0
	if tr.ACL(c)[0].Perms != proto.PermRead {
		t.Fatal("tree shares the caller's ACL slice")
	}
	// Order matters: a reordered list is another list.
	rev := []proto.ACL{mixedACL[1], mixedACL[0]}
	d := tr.Create("/d", nil, rev, 0, 4, 1)
	if d.ACL == c.ACL || tr.ACLLists() != 5 {
		t.Fatalf("reordered list shares ref %d; %d lists", d.ACL, tr.ACLLists())
	}

	// setACL to the same list keeps one use.
	tr.SetACL(a, digestACL, 1)
	if uses, _ := tr.ACLUses(digestACL); uses != 2 {
		t.Fatalf("setACL to the same list: uses %d", uses)
	}
	tr.SetACL(a, OpenACL, 2)
	tr.Delete("/b", 5)
	if uses, _ := tr.ACLUses(digestACL); uses != 0 || tr.ACLLists() != 4 {
		t.Fatalf("after last use: uses %d lists %d", uses, tr.ACLLists())
	}
	// A dropped list is interned afresh and reads back right.
	e := tr.Create("/e", nil, digestACL, 0, 6, 1)
	if uses, _ := tr.ACLUses(digestACL); uses != 1 || !reflect.DeepEqual(tr.ACL(e), digestACL) {
		t.Fatalf("re-interned: uses %d ACL %v", uses, tr.ACL(e))
	}
	checkInvariants(t, tr)
}

// TestACLKeyUnambiguous: ids may hold any bytes (a digest id needs only one
// colon), so the interning key must not confuse a list with one id holding
// separator bytes with a list of several entries.
func TestACLKeyUnambiguous(t *testing.T) {
	tr := New(Options{ExtendedTypes: true})
	one := []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "digest", ID: "u:p\x0031\x00world\x00anyone"}}}
	two := []proto.ACL{
		{Perms: proto.PermAll, ID: proto.ID{Scheme: "digest", ID: "u:p"}},
		{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}},
	}
	a := tr.Create("/a", nil, one, 0, 1, 1)
	b := tr.Create("/b", nil, two, 0, 2, 1)
	if a.ACL == b.ACL || !reflect.DeepEqual(tr.ACL(b), two) || !reflect.DeepEqual(tr.ACL(a), one) {
		t.Fatalf("lists confused: %v / %v", tr.ACL(a), tr.ACL(b))
	}
	nilRef := tr.Create("/n", nil, nil, 0, 3, 1)
	if got := tr.ACL(nilRef); got == nil || len(got) != 0 {
		t.Fatalf("empty list reads back as %#v", got)
	}
	checkInvariants(t, tr)
}

func TestWalkOrderAndCounts(t *testing.T) {
	tr := New(Options{ExtendedTypes: true})
	for i, p := range []string{"/b", "/a", "/a/z", "/a/y", "/a/y/x", "/c"} {
		tr.Create(p, nil, OpenACL, 0, int64(i+1), 1)
	}
	var order []string
	tr.Walk(func(path string, _ *Node) { order = append(order, path) })
	want := []string{"/", "/a", "/a/y", "/a/y/x", "/a/z", "/b", "/c", "/zookeeper", "/zookeeper/config", "/zookeeper/quota"}
	if !reflect.DeepEqual(order, want) {
		t.Fatalf("Walk order = %v\nwant %v", order, want)
	}
	if got := CountDescendants(mustGet(t, tr, "/a")); got != 3 {
		t.Errorf("CountDescendants(/a) = %d, want 3", got)
	}
	if got := CountDescendants(mustGet(t, tr, "/")); got != 9 {
		t.Errorf("CountDescendants(/) = %d, want 9", got)
	}
	if got := CountDescendants(mustGet(t, tr, "/c")); got != 0 {
		t.Errorf("CountDescendants(/c) = %d", got)
	}
	a := mustGet(t, tr, "/a")
	if a.Child("y") == nil || a.Child("x") != nil || a.NumChildren() != 2 {
		t.Error("Child/NumChildren wrong")
	}
	seen := map[string]bool{}
	a.EachChild(func(name string, c *Node) {
		if a.Child(name) != c {
			t.Errorf("EachChild gave %q with the wrong node", name)
		}
		seen[name] = true
	})
	if len(seen) != 2 || !seen["y"] || !seen["z"] {
		t.Errorf("EachChild saw %v", seen)
	}
	if tr.NodeCount() != 10 {
		t.Errorf("NodeCount = %d", tr.NodeCount())
	}
	checkInvariants(t, tr)
}

func TestDataSize(t *testing.T) {
	tr := New(Options{ExtendedTypes: true})
	base := tr.DataSize()
	tr.Create("/ab", []byte("12345"), OpenACL, 0, 1, 1)
	if got := tr.DataSize(); got != base+3+5 {
		t.Fatalf("after create DataSize = %d, want %d", got, base+8)
	}
	tr.Create("/ab/cd", nil, OpenACL, 0, 2, 1)
	if got := tr.DataSize(); got != base+8+6 {
		t.Fatalf("after nil-data create DataSize = %d", got)
	}
	tr.Delete("/ab/cd", 3)
	tr.Delete("/ab", 4)
	if got := tr.DataSize(); got != base {
		t.Fatalf("after deletes DataSize = %d, want %d", got, base)
	}
}
