package tree

import (
	"strconv"
	"testing"
	"time"

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
		tr := New(Options{ExtendedTypes: true})
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

// BenchmarkStreamFirst streams 100,000 znodes of 100 bytes under one
// parent with no kept order, as a server's first snapshot after a start
// does, in the server's pieces of 2,048 znodes with Prepare between them;
// ns/op is per tree, and max-next-us the longest single Next (the longest
// hold of the server's lock): gathering all the children in one call held
// it for 13-14 ms with 1,000,000 of them.
func BenchmarkStreamFirst(b *testing.B) {
	acl := []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}
	v := make([]byte, 100)
	tr := New(Options{ExtendedTypes: true})
	tr.Create("/m", nil, acl, 0, 1, 1)
	for i := range 100000 {
		tr.Create("/m/n"+strconv.Itoa(i), v, acl, 0, 1, 1)
	}
	parent := tr.Get("/m")
	buf := make([]byte, 0, 1<<20)
	var longest time.Duration
	b.ReportAllocs()
	for b.Loop() {
		delete(tr.order, parent)
		s := tr.BeginStream()
		for done := false; !done; {
			start := time.Now()
			buf, done = s.Next(buf[:0], 2048)
			longest = max(longest, time.Since(start))
			s.Prepare()
		}
		s.End()
	}
	b.ReportMetric(float64(longest.Microseconds()), "max-next-us")
}

// BenchmarkStreamGrowing is BenchmarkStream's flat tree with 5,000 znodes
// (5%) created under the parent and the 5,000 oldest deleted before each
// stream (not timed), as between two snapshots of a server taking creates
// and deletes: the stream cannot use the order of the last one as it was.
// The parent keeps 100,000 children.
func BenchmarkStreamGrowing(b *testing.B) {
	acl := []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}
	v := make([]byte, 100)
	tr := New(Options{ExtendedTypes: true})
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

// BenchmarkCreateKeptOrder creates znodes under 16 parents of 20,000
// children each whose order a snapshot stream has kept (Tree.order), as the
// create workload of paddock bench does between a server's snapshots: each
// create must note the new name for the next stream. Every 96,000 creates
// (about a snapshot's worth at snapCount 100,000) a stream runs, untimed.
// "stream open" creates while a stream is open, as during a snapshot's
// writing, so that each create also saves what the parent held. ns/op is
// per create.
func BenchmarkCreateKeptOrder(b *testing.B) {
	const parents, children, perStream = 16, 20000, 96000
	acl := []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}
	v := make([]byte, 100)
	for _, open := range []bool{false, true} {
		name := "between streams"
		if open {
			name = "stream open"
		}
		b.Run(name, func(b *testing.B) {
			tr := New(Options{ExtendedTypes: true})
			dirs := make([]string, parents)
			next := 0
			for i := range dirs {
				dirs[i] = "/bench-" + strconv.Itoa(i)
				tr.Create(dirs[i], nil, acl, 0, 1, 1)
			}
			zxid := int64(1) // rising, as the state machine's
			for range parents * children {
				zxid++
				tr.Create(dirs[next%parents]+"/n-"+strconv.Itoa(next), v, acl, 0, zxid, 1)
				next++
			}
			buf := make([]byte, 0, 1<<20)
			var s *Stream
			finish := func() {
				if s == nil {
					s = tr.BeginStream()
				}
				for done := false; !done; {
					buf, done = s.Next(buf[:0], 2048)
				}
				s.End()
				s = nil
				if open {
					s = tr.BeginStream()
				}
			}
			finish() // the first stream sorts everything and keeps the orders
			paths := make([]string, perStream)
			fill := func() {
				for i := range paths {
					paths[i] = dirs[next%parents] + "/n-" + strconv.Itoa(next)
					next++
				}
			}
			fill()
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				if i == len(paths) {
					b.StopTimer()
					finish()
					fill()
					i = 0
					b.StartTimer()
				}
				zxid++
				tr.Create(paths[i], v, acl, 0, zxid, 1)
				i++
			}
			b.StopTimer()
			if s != nil {
				s.End()
			}
		})
	}
}
