package tree

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// richTree builds a tree with every kind of node and Stat history.
func richTree() *Tree {
	tr := New(Options{ExtendedTypes: true})
	tr.Create("/a", []byte("alpha"), OpenACL, 0, 2, 100)
	tr.Create("/a/b", nil, digestACL, 0, 3, 101)
	tr.Create("/a/c", []byte{}, mixedACL, 0, 4, 102)
	tr.Create("/a/gone", []byte("x"), OpenACL, 0, 5, 103)
	tr.Delete("/a/gone", 6)
	tr.Create("/a/b/e", []byte{0, 1, 2, 255}, OpenACL, 0x1234, 7, 104)
	tr.Create("/eph2", nil, ReadACL, -0x7000000000000000, 8, 105)
	tr.Create("/cont", []byte("c"), OpenACL, ContainerOwner, 9, 106)
	tr.Create("/cont/x", nil, OpenACL, 0, 10, 107)
	tr.Create("/ttl", nil, OpenACL, TTLOwner(60000), 11, 108)
	tr.Create("/日本", []byte("unicode"), digestACL, 0, 12, 109)
	tr.SetData(mustGetNoT(tr, "/a"), []byte("alpha2"), 1, 13, 110)
	tr.SetACL(mustGetNoT(tr, "/a/c"), ReadACL, 1)
	tr.SetData(mustGetNoT(tr, "/"), []byte("root data"), 1, 14, 111)
	return tr
}

func mustGetNoT(tr *Tree, path string) *Node {
	n := tr.Get(path)
	if n == nil {
		panic("no node " + path)
	}
	return n
}

func decodeAll(b []byte) (*Tree, error) {
	return DecodeSnapshot(proto.NewDecoder(b), Options{ExtendedTypes: true})
}

func TestSnapshotRoundTrip(t *testing.T) {
	for name, tr := range map[string]*Tree{"new": New(Options{ExtendedTypes: true}), "rich": richTree()} {
		t.Run(name, func(t *testing.T) {
			prefix := []byte("prefix")
			b := tr.AppendSnapshot(append([]byte(nil), prefix...))
			if !bytes.HasPrefix(b, prefix) {
				t.Fatal("AppendSnapshot overwrote its argument")
			}
			got, err := decodeAll(b[len(prefix):])
			if err != nil {
				t.Fatalf("DecodeSnapshot: %v", err)
			}
			if d := diffDumps(dumpTree(tr), dumpTree(got)); d != "" {
				t.Fatalf("round trip differs:\n%s", d)
			}
			checkInvariants(t, got)
			// Encoding is deterministic.
			if again := tr.AppendSnapshot(nil); !bytes.Equal(again, b[len(prefix):]) {
				t.Fatal("two snapshots of one tree differ")
			}
			// The decoded tree is a working tree.
			got.Create("/new", nil, digestACL, 0x77, 99, 999)
			got.Create("/new2", nil, mixedACL, 0, 100, 999)
			got.Delete("/new", 101)
			checkInvariants(t, got)
		})
	}
}

func TestDecodeSnapshotTruncated(t *testing.T) {
	b := richTree().AppendSnapshot(nil)
	for i := 0; i < len(b); i++ {
		if _, err := decodeAll(b[:i]); err == nil {
			t.Fatalf("prefix of %d/%d bytes decoded without error", i, len(b))
		}
	}
}

// snapshotBuilder writes hand-made snapshots for the corruption cases.
type snapshotBuilder struct{ b []byte }

func (s *snapshotBuilder) acls(refs ...int32) *snapshotBuilder {
	s.b = proto.AppendInt32(s.b, int32(len(refs)))
	for _, r := range refs {
		s.b = proto.AppendInt32(s.b, r)
		s.b = proto.AppendACLs(s.b, OpenACL)
	}
	return s
}

func (s *snapshotBuilder) count(n int64) *snapshotBuilder {
	s.b = proto.AppendInt64(s.b, n)
	return s
}

func (s *snapshotBuilder) node(path string, ref int32) *snapshotBuilder {
	return s.owned(path, ref, 0)
}

func (s *snapshotBuilder) owned(path string, ref int32, owner int64) *snapshotBuilder {
	s.b = proto.AppendString(s.b, path)
	s.b = proto.AppendBuffer(s.b, nil)
	for range 5 {
		s.b = proto.AppendInt64(s.b, 0)
	}
	s.b = proto.AppendInt64(s.b, owner)
	for range 3 {
		s.b = proto.AppendInt32(s.b, 0)
	}
	s.b = proto.AppendInt32(s.b, ref)
	return s
}

