package datatool

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/fsm"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/storage"
	"github.com/paddockhq/paddock/internal/tree"
)

// fixtureMachine applies the fixture's history to a fresh machine.
func fixtureMachine(t testing.TB) *fsm.Machine {
	t.Helper()
	m := fsm.New(fsm.Options{ExtendedTypes: true})
	m.ApplyEmpty(1)
	for i, e := range fixtureEntries(2) {
		index := uint64(i + 2)
		if e.Term != 0 && e.Term != 2 {
			m.ApplyEmpty(index)
			continue
		}
		m.Apply(index, e.Encode(nil))
	}
	return m
}

// scanAll reads every znode of body.
func scanAll(body []byte) (*SnapshotHeader, []Znode, error) {
	sc, err := NewSnapshotScanner(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		return nil, nil, err
	}
	var out []Znode
	for {
		var z Znode
		err := sc.Next(&z)
		if errors.Is(err, io.EOF) {
			return sc.Header(), out, nil
		}
		if err != nil {
			return sc.Header(), out, err
		}
		out = append(out, z)
	}
}

// TestScannerMatchesMachine checks that the streaming scanner reads exactly
// the state fsm.Machine.AppendSnapshot wrote: every znode in Walk order with
// its fields and ACL, every session, the applied index, and the child counts
// the dump derives.
func TestScannerMatchesMachine(t *testing.T) {
	m := fixtureMachine(t)
	body := m.AppendSnapshot(nil)
	h, zs, err := scanAll(body)
	if err != nil {
		t.Fatal(err)
	}
	if h.Applied != m.AppliedIndex() || h.Format != fsm.SnapshotFormat || h.NodeCount != int64(len(zs)) {
		t.Fatalf("header %+v, machine applied %d, %d znodes", h, m.AppliedIndex(), len(zs))
	}
	var ids []int64
	for _, s := range m.Sessions() {
		ids = append(ids, s.ID)
	}
	var got []int64
	for _, s := range h.Sessions {
		got = append(got, s.ID)
	}
	if !slices.Equal(ids, got) {
		t.Fatalf("sessions %v, want %v", got, ids)
	}
	acls := map[int32][]proto.ACL{}
	for _, l := range h.ACLs {
		acls[l.Ref] = l.ACL
	}
	p1, err := countChildren(bytes.NewReader(body), int64(len(body)), true)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	tr := m.Tree()
	tr.Walk(func(path string, n *tree.Node) {
		if i >= len(zs) {
			t.Fatalf("scanner stopped at %d znodes", len(zs))
		}
		z := zs[i]
		if z.Path != path || nodeFields(&z.Node) != nodeFields(n) {
			t.Errorf("znode %d: %s %s, want %s %s", i, z.Path, nodeFields(&z.Node), path, nodeFields(n))
		}
		if !slices.Equal(acls[z.ACLRef], tr.ACL(n)) {
			t.Errorf("%s: ACL %v, want %v", path, acls[z.ACLRef], tr.ACL(n))
		}
		if int(p1.children[i]) != n.NumChildren() {
			t.Errorf("%s: %d children counted, want %d", path, p1.children[i], n.NumChildren())
		}
		if clientStat(&z.Node, p1.children[i], true) != n.Stat() {
			t.Errorf("%s: stat %+v, want %+v", path, clientStat(&z.Node, p1.children[i], true), n.Stat())
		}
		i++
	})
	if i != len(zs) {
		t.Fatalf("scanner read %d znodes, the tree has %d", len(zs), i)
	}
	sum, err := SummarizeBody(bytes.NewReader(body), int64(len(body)), InspectOptions{ExtendedTypes: true})
	if err != nil || sum.Znodes != int64(tr.NodeCount()) || sum.Ephemeral != int64(tr.EphemeralCount()) || sum.ApproxDataSize != tr.DataSize() {
		t.Fatalf("summary %+v (%v); tree has %d znodes, %d ephemeral, data size %d", sum, err, tr.NodeCount(), tr.EphemeralCount(), tr.DataSize())
	}
}

