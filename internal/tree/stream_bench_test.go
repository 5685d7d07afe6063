package tree

import (
	"strconv"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// BenchmarkStream serialises a tree of 1,000 parents with 100 children of
// 100 bytes each (100,000 znodes) through a snapshot stream, in the
// server's pieces of 2,048 znodes; ns/op is per tree.
func BenchmarkStream(b *testing.B) {
	tr := New()
	acl := []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}
	v := make([]byte, 100)
	for i := range 1000 {
		p := "/m" + strconv.Itoa(i)
		tr.Create(p, nil, acl, 0, 1, 1)
		for j := range 100 {
			tr.Create(p+"/n"+strconv.Itoa(i*100+j), v, acl, 0, 1, 1)
		}
	}
	buf := make([]byte, 0, 1<<20)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s := tr.BeginStream()
		for done := false; !done; {
			buf, done = s.Next(buf[:0], 2048)
		}
		s.End()
	}
}
