package datatool

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/paddockhq/paddock/internal/fsm"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/tree"
	"github.com/paddockhq/paddock/internal/zpath"
)

// ErrBadSnapshot is matched by every error SnapshotScanner returns for a
// body that does not decode.
var ErrBadSnapshot = errors.New("datatool: malformed snapshot body")

// Smallest encodings, used to bound counts by the bytes left.
const (
	minSessionBytes = 8 + 4 + 4         // id, timeout, passwd length
	minACLBytes     = 4 + 4 + 4         // perms, scheme length, id length
	minZnodeBytes   = 4 + 4 + 6*8 + 4*4 // path length, data length, 6 longs, 4 ints
	scanBufferBytes = 256 << 10         // read buffer of a scanner
)

// SessionRecord is a session as a snapshot stores it. The password is
// read and dropped: tools never print it.
type SessionRecord struct {
	ID      int64
	Timeout int32
	Owner   uint64 // the member the client talks to; 0 unknown (standalone, format 1)
}

// ACLList is one entry of a snapshot's table of interned ACL lists.
type ACLList struct {
	Ref int32
	ACL []proto.ACL
}

// SnapshotHeader is what an fsm snapshot body holds before its znodes.
type SnapshotHeader struct {
	Format    int32  // fsm.SnapshotFormat the body was written with
	Applied   uint64 // index of the last entry applied: the last zxid
	Sessions  []SessionRecord
	ACLs      []ACLList
	NodeCount int64 // znodes that follow
}

// Znode is one znode record of a snapshot, as stored (tree.Node's fields:
// Cversion counts child creations, ephemeralOwner encodes container and
// TTL nodes).
type Znode struct {
	Path string
	Node tree.Node // Data nil means null data; children are never set
	// ACLRef names the node's list in SnapshotHeader.ACLs.
	ACLRef int32
}

// SnapshotScanner reads an fsm snapshot body (fsm.Machine.AppendSnapshot's
// format) one znode at a time. It never allocates from a length or count
// that the bytes left in the body cannot hold, and never panics on bad input.
type SnapshotScanner struct {
	j      jreader
	hdr    SnapshotHeader
	acls   map[int32]bool
	read   int64 // znodes returned so far
	failed error
}

// NewSnapshotScanner reads the header of the body r of size bytes.
func NewSnapshotScanner(r io.Reader, size int64) (*SnapshotScanner, error) {
	s := &SnapshotScanner{j: jreader{r: bufio.NewReaderSize(r, scanBufferBytes), left: size}}
	j := &s.j
	if magic := j.int32(); j.err == nil && magic != fsm.SnapshotMagic {
		return nil, fmt.Errorf("%w: bad magic %#x", ErrBadSnapshot, uint32(magic))
	}
	s.hdr.Format = j.int32()
	if j.err == nil && (s.hdr.Format < 1 || s.hdr.Format > fsm.SnapshotFormat) {
		return nil, fmt.Errorf("%w: fsm snapshot format %d, this build reads 1 to %d", ErrBadSnapshot, s.hdr.Format, fsm.SnapshotFormat)
	}
	s.hdr.Applied = uint64(j.int64())
	n := j.count("session", minSessionBytes)
	for i := 0; i < n && j.err == nil; i++ {
		ss := SessionRecord{ID: j.int64(), Timeout: j.int32()}
		j.skipBuffer() // the password
		if s.hdr.Format >= 2 {
			ss.Owner = uint64(j.int64())
		}
		if s.hdr.Format >= 3 {
			j.int64() // the last write's connection and number (fsm.Session)
			j.int64()
		}
		s.hdr.Sessions = append(s.hdr.Sessions, ss)
	}
	n = j.count("ACL list", 4+4)
	s.acls = make(map[int32]bool)
	for i := 0; i < n && j.err == nil; i++ {
		l := ACLList{Ref: j.int32(), ACL: j.acls()}
		s.acls[l.Ref] = true // listed twice, the later list wins, as in tree.DecodeSnapshot
		s.hdr.ACLs = append(s.hdr.ACLs, l)
	}
	s.hdr.NodeCount = j.int64()
	if j.err == nil && (s.hdr.NodeCount < 1 || s.hdr.NodeCount > j.left/minZnodeBytes) {
		j.fail(fmt.Errorf("bad znode count %d", s.hdr.NodeCount))
	}
	if j.err != nil {
		return nil, s.wrap(j.err)
	}
	return s, nil
}

