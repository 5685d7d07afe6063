package fsm

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/tree"
)

// quotaTrieCases: which quota a path falls under, as ZooKeeper's PathTrie
// decides it. nodes are created in order (with their missing ancestors);
// want names the quota by its components ("/a/b" for the stats node
// /zookeeper/quota/a/b/zookeeper_stats), "" for none. Every case but the
// last was checked against a ZooKeeper 3.8.0 server the way
// checkQuotaCase checks Paddock: stats nodes made for each quota path
// could fall under, and the one that a setData of path changes.
var quotaTrieCases = []struct {
	name  string
	nodes []string
	path  string
	want  string
}{
	{"plain", []string{"/zookeeper/quota/a/zookeeper_limits"}, "/a/b", "/a"},
	{"exact", []string{"/zookeeper/quota/a/zookeeper_limits"}, "/a", "/a"},
	{"whole components", []string{"/zookeeper/quota/a/zookeeper_limits"}, "/ab", ""},
	{"deepest wins", []string{"/zookeeper/quota/a/zookeeper_limits", "/zookeeper/quota/a/b/zookeeper_limits"}, "/a/b/c", "/a/b"},
	{"nested sibling", []string{"/zookeeper/quota/a/zookeeper_limits", "/zookeeper/quota/a/b/zookeeper_limits"}, "/a/bc", "/a"},
	// Components that trim to nothing are dropped, in quota paths and in
	// looked-up paths alike; the others are kept untrimmed.
	{"space in quota path", []string{"/zookeeper/quota/a/ /zookeeper_limits"}, "/a/x", "/a"},
	{"space in path", []string{"/zookeeper/quota/a/b/zookeeper_limits"}, "/a/ /b", "/a/b"},
	{"spaces in path", []string{"/zookeeper/quota/a/b/zookeeper_limits"}, "/a/  /b/ ", "/a/b"},
	{"space under quota", []string{"/zookeeper/quota/ /a/zookeeper_limits"}, "/a", "/a"},
	{"space chain", []string{"/zookeeper/quota/ / /a/ /b/zookeeper_limits"}, "/a/b", "/a/b"},
	{"leading space kept", []string{"/zookeeper/quota/ a/zookeeper_limits"}, "/ a/x", "/ a"},
	{"leading space not trimmed", []string{"/zookeeper/quota/ a/zookeeper_limits"}, "/a", ""},
	{"trailing space kept", []string{"/zookeeper/quota/a /zookeeper_limits"}, "/a /x", "/a "},
	{"no components", []string{"/zookeeper/quota/ /zookeeper_limits"}, "/x", ""},
	// A limits node's parent only has to start with "/zookeeper/quota".
	{"quota space", []string{"/zookeeper/quota /a/zookeeper_limits"}, "/a/x", "/a"},
	{"quota space, no components", []string{"/zookeeper/quota /zookeeper_limits"}, "/x", ""},
	{"quotaX", []string{"/zookeeper/quotaa/zookeeper_limits"}, "/a/x", "/a"},
	{"quotaX deeper", []string{"/zookeeper/quotaa/b/zookeeper_limits"}, "/a/b", "/a/b"},
	{"quotaX deeper, parent", []string{"/zookeeper/quotaa/b/zookeeper_limits"}, "/a", ""},
	{"quotaX space", []string{"/zookeeper/quotaa/ /b/zookeeper_limits"}, "/a/b", "/a/b"},
	{"two routes", []string{"/zookeeper/quota/a/zookeeper_limits", "/zookeeper/quota /a/b/zookeeper_limits"}, "/a/b/c", "/a/b"},
	{"among siblings", []string{"/zookeeper/quota/b/zookeeper_limits", "/zookeeper/quota/c/zookeeper_limits", "/zookeeper/quota/ /d/zookeeper_limits"}, "/d/x", "/d"},
	{"elsewhere", []string{"/zookeeper/quo/a/zookeeper_limits", "/zookeeper/a/zookeeper_limits"}, "/a", ""},
	// The names zookeeper_limits and zookeeper_stats are components too.
	{"limits with a child", []string{"/zookeeper/quota/a/zookeeper_limits", "/zookeeper/quota/a/zookeeper_limits/c"}, "/a", "/a"},
	{"limits as component", []string{"/zookeeper/quota/a/zookeeper_limits/b/zookeeper_limits"}, "/a/zookeeper_limits/b/c", "/a/zookeeper_limits/b"},
	{"limits as component, parent", []string{"/zookeeper/quota/a/zookeeper_limits/b/zookeeper_limits"}, "/a/zookeeper_limits/x", "/a"},
	{"stats as component", []string{"/zookeeper/quota/a/zookeeper_stats/zookeeper_limits"}, "/a/zookeeper_stats", "/a/zookeeper_stats"},
	{"quota on /zookeeper", []string{"/zookeeper/quota/zookeeper/zookeeper_limits"}, "/zookeeper/quota/x", "/zookeeper"},
	// Not checked against ZooKeeper, which creates the node and then
	// throws (PathTrie.addPath("")).
	{"limits of /zookeeper/quota", []string{"/zookeeper/quota/zookeeper_limits"}, "/x", ""},
}

