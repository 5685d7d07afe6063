package tree

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// FuzzStream runs a program of tree changes and snapshot-stream steps read
// from the input, and checks that every stream that completes is byte for
// byte AppendSnapshot at the moment it began. The parents are small enough
// for a program to empty and refill them, and one starts with more than
// sortCacheMin children, so streams keep orders, merge changes into them,
// drop them, gather children a piece at a time (each stream draws its own
// deferMin) and are ended halfway.
func FuzzStream(f *testing.F) {
	f.Add([]byte{0x06, 0x06, 0x00, 0x16, 0x13, 0x07, 0x26, 0x26, 0x26})
	f.Add([]byte("\x0e\x03\x13\x23\x06\x0b\x07\x00\x10\x36\xff\x06\x26\x46\x56\x07"))
	f.Add(bytes.Repeat([]byte{0x03, 0x0e, 0x13, 0x01, 0x46, 0x07, 0x14, 0x25}, 40))
	f.Add(bytes.Repeat([]byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0xff, 0x0d}, 30))
	f.Fuzz(func(t *testing.T, prog []byte) {
		if len(prog) > 4096 {
			prog = prog[:4096]
		}
		acls := [][]proto.ACL{OpenACL, ReadACL}
		parents := []string{"/a", "/b", "/a/c01"}
		tr := New(Options{ExtendedTypes: true})
		zxid := int64(1)
		create := func(path string, czxid int64) {
			zxid++
			tr.Create(path, []byte(fmt.Sprint(zxid)), acls[zxid%2], 0, czxid, zxid)
		}
		for _, p := range parents[:2] {
			create(p, zxid+1)
		}
		for i := range sortCacheMin + 16 {
			create(fmt.Sprintf("/a/c%02x", i), zxid+1)
		}
		create("/a/c01/c00", zxid+1)
		for i := range 5 {
			create(fmt.Sprintf("/b/c%02x", i), zxid+1)
		}

		var (
			s    *Stream
			want []byte
			got  []byte
		)
		begin := func(b byte) {
			want = tr.AppendSnapshot(nil)
			s = tr.BeginStream()
			s.deferMin = 1 + int(b)%(2*sortCacheMin)
			got = nil
		}
		check := func() {
			if !bytes.Equal(got, want) {
				t.Fatalf("stream differs from the state it began with (%d vs %d bytes)", len(got), len(want))
			}
		}
		begin(0)
		// Each step is two bytes: the operation (low nibble) and the
		// parent (high nibble), then the child's name or Next's budget.
		for i := 0; i+1 < len(prog); i += 2 {
			b, arg := prog[i], int(prog[i+1])
			parent := parents[int(b>>4)%len(parents)]
			names := 6 // few, so that a program empties and refills them
			if parent == "/a" {
				names = sortCacheMin + 32
			}
			path := fmt.Sprintf("%s/c%02x", parent, arg%names)
			n, hasParent := tr.Get(path), tr.Get(parent) != nil
			switch op := b & 0x0f; {
			case b == 0xff: // a stream ended halfway (a failed snapshot)
				s.End()
				begin(byte(arg))
			case op <= 1:
				if n == nil && hasParent {
					create(path, zxid+1)
				}
			case op == 2: // an older czxid, which the tree records
				if n == nil && hasParent {
					create(path, 1+int64(arg)%zxid)
				}
			case op == 3 || op == 4:
				if n != nil && n.NumChildren() == 0 {
					acl, at := tr.ACL(n), placeOf(tr, path)
					zxid++
					tr.Delete(path, zxid)
					if op == 4 { // undone, as in a failed multi
						tr.Reinsert(path, n, acl, at)
					}
				}
			case op == 5:
				if n != nil {
					zxid++
					tr.SetData(n, []byte(fmt.Sprint("d", zxid)), n.Version+1, zxid, zxid)
				}
			case op == 6 || op == 13 || op == 14:
				var done bool
				got, done = s.Next(got, 1+arg%16)
				if done {
					s.End()
					check()
					begin(byte(arg))
				}
			case op == 7 || op == 15:
				s.Prepare()
			case op == 8:
				if n != nil {
					tr.SetACL(n, acls[arg%2], n.Aversion+1)
				}
			}
		}
		for done := false; !done; {
			got, done = s.Next(got, 3)
			s.Prepare()
		}
		s.End()
		check()
		if tr.stream != nil {
			t.Fatal("stream still attached after End")
		}
	})
}