// Header returns the header read by NewSnapshotScanner.
func (s *SnapshotScanner) Header() *SnapshotHeader { return &s.hdr }

// Next reads the next znode into z. It returns io.EOF after the last one,
// and an error matching ErrBadSnapshot for damage; errors are sticky.
func (s *SnapshotScanner) Next(z *Znode) error {
	if s.failed != nil {
		return s.failed
	}
	if s.read == s.hdr.NodeCount {
		return io.EOF
	}
	j := &s.j
	z.Path = j.string()
	z.Node = tree.Node{Data: j.buffer()}
	n := &z.Node
	n.Czxid, n.Mzxid, n.Pzxid = j.int64(), j.int64(), j.int64()
	n.Ctime, n.Mtime, n.EphemeralOwner = j.int64(), j.int64(), j.int64()
	n.Version, n.Cversion, n.Aversion = j.int32(), j.int32(), j.int32()
	z.ACLRef = j.int32()
	if j.err == nil && !s.acls[z.ACLRef] {
		j.fail(fmt.Errorf("znode %q names unknown ACL %d", z.Path, z.ACLRef))
	}
	if j.err != nil {
		s.failed = s.wrap(fmt.Errorf("znode %d of %d: %w", s.read+1, s.hdr.NodeCount, j.err))
		return s.failed
	}
	s.read++
	return nil
}

// Offset returns the bytes of the body consumed so far.
func (s *SnapshotScanner) Offset() int64 { return s.j.off }

func (s *SnapshotScanner) wrap(err error) error {
	return fmt.Errorf("%w at body offset %d: %w", ErrBadSnapshot, s.j.off, err)
}

// shape checks that znodes come depth-first with parents first, as
// tree.Tree.AppendSnapshot writes them, and finds each one's parent. It
// holds only the chain of ancestors of the current znode.
type shape struct {
	stack []shapeFrame
	n     int64
}

type shapeFrame struct {
	path      string
	ord       int64
	ephemeral bool
	// ttlOwner: an ephemeral whose owner marks a TTL node with extended
	// types on (kindOf), to say so when it has children.
	ttlOwner bool
}

// add records the next znode and returns the ordinal (0 for the first) of
// its parent, or -1 for the root.
func (s *shape) add(path string, ephemeral bool) (parent int64, err error) {
	ord := s.n
	s.n++
	if ord == 0 {
		if path != "/" {
			return 0, fmt.Errorf("first znode is %q, not the root", path)
		}
		if ephemeral {
			return 0, errors.New("the root is ephemeral")
		}
		s.stack = append(s.stack, shapeFrame{path: "/", ord: 0})
		return -1, nil
	}
	p, name := zpath.Parent(path)
	if name == "" || path == "/" || zpath.Join(p, name) != path {
		return 0, fmt.Errorf("znode %q has a bad path", path)
	}
	for len(s.stack) > 0 && s.stack[len(s.stack)-1].path != p {
		s.stack = s.stack[:len(s.stack)-1]
	}
	if len(s.stack) == 0 {
		return 0, fmt.Errorf("znode %q is out of depth-first order or its parent %q is missing", path, p)
	}
	top := s.stack[len(s.stack)-1]
	if top.ephemeral && top.ttlOwner {
		return 0, fmt.Errorf("znode %q is under %q, a TTL node with extended types on, ephemeral with them off", path, top.path)
	}
	if top.ephemeral {
		return 0, fmt.Errorf("znode %q has an ephemeral parent", path)
	}
	s.stack = append(s.stack, shapeFrame{path: path, ord: ord, ephemeral: ephemeral})
	return top.ord, nil
}

