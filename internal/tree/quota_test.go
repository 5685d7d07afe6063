package tree

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// naiveComponents splits path as PathTrie.split does, written apart from
// NextQuotaComponent: the names that are not all characters at most
// U+0020.
func naiveComponents(path string) []string {
	var out []string
	for _, name := range strings.Split(path, "/") {
		if strings.TrimFunc(name, func(r rune) bool { return r <= ' ' }) != "" {
			out = append(out, name)
		}
	}
	return out
}

// naiveQuotas returns what the quota index should hold, found by walking
// every node: the limits nodes by the components they name, joined as
// "/a/b".
func naiveQuotas(tr *Tree) map[string]int {
	out := map[string]int{}
	tr.Walk(func(path string, _ *Node) {
		if !strings.HasSuffix(path, "/"+QuotaLimits) {
			return
		}
		parent := path[:len(path)-len("/"+QuotaLimits)]
		if !strings.HasPrefix(parent, QuotaPath) {
			return
		}
		if c := naiveComponents(parent[len(QuotaPath):]); len(c) > 0 {
			out["/"+strings.Join(c, "/")]++
		}
	})
	return out
}

// naiveQuotaDepth is QuotaDepth found from naiveQuotas.
func naiveQuotaDepth(quotas map[string]int, path string) int {
	comps := naiveComponents(path)
	best := 0
	for key := range quotas {
		q := naiveComponents(key)
		if len(q) <= len(comps) && slices.Equal(q, comps[:len(q)]) {
			best = max(best, len(q))
		}
	}
	return best
}

// quotaKeys flattens the quota index to its counted trie nodes by key.
func quotaKeys(q *quotaTrie) map[string]int {
	out := map[string]int{}
	var walk func(q *quotaTrie, key string)
	walk = func(q *quotaTrie, key string) {
		if q.limits > 0 {
			out[key] = q.limits
		}
		for name, k := range q.kids {
			walk(k, key+"/"+name)
		}
	}
	walk(q, "")
	return out
}

// checkQuotaTrie checks that the trie below q keeps no dead nodes: every
// trie node has limits or children, and a childless one a nil map; the
// root counts no limits.
func checkQuotaTrie(t *testing.T, q *quotaTrie, key string) {
	t.Helper()
	if key == "" && q.limits != 0 {
		t.Errorf("quota trie root has limits %d", q.limits)
	}
	if q.kids != nil && len(q.kids) == 0 {
		t.Errorf("quota trie %q: empty children map", key)
	}
	if key != "" && q.limits <= 0 && len(q.kids) == 0 {
		t.Errorf("quota trie %q: dead node (limits %d)", key, q.limits)
	}
	for name, k := range q.kids {
		if blankName(name) {
			t.Errorf("quota trie %q: blank component %q", key, name)
		}
		checkQuotaTrie(t, k, key+"/"+name)
	}
}

// TestQuotaDepth: the quota a path falls under, by PathTrie's rules (see
// package fsm's quota_trie_test.go for the cases checked against ZooKeeper).
func TestQuotaDepth(t *testing.T) {
	tests := []struct {
		nodes []string
		path  string
		want  int
	}{
		{nil, "/a", 0},
		{[]string{"/zookeeper/quota/a/zookeeper_limits"}, "/a/b", 1},
		{[]string{"/zookeeper/quota/a/zookeeper_limits"}, "/ab", 0},
		{[]string{"/zookeeper/quota/a/zookeeper_limits", "/zookeeper/quota/a/b/zookeeper_limits"}, "/a/ /b/c", 2},
		{[]string{"/zookeeper/quota/a/b/zookeeper_limits"}, "/a", 0},
		{[]string{"/zookeeper/quota/ / /a/ /b/zookeeper_limits"}, "/a/b", 2},
		{[]string{"/zookeeper/quotaa/ /b/zookeeper_limits"}, "/a/b/c", 2},
		{[]string{"/zookeeper/quota /a/zookeeper_limits"}, "/a", 1},
		{[]string{"/zookeeper/quota/ /zookeeper_limits", "/zookeeper/quota/zookeeper_limits", "/zookeeper/quota/zookeeper_limits/zookeeper_limits"}, "/zookeeper_limits", 1},
		{[]string{"/zookeeper/quo/a/zookeeper_limits", "/zookeeper/a/zookeeper_limits", "/zookeeper_limits"}, "/a", 0},
		{[]string{"/zookeeper/quota/ a/zookeeper_limits"}, "/a", 0},
	}
	for _, tc := range tests {
		tr := New(Options{})
		for _, p := range tc.nodes {
			createAll(tr, p)
		}
		if got := tr.QuotaDepth(tc.path); got != tc.want {
			t.Errorf("nodes %q: QuotaDepth(%q) = %d, want %d", tc.nodes, tc.path, got, tc.want)
		}
		checkInvariants(t, tr)
	}
}

// createAll creates path and its missing ancestors.
func createAll(tr *Tree, path string) {
	for i := 1; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			continue
		}
		if p := path[:i]; tr.Get(p) == nil {
			tr.Create(p, nil, OpenACL, 0, 1, 1)
		}
	}
}

