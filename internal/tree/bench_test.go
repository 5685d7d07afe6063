package tree_test

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/paddockhq/paddock/internal/tree"
)

// Shape of the populated tree the benchmarks run on: benchParents parents
// under "/", each with benchPerParent children of benchValue bytes (the
// shape of "paddock bench --workload populate", 100,000 znodes).
const (
	benchParents   = 100
	benchPerParent = 1000
	benchValue     = 100
)

// populated returns a tree of benchParents × benchPerParent znodes and the
// children's paths.
func populated(b *testing.B) (*tree.Tree, []string) {
	b.Helper()
	t := tree.New(tree.Options{ExtendedTypes: true})
	val := make([]byte, benchValue)
	zxid := int64(1)
	paths := make([]string, 0, benchParents*benchPerParent)
	for i := range benchParents {
		parent := "/p-" + strconv.Itoa(i)
		t.Create(parent, nil, tree.OpenACL, 0, zxid, zxid)
		zxid++
		for j := range benchPerParent {
			p := parent + "/n-" + strconv.Itoa(j)
			t.Create(p, val, tree.OpenACL, 0, zxid, zxid)
			zxid++
			paths = append(paths, p)
		}
	}
	return t, paths
}

// BenchmarkCreate adds znodes to a populated tree, spread over its parents,
// as a stream of creates applies them.
func BenchmarkCreate(b *testing.B) {
	t, _ := populated(b)
	val := make([]byte, benchValue)
	names := make([]string, 1<<16)
	for i := range names {
		names[i] = "/p-" + strconv.Itoa(i%benchParents) + "/c-" + strconv.Itoa(i)
	}
	zxid, i := int64(1<<20), 0
	b.ReportAllocs()
	for b.Loop() {
		if i == len(names) { // keep the tree's size bounded: start a new round of names
			b.StopTimer()
			for _, p := range names {
				t.Delete(p, zxid)
			}
			i = 0
			b.StartTimer()
		}
		t.Create(names[i], val, tree.OpenACL, 0, zxid, zxid)
		zxid++
		i++
	}
}

// BenchmarkGet looks up random znodes of a populated tree and reads their
// Stat, as getData does.
func BenchmarkGet(b *testing.B) {
	t, paths := populated(b)
	r := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	for b.Loop() {
		n := t.Get(paths[r.IntN(len(paths))])
		if n == nil {
			b.Fatal("missing znode")
		}
		_ = n.Stat()
	}
}

// BenchmarkSetData looks up a random znode and replaces its data, as the
// apply of a setData does.
func BenchmarkSetData(b *testing.B) {
	t, paths := populated(b)
	r := rand.New(rand.NewPCG(1, 2))
	vals := [2][]byte{make([]byte, benchValue), make([]byte, benchValue)}
	zxid := int64(1 << 20)
	b.ReportAllocs()
	for b.Loop() {
		n := t.Get(paths[r.IntN(len(paths))])
		t.SetData(n, vals[zxid&1], n.Version+1, zxid, zxid)
		zxid++
	}
}

// BenchmarkChildren lists the children of a znode of a populated tree, as
// getChildren does, for a small and a large family.
func BenchmarkChildren(b *testing.B) {
	t, paths := populated(b)
	zxid := int64(1 << 20)
	// Give some leaves 10 children of their own.
	small := make([]string, 0, 100)
	for i := 0; i < len(paths) && len(small) < cap(small); i += len(paths) / cap(small) {
		for j := range 10 {
			t.Create(paths[i]+"/k-"+strconv.Itoa(j), nil, tree.OpenACL, 0, zxid, zxid)
			zxid++
		}
		small = append(small, paths[i])
	}
	large := make([]string, benchParents)
	for i := range large {
		large[i] = "/p-" + strconv.Itoa(i)
	}
	for _, tc := range []struct {
		name   string
		parent []string
		want   int
	}{
		{"children=10", small, 10},
		{"children=1000", large, benchPerParent},
	} {
		b.Run(tc.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			for b.Loop() {
				n := t.Get(tc.parent[r.IntN(len(tc.parent))])
				if got := len(n.Children()); got < tc.want {
					b.Fatalf("%d children, want at least %d", got, tc.want)
				}
			}
		})
	}
}
