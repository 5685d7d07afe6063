package tree_test

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/paddockhq/paddock/internal/tree"
)

// BenchmarkTreeMemory builds trees of 100,000 znodes of 100 bytes in three
// shapes and reports the heap they take per znode (B/znode): a few large
// parents (paddock bench's populate shape), many parents of 10, and one
// parent of them all. ns/op is the time to build one tree.
func BenchmarkTreeMemory(b *testing.B) {
	const total = 100_000
	for _, perParent := range []int{10, 1000, total} {
		b.Run("children="+strconv.Itoa(perParent), func(b *testing.B) {
			val := make([]byte, benchValue)
			var perZnode float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				t := tree.New(tree.Options{ExtendedTypes: true})
				zxid := int64(1)
				for i := range total / perParent {
					parent := "/p-" + strconv.Itoa(i)
					t.Create(parent, nil, tree.OpenACL, 0, zxid, zxid)
					zxid++
					for j := range perParent {
						t.Create(parent+"/n-"+strconv.Itoa(j), val, tree.OpenACL, 0, zxid, zxid)
						zxid++
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				perZnode = float64(after.HeapAlloc-before.HeapAlloc) / float64(t.NodeCount())
				runtime.KeepAlive(t)
			}
			b.ReportMetric(perZnode, "B/znode")
		})
	}
}
