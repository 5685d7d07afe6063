package fsm

import (
	"strconv"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// BenchmarkQuotaDepth measures finding the quota a write's path falls
// under (Tree.QuotaDepth), the lookup every create, delete and setData
// makes: with no quota, with 10 and 1000 quotas (on /q0, /q1, ..., each a
// limits and a stats node under /zookeeper/quota), and with 10,000
// children of /zookeeper/quota, one of them named " " (a name with no
// component) holding the one quota, on /q5. The path looked up lies below
// /q5 (below /a with no quota).
func BenchmarkQuotaDepth(b *testing.B) {
	cases := []struct {
		name string
		// build creates the nodes, with their missing ancestors.
		build func(create func(path string))
		path  string
		want  int
	}{
		{"quotas=0", func(func(string)) {}, "/a/b/c", 0},
		{"quotas=10", func(create func(string)) { makeQuotas(create, 10) }, "/q5/b/c", 1},
		{"quotas=1000", func(create func(string)) { makeQuotas(create, 1000) }, "/q5/b/c", 1},
		{"children=10000", func(create func(string)) {
			for i := range 10000 - 1 {
				create("/zookeeper/quota/c" + strconv.Itoa(i))
			}
			create("/zookeeper/quota/ /q5/zookeeper_limits")
		}, "/q5/b/c", 1},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			m := New(Options{})
			m.ApplyEntry(1, &Entry{Type: EntryCreateSession, Session: 1, Timeout: 10000, Passwd: make([]byte, 16)})
			index := uint64(1)
			create := func(path string) {
				for i := 1; i <= len(path); i++ {
					if i < len(path) && path[i] != '/' {
						continue
					}
					if p := path[:i]; m.Tree().Get(p) == nil {
						index++
						if r := m.ApplyEntry(index, &Entry{Type: EntryTxn, Session: 1, Ops: []Op{{Op: proto.OpCreate, Path: p, ACL: openACL}}}); r.Err != proto.ErrOK {
							b.Fatal(p, r.Err)
						}
					}
				}
			}
			tc.build(create)
			create(tc.path)
			if d := m.Tree().QuotaDepth(tc.path); d != tc.want {
				b.Fatalf("QuotaDepth(%q) = %d, want %d", tc.path, d, tc.want)
			}
			b.ReportAllocs()
			for b.Loop() {
				m.Tree().QuotaDepth(tc.path)
			}
		})
	}
}

// makeQuotas creates n quotas, on /q0 to /q<n-1>, with their stats nodes.
func makeQuotas(create func(string), n int) {
	for i := range n {
		q := "/q" + strconv.Itoa(i)
		create(q)
		create("/zookeeper/quota" + q + "/zookeeper_limits")
		create("/zookeeper/quota" + q + "/zookeeper_stats")
	}
}