// nodeFields renders a node's stored fields (not its children or ACL
// reference), telling null data from empty.
func nodeFields(n *tree.Node) string {
	return fmt.Sprintf("data=%q null=%v czxid=%d mzxid=%d pzxid=%d ctime=%d mtime=%d owner=%#x version=%d cversion=%d aversion=%d",
		n.Data, n.Data == nil, n.Czxid, n.Mzxid, n.Pzxid, n.Ctime, n.Mtime, n.EphemeralOwner, n.Version, n.Cversion, n.Aversion)
}

// TestScannerTruncated: every proper prefix of a body fails cleanly.
func TestScannerTruncated(t *testing.T) {
	body := fixtureMachine(t).AppendSnapshot(nil)
	for n := range len(body) {
		if _, _, err := scanAll(body[:n]); !errors.Is(err, ErrBadSnapshot) {
			t.Fatalf("prefix of %d/%d bytes: %v", n, len(body), err)
		}
	}
}

func TestScannerErrors(t *testing.T) {
	good := fixtureMachine(t).AppendSnapshot(nil)
	nodeStart := func() int {
		sc, err := NewSnapshotScanner(bytes.NewReader(good), int64(len(good)))
		if err != nil {
			t.Fatal(err)
		}
		return int(sc.Offset())
	}()
	mutate := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	cases := []struct {
		name string
		body []byte
		want string
	}{
		{"bad magic", mutate(func(b []byte) []byte { b[0] = 0; return b }), "bad magic"},
		{"format", mutate(func(b []byte) []byte { b[7] = 9; return b }), "format 9"},
		{"session count", mutate(func(b []byte) []byte { b[16] = 0x7f; return b }), "bad session count"},
		{"znode count", mutate(func(b []byte) []byte {
			copy(b[nodeStart-8:], []byte{0x7f, 0, 0, 0, 0, 0, 0, 0})
			return b
		}), "bad znode count"},
		{"path length", mutate(func(b []byte) []byte {
			copy(b[nodeStart:], []byte{0x7f, 0xff, 0xff, 0xff})
			return b
		}), "length 2147483647 out of range"},
		{"not the root first", mutate(func(b []byte) []byte {
			b[nodeStart+4] = 'x'
			return b
		}), `first znode is "x"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, zs, err := scanAll(c.body)
			if err == nil {
				// Structure errors come from the shape check.
				var sh shape
				for _, z := range zs {
					if _, err = sh.add(z.Path, z.Node.Kind() == tree.Ephemeral); err != nil {
						break
					}
				}
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

func TestShape(t *testing.T) {
	cases := []struct {
		paths []string
		eph   string
		want  []int64 // parents, or nil when the last add fails
	}{
		{[]string{"/", "/a", "/a/b", "/a/b/c", "/a/d", "/e"}, "", []int64{-1, 0, 1, 2, 1, 0}},
		{[]string{"/", "/a", "/b", "/a/x"}, "", nil}, // not depth-first
		{[]string{"/", "/a/b"}, "", nil},             // parent missing
		{[]string{"/a"}, "", nil},                    // no root
		{[]string{"/", "/e", "/e/x"}, "/e", nil},     // ephemeral parent
		{[]string{"/", "/a/"}, "", nil},              // empty name
		{[]string{"/", "//a"}, "", nil},              // not canonical (the server refuses it)
	}
	for _, c := range cases {
		var sh shape
		var got []int64
		var err error
		for _, p := range c.paths {
			var parent int64
			if parent, err = sh.add(p, p == c.eph); err != nil {
				break
			}
			got = append(got, parent)
		}
		if c.want == nil {
			if err == nil {
				t.Errorf("%v: accepted", c.paths)
			}
		} else if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%v: parents %v, %v; want %v", c.paths, got, err, c.want)
		}
	}
}

// FuzzSnapshotScanner: the scanner never panics, and any body that
// fsm.Machine.Restore accepts and that is in depth-first order scans to the
// same number of znodes.
func FuzzSnapshotScanner(f *testing.F) {
	f.Add(fixtureMachine(f).AppendSnapshot(nil))
	f.Add(fsm.New(fsm.Options{}).AppendSnapshot(nil))
	f.Fuzz(func(t *testing.T, body []byte) {
		_, zs, err := scanAll(body)
		var sh shape
		for i := 0; err == nil && i < len(zs); i++ {
			_, err = sh.add(zs[i].Path, zs[i].Node.Kind() == tree.Ephemeral)
		}
		m := fsm.New(fsm.Options{})
		if m.Restore(body) != nil {
			return
		}
		if err != nil {
			if strings.Contains(err.Error(), "depth-first") {
				return // Restore accepts any parents-first order; the format is depth-first
			}
			t.Fatalf("Restore accepts what the scanner refuses: %v", err)
		}
		if len(zs) != m.Tree().NodeCount() {
			t.Fatalf("scanned %d znodes, Restore has %d", len(zs), m.Tree().NodeCount())
		}
	})
}

func TestPlanPurge(t *testing.T) {
	snaps := func(idx ...uint64) []storage.SnapshotInfo {
		var out []storage.SnapshotInfo
		for _, i := range idx {
			out = append(out, storage.SnapshotInfo{Path: fmt.Sprintf("s%d", i), Index: i})
		}
		return out
	}
	segs := func(first ...uint64) []storage.WALSegment {
		var out []storage.WALSegment
		for i, f := range first {
			out = append(out, storage.WALSegment{Path: fmt.Sprintf("w%d", f), Seq: uint64(i), FirstIndex: f})
		}
		return out
	}
	names := func(s []storage.SnapshotInfo, w []storage.WALSegment) string {
		var out []string
		for _, x := range s {
			out = append(out, x.Path)
		}
		for _, x := range w {
			out = append(out, x.Path)
		}
		return strings.Join(out, " ")
	}
	cases := []struct {
		name          string
		snaps         []storage.SnapshotInfo
		segs          []storage.WALSegment
		retain        int
		remove, keep  string
		wantRetainErr bool
	}{
		{"below three", snaps(10), segs(1), 2, "", "", true},
		{"nothing to do", snaps(10, 20, 30), segs(1), 3, "", "s10 s20 s30 w1", false},
		{"no snapshots keeps the WAL", nil, segs(1, 5, 9), 3, "", "w1 w5 w9", false},
		// w25 holds 25..30, all in snapshot 30; w31 holds what follows it.
		{"old snapshots and segments", snaps(10, 20, 30, 40, 50), segs(1, 12, 25, 31, 45), 3, "s10 s20 w1 w12 w25", "s30 s40 s50 w31 w45", false},
		{"segment boundary at the snapshot", snaps(10, 20, 30, 40), segs(1, 21, 31), 3, "s10 w1", "s20 s30 s40 w21 w31", false},
		{"boundary exactly after", snaps(10, 20, 30, 40), segs(1, 20, 21, 31), 3, "s10 w1 w20", "s20 s30 s40 w21 w31", false},
		{"the newest segment stays", snaps(10, 20, 30, 40), segs(1, 5), 3, "s10 w1", "s20 s30 s40 w5", false},
		{"retain more", snaps(10, 20, 30, 40, 50), segs(1, 12, 25), 4, "s10 w1", "s20 s30 s40 s50 w12 w25", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := PlanPurge(c.snaps, c.segs, c.retain)
			if c.wantRetainErr {
				if !errors.Is(err, ErrRetainCount) {
					t.Fatalf("err %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := names(p.RemoveSnapshots, p.RemoveSegments); got != c.remove {
				t.Errorf("remove %q, want %q", got, c.remove)
			}
			if got := names(p.KeepSnapshots, p.KeepSegments); got != c.keep {
				t.Errorf("keep %q, want %q", got, c.keep)
			}
		})
	}
}
