package tree

import (
	"bytes"
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/zpath"
)

// TestStreamIsTheStartState interleaves random changes with a snapshot
// stream and checks that the stream's bytes are exactly AppendSnapshot at
// the moment the stream began, and that the tree afterwards is unaffected.
func TestStreamIsTheStartState(t *testing.T) {
	acls := [][]proto.ACL{
		OpenACL,
		ReadACL,
		{{Perms: proto.PermAll, ID: proto.ID{Scheme: "digest", ID: "u:h"}}},
		{{Perms: proto.PermRead, ID: proto.ID{Scheme: "ip", ID: "10.0.0.0/8"}}},
	}
	for seed := int64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			tr := New()
			var paths []string
			zxid := int64(1)
			mutate := func() {
				zxid++
				switch op := r.Intn(6); {
				case op <= 1 || len(paths) == 0: // create under root or a random node
					parent := "/"
					if len(paths) > 0 && r.Intn(3) > 0 {
						parent = paths[r.Intn(len(paths))]
					}
					p := zpath.Join(parent, fmt.Sprintf("n%d", r.Intn(1000)))
					if tr.Get(p) == nil && tr.Get(parent) != nil && tr.Get(parent).Kind() != Ephemeral {
						tr.Create(p, []byte(fmt.Sprint(zxid)), acls[r.Intn(len(acls))], 0, zxid, zxid)
						paths = append(paths, p)
					}
				case op == 2: // delete a leaf, sometimes put it back
					i := r.Intn(len(paths))
					p := paths[i]
					n := tr.Get(p)
					if n != nil && n.NumChildren() == 0 {
						acl := tr.ACL(n)
						tr.Delete(p, zxid)
						if r.Intn(4) == 0 {
							tr.Reinsert(p, n, acl)
						} else {
							paths = append(paths[:i], paths[i+1:]...)
						}
					}
				case op == 3:
					if n := tr.Get(paths[r.Intn(len(paths))]); n != nil {
						tr.SetData(n, []byte(fmt.Sprint("d", zxid)), n.Version+1, zxid, zxid)
					}
				default:
					if n := tr.Get(paths[r.Intn(len(paths))]); n != nil {
						tr.SetACL(n, acls[r.Intn(len(acls))], n.Aversion+1)
					}
				}
			}
			for i := 0; i < 300; i++ {
				mutate()
			}
			want := tr.AppendSnapshot(nil)
			s := tr.BeginStream()
			var got []byte
			for done := false; !done; {
				got, done = s.Next(got, 1+r.Intn(7))
				for j := r.Intn(20); j > 0; j-- {
					mutate()
				}
			}
			s.End()
			if !bytes.Equal(got, want) {
				t.Fatalf("stream differs from the state it began with (%d vs %d bytes)", len(got), len(want))
			}
			// The stream decodes, and the live tree is the one the changes
			// made: compare it with a fresh copy through the snapshot format.
			if _, err := DecodeSnapshot(proto.NewDecoder(got)); err != nil {
				t.Fatal(err)
			}
			after := tr.AppendSnapshot(nil)
			back, err := DecodeSnapshot(proto.NewDecoder(after))
			if err != nil {
				t.Fatal(err)
			}
			if !equalTrees(tr, back) {
				t.Fatal("tree changed by the stream")
			}
			if tr.stream != nil {
				t.Fatal("stream still attached after End")
			}
		})
	}
}

// equalTrees compares paths, data and Stat of two trees.
func equalTrees(a, b *Tree) bool {
	dump := func(t *Tree) []string {
		var out []string
		t.Walk(func(p string, n *Node) {
			out = append(out, fmt.Sprintf("%s %q %+v %v", p, n.Data, n.Stat(), t.ACL(n)))
		})
		sort.Strings(out)
		return out
	}
	da, db := dump(a), dump(b)
	if len(da) != len(db) {
		return false
	}
	for i := range da {
		if da[i] != db[i] {
			return false
		}
	}
	return true
}