// TestQuotaTrieRules: a write is counted in the stats node of the quota
// ZooKeeper's PathTrie finds for its path, and in no other.
func TestQuotaTrieRules(t *testing.T) {
	for _, tc := range quotaTrieCases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			h.openSession(sess1)
			for _, n := range tc.nodes {
				ensurePath(h, n)
			}
			ensurePath(h, tc.path)
			if got := checkQuotaCase(h, tc.path); got != tc.want {
				t.Errorf("setData %q counted in the quota of %q, want %q", tc.path, got, tc.want)
			}
		})
	}
}

// checkQuotaCase makes a stats node for each quota path could fall under
// (one per leading run of its components), sets path's data, and returns
// the quota whose stats changed ("" for none, all of them joined with '|'
// if several did).
func checkQuotaCase(h *harness, path string) string {
	h.t.Helper()
	comps := quotaComponents(path)
	var quotas, stats []string
	for j := 1; j <= len(comps); j++ {
		q := "/" + strings.Join(comps[:j], "/")
		quotas = append(quotas, q)
		stats = append(stats, ensurePath(h, "/zookeeper/quota"+q+"/zookeeper_stats"))
	}
	before := make([]string, len(stats))
	for i, s := range stats {
		before[i] = string(h.node(s).Data)
	}
	h.must(sess1, nil, setData(path, "1234567", -1))
	var changed []string
	for i, s := range stats {
		if string(h.node(s).Data) != before[i] {
			changed = append(changed, quotas[i])
		}
	}
	return strings.Join(changed, "|")
}

// ensurePath creates path and its missing ancestors, and returns path.
func ensurePath(h *harness, path string) string {
	h.t.Helper()
	for i := 1; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			continue
		}
		if p := path[:i]; h.m.Tree().Get(p) == nil {
			h.must(sess1, nil, create(p, "", 0))
		}
	}
	return path
}

// quotaComponents returns the components of path as tree.NextQuotaComponent
// gives them one by one.
func quotaComponents(path string) []string {
	var out []string
	for {
		var name string
		name, path = tree.NextQuotaComponent(path)
		if name == "" {
			return out
		}
		out = append(out, name)
	}
}