func TestDecodeSnapshotCorrupt(t *testing.T) {
	sb := func() *snapshotBuilder { return &snapshotBuilder{} }
	cases := []struct {
		name string
		b    []byte
		why  string
	}{
		{"empty", nil, "ACL count"},
		{"negative ACL count", proto.AppendInt32(nil, -1), "ACL count"},
		{"huge ACL count", proto.AppendInt32(nil, 1<<30), "ACL count"},
		{"no node count", sb().acls(1).b, "node count"},
		{"zero nodes", sb().acls(1).count(0).b, "node count"},
		{"ephemeral root", sb().acls(1).count(1).owned("/", 1, 5).b, "root has ephemeralOwner"},
		{"child of ephemeral", sb().acls(1).count(3).node("/", 1).owned("/e", 1, 5).node("/e/x", 1).b, "ephemeral parent"},
		{"negative nodes", sb().acls(1).count(-5).b, "node count"},
		{"huge nodes", sb().acls(1).count(1 << 40).b, "node count"},
		{"child before root", sb().acls(1).count(2).node("/a", 1).node("/", 1).b, "before the root"},
		{"grandchild before root", sb().acls(1).count(2).node("/a/b", 1).node("/", 1).b, "before the root"},
		{"root twice", sb().acls(1).count(2).node("/", 1).node("/", 1).b, "root twice"},
		{"missing parent", sb().acls(1).count(2).node("/", 1).node("/a/b", 1).b, "out of order"},
		{"duplicate", sb().acls(1).count(3).node("/", 1).node("/a", 1).node("/a", 1).b, "out of order"},
		{"relative path", sb().acls(1).count(2).node("/", 1).node("a", 1).b, "out of order"},
		{"empty name", sb().acls(1).count(2).node("/", 1).node("/a/", 1).b, "out of order"},
		// Found by FuzzDecodeSnapshot: the root's child "a" under the
		// path "//a" (counted and indexed under the wrong path).
		{"double slash", sb().acls(1).count(2).node("/", 1).node("//a", 1).b, "not canonical"},
		{"unknown ACL", sb().acls(1).count(1).node("/", 7).b, "unknown ACL"},
		{"no root", sb().acls(1).count(1).node("/x", 1).b, "before the root"},
		{"short", sb().acls(1).count(2).node("/", 1).b, "short"},
	}
	for _, tc := range cases {
		_, err := decodeAll(tc.b)
		if err == nil || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.why)
		}
	}
	if _, err := decodeAll(sb().acls(1).count(2).node("/", 1).node("/a", 1).b); err != nil {
		t.Fatalf("minimal hand-made snapshot: %v", err)
	}
}

func TestDecodeSnapshotGarbage(t *testing.T) {
	good := richTree().AppendSnapshot(nil)
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		b := append([]byte(nil), good...)
		for j := 0; j < 1+rng.Intn(4); j++ {
			b[rng.Intn(len(b))] = byte(rng.Intn(256))
		}
		if tr, err := decodeAll(b); err == nil {
			checkInvariants(t, tr)
		}
		junk := make([]byte, rng.Intn(200))
		rng.Read(junk)
		decodeAll(junk) //nolint:errcheck // must only not panic
	}
}

func FuzzDecodeSnapshot(f *testing.F) {
	f.Add(New(Options{ExtendedTypes: true}).AppendSnapshot(nil))
	f.Add(richTree().AppendSnapshot(nil))
	f.Add([]byte{})
	f.Add((&snapshotBuilder{}).acls(1).count(2).node("/", 1).node("/a", 1).b)
	f.Fuzz(func(t *testing.T, b []byte) {
		// Without extended types the same bytes decode to a tree that
		// holds together too, or fail.
		if tr, err := DecodeSnapshot(proto.NewDecoder(b), Options{}); err == nil {
			checkInvariants(t, tr)
		}
		tr, err := decodeAll(b)
		if err != nil {
			return
		}
		checkInvariants(t, tr)
		again, err := decodeAll(tr.AppendSnapshot(nil))
		if err != nil {
			t.Fatalf("re-decoding a decoded tree: %v", err)
		}
		if d := diffDumps(dumpTree(tr), dumpTree(again)); d != "" {
			t.Fatalf("second round trip differs:\n%s", d)
		}
	})
}
