package fsm

import (
	"errors"
	"fmt"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/tree"
)

// SnapshotFormat versions the state machine's snapshot payload.
//
//	1: initial layout: magic, format, applied index, sessions (long id,
//	   int timeout, buffer passwd), tree.
//	2: each session also carries long owner (Session.Owner). Restore reads
//	   both; sessions from format 1 have no owner.
//	3: each session also carries long conn and long seq, its last applied
//	   write's place in its connection's order (Entry.Conn, Entry.Seq).
//	   Sessions from formats 1 and 2 have none: their next write must be
//	   the first of a connection, as every member restoring or replaying
//	   that state agrees (clients reconnect to a restarted member anyway).
const SnapshotFormat = 3

// Older snapshot formats, still read.
const (
	snapshotFormatNoOwner = 1
	snapshotFormatNoConn  = 2
)

const snapshotMagic = 0x5044534d // "PDSM"

// AppendSnapshot appends the state's serialized form to b. The caller must
// hold the lock that excludes Apply.
func (m *Machine) AppendSnapshot(b []byte) []byte {
	return m.tree.AppendSnapshot(m.appendHeader(b))
}

// appendHeader appends what precedes the tree in a snapshot: magic, format,
// applied index and the session table.
func (m *Machine) appendHeader(b []byte) []byte {
	b = proto.AppendInt32(b, snapshotMagic)
	b = proto.AppendInt32(b, SnapshotFormat)
	b = proto.AppendInt64(b, int64(m.applied))
	ss := m.Sessions()
	b = proto.AppendInt32(b, int32(len(ss)))
	for _, s := range ss {
		b = proto.AppendInt64(b, s.ID)
		b = proto.AppendInt32(b, s.Timeout)
		b = proto.AppendBuffer(b, s.Passwd)
		b = proto.AppendInt64(b, int64(s.Owner))
		b = proto.AppendInt64(b, int64(s.conn))
		b = proto.AppendInt64(b, int64(s.seq))
	}
	return b
}

// Restore replaces the state with a snapshot produced by AppendSnapshot.
func (m *Machine) Restore(data []byte) error {
	d := proto.NewDecoder(data)
	if magic := d.Int32(); magic != snapshotMagic {
		return errors.New("fsm snapshot: bad magic")
	}
	format := d.Int32()
	if format < snapshotFormatNoOwner || format > SnapshotFormat {
		return fmt.Errorf("fsm snapshot: format %d, this build reads %d to %d", format, snapshotFormatNoOwner, SnapshotFormat)
	}
	applied := uint64(d.Int64())
	n := d.Int32()
	if n < 0 || int(n) > d.Remaining()/12 {
		return fmt.Errorf("fsm snapshot: bad session count %d", n)
	}
	sessions := make(map[int64]*Session, n)
	for i := int32(0); i < n && d.Err() == nil; i++ {
		s := &Session{ID: d.Int64(), Timeout: d.Int32(), Passwd: d.Buffer()}
		if format >= snapshotFormatNoConn {
			s.Owner = uint64(d.Int64())
		}
		if format >= SnapshotFormat {
			s.conn, s.seq = uint64(d.Int64()), uint64(d.Int64())
		}
		sessions[s.ID] = s
	}
	if err := d.Err(); err != nil {
		return fmt.Errorf("fsm snapshot: %w", err)
	}
	t, err := tree.DecodeSnapshot(d, m.opts.treeOptions())
	if err != nil {
		return fmt.Errorf("fsm snapshot: %w", err)
	}
	m.tree, m.sessions, m.applied, m.lastZxid = t, sessions, applied, int64(applied)
	return nil
}

// SnapshotStream writes the state as of BeginSnapshot in bounded pieces
// while entries go on being applied (see tree.Stream). Its output is the
// bytes AppendSnapshot would have returned at the start.
type SnapshotStream struct {
	header []byte
	tree   *tree.Stream
}

// BeginSnapshot opens a snapshot stream of the current state. The caller
// must hold the lock that excludes Apply, and must call End (under the same
// lock) when done. Only one stream may be open at a time.
func (m *Machine) BeginSnapshot() *SnapshotStream {
	return &SnapshotStream{header: m.appendHeader(nil), tree: m.tree.BeginStream()}
}

// Next appends up to max more znodes (the header first) to b and reports
// whether the stream is complete. The caller must hold at least a read lock
// that excludes Apply.
func (s *SnapshotStream) Next(b []byte, max int) ([]byte, bool) {
	if s.header != nil {
		b = append(b, s.header...)
		s.header = nil
	}
	return s.tree.Next(b, max)
}

// Prepare does the work Next leaves to be done without the lock that
// excludes Apply (tree.Stream.Prepare): the caller calls it between calls
// of Next, without that lock, so that sorting a large parent's children
// does not hold up Apply. Not calling it costs only that.
func (s *SnapshotStream) Prepare() { s.tree.Prepare() }

// End closes the stream. The caller must hold the lock that excludes Apply.
func (s *SnapshotStream) End() { s.tree.End() }