// addZnode is add for the znode z classified by kindOf under extended.
func (s *shape) addZnode(z *Znode, extended bool) (parent int64, err error) {
	kind := kindOf(&z.Node, extended)
	parent, err = s.add(z.Path, kind == tree.Ephemeral)
	if err == nil && kind == tree.Ephemeral && z.Node.Kind() == tree.TTL {
		s.stack[len(s.stack)-1].ttlOwner = true
	}
	return parent, err
}

// jreader reads jute primitives from a stream of known length. The first
// failure is kept; later reads return zero values.
type jreader struct {
	r    *bufio.Reader
	left int64 // bytes of the body not yet read
	off  int64
	err  error
}

func (j *jreader) fail(err error) {
	if j.err == nil {
		j.err = err
	}
}

// full fills b, failing if the body ends first.
func (j *jreader) full(b []byte) bool {
	if j.err != nil {
		return false
	}
	if int64(len(b)) > j.left {
		j.fail(fmt.Errorf("%w: body ends after %d more bytes, %d needed", io.ErrUnexpectedEOF, j.left, len(b)))
		return false
	}
	n, err := io.ReadFull(j.r, b)
	j.off += int64(n)
	j.left -= int64(n)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		j.fail(err)
		return false
	}
	return true
}

func (j *jreader) int32() int32 {
	var b [4]byte
	if !j.full(b[:]) {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b[:]))
}

func (j *jreader) int64() int64 {
	var b [8]byte
	if !j.full(b[:]) {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b[:]))
}

// length reads a length prefix: -1 (null) or 0..left.
func (j *jreader) length(what string) (n int64, null bool) {
	l := j.int32()
	switch {
	case j.err != nil:
		return 0, false
	case l == -1:
		return 0, true
	case l < 0 || int64(l) > j.left:
		j.fail(fmt.Errorf("%s length %d out of range (%d bytes left)", what, l, j.left))
		return 0, false
	}
	return int64(l), false
}

// buffer reads a jute buffer; null gives nil.
func (j *jreader) buffer() []byte {
	n, null := j.length("buffer")
	if null || j.err != nil {
		return nil
	}
	b := make([]byte, n)
	if !j.full(b) {
		return nil
	}
	return b
}

// skipBuffer reads a jute buffer and drops it.
func (j *jreader) skipBuffer() {
	n, _ := j.length("buffer")
	if j.err != nil || n == 0 {
		return
	}
	d, err := j.r.Discard(int(n))
	j.off += int64(d)
	j.left -= int64(d)
	if err != nil {
		j.fail(io.ErrUnexpectedEOF)
	}
}

// string reads a jute ustring; null gives "".
func (j *jreader) string() string { return string(j.buffer()) }

// count reads a vector length that must fit in the bytes left.
func (j *jreader) count(what string, minBytes int64) int {
	n := j.int32()
	if j.err == nil && (n < 0 || int64(n) > j.left/minBytes) {
		j.fail(fmt.Errorf("bad %s count %d", what, n))
	}
	if j.err != nil {
		return 0
	}
	return int(n)
}

// acls reads a vector<ACL>; -1 gives nil.
func (j *jreader) acls() []proto.ACL {
	n := j.int32()
	if j.err != nil || n == -1 {
		return nil
	}
	if n < 0 || int64(n) > j.left/minACLBytes {
		j.fail(fmt.Errorf("bad ACL count %d", n))
		return nil
	}
	out := make([]proto.ACL, 0, n)
	for i := int32(0); i < n && j.err == nil; i++ {
		a := proto.ACL{Perms: j.int32()}
		a.ID.Scheme = j.string()
		a.ID.ID = j.string()
		out = append(out, a)
	}
	return out
}