// TestQuotaIndexRandom: under random creates, deletes, reinserts and
// snapshot round trips among names that make quotas in every way
// (limits nodes, blank names, quotaX directories), the index always holds
// what a walk of the tree finds, keeps no dead trie nodes, and QuotaDepth
// agrees with a lookup by walking.
func TestQuotaIndexRandom(t *testing.T) {
	names := []string{"a", "b", " ", "  ", "quota", "quota ", "quotaa", QuotaLimits, QuotaLimits, QuotaLimits, "zookeeper_stats"}
	var probes []string
	for _, a := range names[:9] {
		probes = append(probes, "/"+a)
		for _, b := range names[:9] {
			probes = append(probes, "/"+a+"/"+b, "/"+a+"/"+b+"/a")
		}
	}
	rng := rand.New(rand.NewPCG(7, 11))
	tr := New(Options{})
	zxid := int64(1)
	withQuotas, maxQuotas := 0, 0
	for step := range 2000 {
		var paths []string
		tr.Walk(func(path string, _ *Node) { paths = append(paths, path) })
		// Mostly below /zookeeper's quota directories, where quotas are
		// made; the tree stays small enough for limits nodes to come and
		// go often.
		var under []string
		for _, p := range paths {
			if strings.HasPrefix(p, ZooKeeperPath+"/quota") && strings.Count(p, "/") <= 5 {
				under = append(under, p)
			}
		}
		pick := func() string {
			if len(under) > 0 && rng.IntN(5) > 0 {
				return under[rng.IntN(len(under))]
			}
			return paths[rng.IntN(len(paths))]
		}
		creates := 6
		if len(paths) > 100 {
			creates = 3
		}
		zxid++
		switch op := rng.IntN(10); {
		case op < creates: // create
			parent := pick()
			path := parent + "/" + names[rng.IntN(len(names))]
			if parent == "/" {
				path = path[1:]
			}
			if tr.Get(path) == nil {
				tr.Create(path, []byte("x"), OpenACL, 0, zxid, zxid)
			}
		case op < 9: // delete, or delete and put back as a multi's rollback does
			path := pick()
			if n := tr.Get(path); path != "/" && path != ZooKeeperPath && path != QuotaPath && n.NumChildren() == 0 {
				at := placeOf(tr, path)
				n = tr.Delete(path, zxid)
				if op == 8 {
					tr.Reinsert(path, n, OpenACL, at)
				}
			}
		default: // snapshot round trip
			d := proto.NewDecoder(tr.AppendSnapshot(nil))
			got, err := DecodeSnapshot(d, Options{})
			if err != nil {
				t.Fatalf("step %d: DecodeSnapshot: %v", step, err)
			}
			if diff := diffDumps(dumpTree(tr), dumpTree(got)); diff != "" {
				t.Fatalf("step %d: restored tree differs:\n%s", step, diff)
			}
			tr = got
		}
		checkInvariants(t, tr)
		quotas := naiveQuotas(tr)
		if len(quotas) > 0 {
			withQuotas++
		}
		maxQuotas = max(maxQuotas, len(quotas))
		for _, p := range probes {
			if got, want := tr.QuotaDepth(p), naiveQuotaDepth(quotas, p); got != want {
				t.Fatalf("step %d: QuotaDepth(%q) = %d, want %d (quotas %v)", step, p, got, want, quotas)
			}
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("steps with quotas %d, most quotas %d, nodes %d", withQuotas, maxQuotas, tr.NodeCount())
	if withQuotas < 1000 || maxQuotas < 10 {
		t.Errorf("quotas in %d steps, at most %d: the test exercised little", withQuotas, maxQuotas)
	}
}

// TestQuotaDepthNoAlloc: a lookup allocates nothing, also for a path with
// blank components.
func TestQuotaDepthNoAlloc(t *testing.T) {
	tr := New(Options{})
	createAll(tr, "/zookeeper/quota/a/ /b/zookeeper_limits")
	if allocs := testing.AllocsPerRun(100, func() { tr.QuotaDepth("/a/  /b/c/d") }); allocs != 0 {
		t.Errorf("QuotaDepth allocates %v times", allocs)
	}
}

// TestCopyQuotaIndex: a copy answers QuotaDepth and lists its quotas as
// the tree was when it was taken, whatever the tree does afterwards.
func TestCopyQuotaIndex(t *testing.T) {
	tr := New(Options{})
	createAll(tr, "/zookeeper/quota/a/zookeeper_limits")
	createAll(tr, "/zookeeper/quota/a/b/zookeeper_limits")
	x := tr.CopyQuotaIndex()
	tr.Delete("/zookeeper/quota/a/b/zookeeper_limits", 2)
	createAll(tr, "/zookeeper/quota/c/zookeeper_limits")
	checkInvariants(t, tr)
	for _, tc := range []struct {
		path       string
		tree, copy int
	}{{"/a/b/x", 1, 2}, {"/a", 1, 1}, {"/c/d", 1, 0}, {"/d", 0, 0}} {
		if got := tr.QuotaDepth(tc.path); got != tc.tree {
			t.Errorf("tree: QuotaDepth(%q) = %d, want %d", tc.path, got, tc.tree)
		}
		if got := x.QuotaDepth(tc.path); got != tc.copy {
			t.Errorf("copy: QuotaDepth(%q) = %d, want %d", tc.path, got, tc.copy)
		}
	}
	var quotas []string
	x.EachQuota(func(c []string) { quotas = append(quotas, strings.Join(c, "/")) })
	slices.Sort(quotas)
	if !slices.Equal(quotas, []string{"a", "a/b"}) {
		t.Errorf("copy's quotas %q, want a and a/b", quotas)
	}
}