// TestQuotaComponents: a path's components are PathTrie.split's: the
// '/'-separated names without those that Java's trim() leaves empty (all
// characters at most U+0020), the others untrimmed.
func TestQuotaComponents(t *testing.T) {
	tests := []struct {
		path string
		want []string
	}{
		{"/", nil},
		{"", nil},
		{"/a", []string{"a"}},
		{"/a/b/c", []string{"a", "b", "c"}},
		{"a/b", []string{"a", "b"}}, // trimQuotaPath of /zookeeper/quotaa/b
		{"/a/ /b", []string{"a", "b"}},
		{"/ / /a/  ", []string{"a"}},
		{"/ a/b ", []string{" a", "b "}},
		{"/\t/\x01 \x20/a\x00", []string{"a\x00"}},
		{"/\u00a0/\u3000", []string{"\u00a0", "\u3000"}}, // not at most U+0020: kept, as trim keeps them
		{"//a//", []string{"a"}},
	}
	for _, tc := range tests {
		if got := quotaComponents(tc.path); !slices.Equal(got, tc.want) {
			t.Errorf("components of %q: %q, want %q", tc.path, got, tc.want)
		}
	}
}

// TestQuotaDepthNoQuota: with no quota anywhere every path has depth 0,
// and a stats node alone makes no quota.
func TestQuotaDepthNoQuota(t *testing.T) {
	h := newHarness(t, Options{})
	h.openSession(sess1)
	for _, p := range []string{"/", "/a", "/zookeeper", "/zookeeper/quota", "/zookeeper/quota/a/zookeeper_stats"} {
		if d := h.m.Tree().QuotaDepth(p); d != 0 {
			t.Errorf("QuotaDepth(%q) = %d in a fresh tree", p, d)
		}
	}
	ensurePath(h, "/zookeeper/quota/a/zookeeper_stats")
	ensurePath(h, "/zookeeper/quotaa/zookeeper_stats")
	if d := h.m.Tree().QuotaDepth("/a/b"); d != 0 {
		t.Errorf("QuotaDepth(/a/b) = %d with stats nodes only", d)
	}
}

// TestQuotaFollowsLimitsNodes: deleting a limits node ends its quota, as
// ZooKeeper's deleteNode does, also one outside /zookeeper/quota/; a
// failed multi that created one leaves no quota behind; where two limits
// nodes name the same components, the quota lasts while one is left
// (ZooKeeper's trie drops it with the first: see quota.go).
func TestQuotaFollowsLimitsNodes(t *testing.T) {
	h := newHarness(t, Options{})
	h.openSession(sess1)
	ensurePath(h, "/a/x")
	const stats = "/zookeeper/quota/a/zookeeper_stats"
	ensurePath(h, stats)
	counted := func() bool {
		h.t.Helper()
		before := string(h.node(stats).Data)
		h.must(sess1, nil, setData("/a/x", string(h.node("/a/x").Data)+"x", -1)) // one byte more
		return string(h.node(stats).Data) != before
	}

	ensurePath(h, "/zookeeper/quotaa/zookeeper_limits")
	if !counted() {
		t.Fatal("not counted under /zookeeper/quotaa/zookeeper_limits")
	}
	h.must(sess1, nil, del("/zookeeper/quotaa/zookeeper_limits", -1))
	if counted() {
		t.Fatal("counted after /zookeeper/quotaa/zookeeper_limits was deleted")
	}

	ensurePath(h, "/zookeeper/quota/a/ ")
	r := h.multi(sess1, nil, create("/zookeeper/quota/a/ /zookeeper_limits", "", 0), check("/a", 99))
	if r.Ops[1].Err != proto.ErrBadVersion || h.m.Tree().Get("/zookeeper/quota/a/ /zookeeper_limits") != nil {
		t.Fatalf("multi: %+v, want it to fail", r.Ops)
	}
	if counted() {
		t.Fatal("counted after a failed multi created a limits node")
	}

	ensurePath(h, "/zookeeper/quota/a/zookeeper_limits")
	ensurePath(h, "/zookeeper/quota/a/ /zookeeper_limits")
	h.must(sess1, nil, del("/zookeeper/quota/a/ /zookeeper_limits", -1))
	if !counted() {
		t.Fatal("not counted while /zookeeper/quota/a/zookeeper_limits is left")
	}
	h.must(sess1, nil, del("/zookeeper/quota/a/zookeeper_limits", -1))
	if counted() {
		t.Fatal("counted with no limits node left")
	}
}

