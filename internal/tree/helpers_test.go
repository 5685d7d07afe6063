package tree

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

var (
	digestACL = []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "digest", ID: "u:hash"}}}
	mixedACL  = []proto.ACL{
		{Perms: proto.PermRead, ID: proto.ID{Scheme: "world", ID: "anyone"}},
		{Perms: proto.PermAll, ID: proto.ID{Scheme: "ip", ID: "127.0.0.1"}},
	}
)

// nodeDump is everything known about one node, for whole-tree comparisons.
type nodeDump struct {
	Stat     proto.Stat
	Data     []byte
	DataNil  bool
	ACL      []proto.ACL
	Owner    int64 // raw ephemeralOwner
	Cversion int32 // persisted (creation count)
	Kind     Kind
	Children []string
}

// treeDump captures a tree's nodes and indexes.
type treeDump struct {
	Nodes      map[string]nodeDump
	Count      int
	DataSize   int64
	Ephemerals map[int64][]string
	Containers []string
	TTLs       []string
	ACLLists   int
	Quotas     map[string]int // the quota index: limits nodes by key (quotaKeys)
}

func dumpTree(t *Tree) treeDump {
	d := treeDump{
		Nodes:      make(map[string]nodeDump),
		Count:      t.NodeCount(),
		DataSize:   t.DataSize(),
		Ephemerals: make(map[int64][]string),
		Containers: t.Containers(),
		TTLs:       t.TTLNodes(),
		ACLLists:   t.ACLLists(),
		Quotas:     quotaKeys(&t.quotas),
	}
	for _, s := range t.EphemeralSessions() {
		d.Ephemerals[s] = t.Ephemerals(s)
	}
	t.Walk(func(path string, n *Node) {
		kids := n.Children()
		sort.Strings(kids)
		d.Nodes[path] = nodeDump{
			Stat: t.Stat(n), Data: n.Data, DataNil: n.Data == nil, ACL: t.ACL(n),
			Owner: n.EphemeralOwner, Cversion: n.Cversion, Kind: t.Kind(n), Children: kids,
		}
	})
	return d
}

// diffDumps returns a description of the first differences, or "".
func diffDumps(a, b treeDump) string {
	var out bytes.Buffer
	for p, na := range a.Nodes {
		nb, ok := b.Nodes[p]
		switch {
		case !ok:
			fmt.Fprintf(&out, "%s: only in first\n", p)
		case !reflect.DeepEqual(na, nb):
			fmt.Fprintf(&out, "%s:\n  %+v\n  %+v\n", p, na, nb)
		}
	}
	for p := range b.Nodes {
		if _, ok := a.Nodes[p]; !ok {
			fmt.Fprintf(&out, "%s: only in second\n", p)
		}
	}
	a.Nodes, b.Nodes = nil, nil
	if !reflect.DeepEqual(a, b) {
		fmt.Fprintf(&out, "tree-wide:\n  %+v\n  %+v\n", a, b)
	}
	return out.String()
}

// checkInvariants recomputes what the tree keeps incrementally.
func checkInvariants(t *testing.T, tr *Tree) {
	t.Helper()
	count, size := 0, int64(rootSize)
	eph := make(map[int64][]string)
	var containers, ttls []string
	used := make(map[string]bool)
	tr.Walk(func(path string, n *Node) {
		count++
		checkChildList(t, path, n)
		size += int64(len(n.Data))
		if path != "/" {
			size += int64(len(path))
		}
		acl := tr.ACL(n)
		if acl == nil {
			t.Errorf("%s: ACL reference %d is not interned", path, n.ACL)
		}
		used[aclKey(acl)] = true
		switch tr.Kind(n) {
		case Ephemeral:
			eph[n.EphemeralOwner] = append(eph[n.EphemeralOwner], path)
		case Container:
			containers = append(containers, path)
		case TTL:
			ttls = append(ttls, path)
		}
	})
	if count != tr.NodeCount() {
		t.Errorf("NodeCount = %d, walk finds %d", tr.NodeCount(), count)
	}
	if size != tr.DataSize() {
		t.Errorf("DataSize = %d, recomputed %d", tr.DataSize(), size)
	}
	if len(used) != tr.ACLLists() {
		t.Errorf("%d ACL lists interned, %d in use", tr.ACLLists(), len(used))
	}
	total := 0
	for s, paths := range eph {
		sort.Strings(paths)
		if got := tr.Ephemerals(s); !reflect.DeepEqual(got, paths) {
			t.Errorf("Ephemerals(%d) = %v, want %v", s, got, paths)
		}
		total += len(paths)
	}
	if len(tr.EphemeralSessions()) != len(eph) {
		t.Errorf("EphemeralSessions = %v, want the %d owners", tr.EphemeralSessions(), len(eph))
	}
	if tr.EphemeralCount() != total {
		t.Errorf("EphemeralCount = %d, want %d", tr.EphemeralCount(), total)
	}
	sort.Strings(containers)
	sort.Strings(ttls)
	if got := tr.Containers(); !equalStrings(got, containers) {
		t.Errorf("Containers = %v, want %v", got, containers)
	}
	if got := tr.TTLNodes(); !equalStrings(got, ttls) {
		t.Errorf("TTLNodes = %v, want %v", got, ttls)
	}
	if got, want := quotaKeys(&tr.quotas), naiveQuotas(tr); !reflect.DeepEqual(got, want) {
		t.Errorf("quota index %v, want %v", got, want)
	}
	checkQuotaTrie(t, &tr.quotas, "")
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func mustGet(t *testing.T, tr *Tree, path string) *Node {
	t.Helper()
	n := tr.Get(path)
	if n == nil {
		t.Fatalf("Get(%q) = nil", path)
	}
	return n
}
