package tree

import (
	"strconv"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// BenchmarkStream serialises a tree of 100,000 znodes of 100 bytes through a
// snapshot stream, in the server's pieces of 2,048 znodes; ns/op is per
// tree. "1000x100" has 1,000 parents with 100 children each; "flat" has
// the 100,000 under one parent, as paddock bench's keys are.
func BenchmarkStream(b *testing.B) {
	acl := []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}
	v := make([]byte, 100)
	for _, shape := range []struct {
		name              string
		parents, children int
	}{{"1000x100", 1000, 100}, {"flat", 1, 100000}} {
		tr := New()
		for i := range shape.parents {
			p := "/m" + strconv.Itoa(i)
			tr.Create(p, nil, acl, 0, 1, 1)
			for j := range shape.children {
				tr.Create(p+"/n"+strconv.Itoa(i*shape.children+j), v, acl, 0, 1, 1)
			}
		}
		b.Run(shape.name, func(b *testing.B) {
			buf := make([]byte, 0, 1<<20)
			b.ReportAllocs()
			for b.Loop() {
				s := tr.BeginStream()
				for done := false; !done; {
					buf, done = s.Next(buf[:0], 2048)
				}
				s.End()
			}
		})
	}
}

// BenchmarkStreamGrowing is BenchmarkStream's flat tree with 5,000 znodes
// (5%) created under the parent and the 5,000 oldest deleted before each
// stream (not timed), as between two snapshots of a server taking creates
// and deletes: the stream cannot use the order of the last one as it was.
// The parent keeps 100,000 children.
func BenchmarkStreamGrowing(b *testing.B) {
	acl := []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}
	v := make([]byte, 100)
	tr := New()
	tr.Create("/m", nil, acl, 0, 1, 1)
	next, oldest := 0, 0
	grow := func(n int) {
		for range n {
			tr.Create("/m/n"+strconv.Itoa(next), v, acl, 0, 1, 1)
			next++
		}
	}
	shrink := func(n int) {
		for range n {
			tr.Delete("/m/n"+strconv.Itoa(oldest), 1)
			oldest++
		}
	}
	grow(100000)
	buf := make([]byte, 0, 1<<20)
	stream := func() {
		s := tr.BeginStream()
		for done := false; !done; {
			buf, done = s.Next(buf[:0], 2048)
		}
		s.End()
	}
	stream() // the first stream sorts everything
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		grow(5000)
		shrink(5000)
		b.StartTimer()
		stream()
	}
}