// TestQuotaAfterRestore: a machine restored from a snapshot counts writes
// in the same quotas as the one that took it, the quotas that the trie
// rules alone give included.
func TestQuotaAfterRestore(t *testing.T) {
	h := newHarness(t, Options{})
	h.openSession(sess1)
	for _, p := range []string{"/a/b/c", "/a/ ", "/d/e", "/zookeeper/quota/a/ /zookeeper_limits", "/zookeeper/quotad/zookeeper_limits",
		"/zookeeper/quota/a/b/zookeeper_limits", "/zookeeper/quota/a/b/zookeeper_limits/x",
		"/zookeeper/quota/a/zookeeper_stats", "/zookeeper/quota/a/b/zookeeper_stats", "/zookeeper/quota/d/zookeeper_stats"} {
		ensurePath(h, p)
	}
	snap := h.m.AppendSnapshot(nil)
	other := newHarness(t, Options{})
	if err := other.m.Restore(snap); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	other.index, other.now = h.index, h.now
	writes := []Op{create("/a/ /n", "abc", 0), setData("/a/b/c", "12345", -1), create("/d/e/f", "xy", 0), del("/a/b/c", -1), setData("/d", "q", -1)}
	for _, op := range writes {
		h.must(sess1, nil, op)
		other.must(sess1, nil, op)
	}
	for _, s := range []string{"/zookeeper/quota/a/zookeeper_stats", "/zookeeper/quota/a/b/zookeeper_stats", "/zookeeper/quota/d/zookeeper_stats"} {
		if got, want := string(other.node(s).Data), string(h.node(s).Data); got != want {
			t.Errorf("%s after restore: %q, want %q", s, got, want)
		}
	}
	// The quotas were all in effect: a on "/a/ /n", a/b on /a/b/c, d on
	// the rest.
	for s, want := range map[string]string{
		"/zookeeper/quota/a/zookeeper_stats":   "count=5,bytes=3", // /a, /a/b, /a/b/c, "/a/ " and "/a/ /n"
		"/zookeeper/quota/a/b/zookeeper_stats": "count=1,bytes=0", // /a/b
		"/zookeeper/quota/d/zookeeper_stats":   "count=3,bytes=3", // /d, /d/e, /d/e/f
	} {
		if got := string(h.node(s).Data); got != want {
			t.Errorf("%s: %q, want %q", s, got, want)
		}
	}
}

// BenchmarkApplyCreateUnderQuota measures applying creates under paths
// with quotas: 100 quotas, on /q0 to /q99, each with its stats node.
func BenchmarkApplyCreateUnderQuota(b *testing.B) {
	const quotas = 100
	m := New(Options{})
	m.ApplyEntry(1, &Entry{Type: EntryCreateSession, Session: 1, Timeout: 10000, Passwd: make([]byte, 16)})
	index := uint64(1)
	for i := range quotas {
		q := "/q" + strconv.Itoa(i)
		for _, p := range []string{q, "/zookeeper/quota" + q, "/zookeeper/quota" + q + "/zookeeper_limits", "/zookeeper/quota" + q + "/zookeeper_stats"} {
			index++
			if r := m.ApplyEntry(index, &Entry{Type: EntryTxn, Session: 1, Ops: []Op{{Op: proto.OpCreate, Path: p, ACL: openACL}}}); r.Err != proto.ErrOK {
				b.Fatal(p, r.Err)
			}
		}
	}
	val := make([]byte, 100)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		index++
		e := &Entry{Type: EntryTxn, Session: 1, Ops: []Op{{Op: proto.OpCreate,
			Path: "/q" + strconv.Itoa(i%quotas) + "/n" + strconv.Itoa(i), Data: val, ACL: openACL}}}
		if r := m.ApplyEntry(index, e); r.Err != proto.ErrOK {
			b.Fatal(r.Err)
		}
		i++
	}
}
