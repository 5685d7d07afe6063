package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.etcd.io/raft/v3/raftpb"
)

// This file holds read-only helpers for offline tools (internal/datatool):
// they read WAL segments and snapshots without taking the WAL's lock and
// without repairing anything, so they may run on the directories of a
// running server. LockWALDir and LockSnapshotDir are the exceptions, for
// tools that delete files.

// ErrLocked is matched (with errors.Is) by the error OpenWAL, LockWALDir
// and LockSnapshotDir return when another process (or, in this one, an
// unclosed WAL or an unreleased lock) holds a WAL or snapshot directory's
// lock.
var ErrLocked = errors.New("storage: directory is locked")

// lockedError reports a held lock file.
type lockedError struct {
	path string
	kind string // what the directory holds: "WAL" or "snapshot"
}

func (e *lockedError) Error() string {
	return fmt.Sprintf("storage: %s is locked: another process (or one still open in this process) uses this %s directory",
		e.path, e.kind)
}

// Is reports whether target is ErrLocked.
func (e *lockedError) Is(target error) bool { return target == ErrLocked }

// LockWALDir takes the lock an open WAL holds on dir (flock(2) on
// dir/wal.lock), without opening the WAL, so that a tool may delete files
// while no server uses the directory. It fails with an error matching
// ErrLocked when a server holds it. Call release when done.
func LockWALDir(dir string) (release func() error, err error) {
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("storage: WAL directory: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("storage: WAL directory %s is not a directory", dir)
	}
	f, err := lockFile(filepath.Join(dir, lockName), "WAL")
	if err != nil {
		return nil, err
	}
	return f.Close, nil
}

// LockSnapshotDir takes an exclusive lock on the snapshot directory dir
// (flock(2) on dir/snap.lock), which a raft node holds while it runs, so
// that two servers never write and purge snapshots in one directory, and a
// tool may delete snapshots while no server uses it. It fails with an error
// matching ErrLocked when the lock is held. The lock file differs from the
// WAL's, so a process may hold both when the WAL and the snapshots share a
// directory. Call release when done.
func LockSnapshotDir(dir string) (release func() error, err error) {
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("storage: snapshot directory: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("storage: snapshot directory %s is not a directory", dir)
	}
	f, err := lockFile(filepath.Join(dir, snapLockName), "snapshot")
	if err != nil {
		return nil, err
	}
	return f.Close, nil
}

// Format versions of the files this build reads and writes (see doc.go).
const (
	WALFormatVersion      = walVersion
	SnapshotFormatVersion = snapVersion
)

// SyncDir fsyncs a directory so that file removals in it are durable.
func SyncDir(dir string) error { return syncDir(dir) }

// SnapshotInfoFromPath describes the snapshot file at path from its name
// ("<index>-<term>.snap", 16 hex digits each). It does not read the file.
func SnapshotInfoFromPath(path string) (SnapshotInfo, error) {
	index, term, ok := parseHexPair(filepath.Base(path), snapSuffix)
	if !ok {
		return SnapshotInfo{}, fmt.Errorf("storage: %s is not named like a snapshot file (<16 hex index>-<16 hex term>.snap)", path)
	}
	return SnapshotInfo{Path: path, Index: index, Term: term}, nil
}

// Body returns a new reader of the snapshot's body (the state machine's
// bytes) from its start. Readers are independent of each other and of
// Read, so the body can be read more than once; they work until Close.
func (s *SnapshotReader) Body() *io.SectionReader {
	r, off, n := s.body.Outer()
	return io.NewSectionReader(r, off, n)
}

// WALSegment describes one WAL segment file.
type WALSegment struct {
	Path       string
	Seq        uint64 // position in the log, from 0 without gaps
	FirstIndex uint64 // raft index the segment's first entry was expected to have
	Size       int64  // bytes, when listed
}

// ListWALSegments returns the segments of the WAL in dir, oldest first,
// without reading them. It fails (matching ErrCorrupt) when a segment is
// missing in the middle. Half-created segments (".wal.tmp") are ignored,
// except a spare segment that a roll was appending to when the server
// stopped, before its rename reached the disk: it is the last segment
// (OpenWAL renames it into place), listed under its spare name.
func ListWALSegments(dir string) ([]WALSegment, error) {
	segs, _, err := walSegments(dir)
	if err != nil {
		return nil, err
	}
	out := make([]WALSegment, 0, len(segs))
	for _, s := range segs {
		ws := WALSegment{Path: s.path, Seq: s.seq, FirstIndex: s.first}
		if fi, err := os.Stat(s.path); err == nil {
			ws.Size = fi.Size()
		}
		out = append(out, ws)
	}
	return out, nil
}

// walSegments returns the segments of the WAL in dir, oldest first, with a
// live spare (see liveSpare) as the last one; spare reports whether there
// is one.
func walSegments(dir string) (segs []segment, spare bool, err error) {
	segs, err = listSegments(dir)
	if err != nil {
		return nil, false, err
	}
	s, ok, err := liveSpare(dir, segs)
	if err != nil {
		return nil, false, err
	}
	if ok {
		segs = append(segs, s)
	}
	return segs, ok, nil
}

// RecordKind is the type of a WAL record.
type RecordKind byte

// Record kinds; the values are the on-disk type bytes (see doc.go).
const (
	RecordEntry          = RecordKind(recordEntry)
	RecordHardState      = RecordKind(recordHardState)
	RecordSnapshotMarker = RecordKind(recordSnapshot)
)

// String names the kind.
func (k RecordKind) String() string {
	switch k {
	case RecordEntry:
		return "entry"
	case RecordHardState:
		return "hardstate"
	case RecordSnapshotMarker:
		return "snapshot"
	}
	return fmt.Sprintf("kind(%d)", byte(k))
}

// WALRecord is one decoded WAL record; the field that Kind names is set.
// Its types are this package's, so that tools need not import raft.
type WALRecord struct {
	Segment   WALSegment // the segment file holding it
	Offset    int64      // byte offset of the record in it
	Size      int64      // bytes the record takes, header included
	Kind      RecordKind
	Entry     WALEntry
	HardState HardState
	Marker    SnapshotMarker
}

// EntryType is the type of a raft entry.
type EntryType uint8

// Entry types (raftpb.EntryType's values).
const (
	EntryNormal       = EntryType(raftpb.EntryNormal)
	EntryConfChange   = EntryType(raftpb.EntryConfChange)
	EntryConfChangeV2 = EntryType(raftpb.EntryConfChangeV2)
)

// String names the type.
func (t EntryType) String() string {
	switch t {
	case EntryNormal:
		return "normal"
	case EntryConfChange:
		return "confChange"
	case EntryConfChangeV2:
		return "confChangeV2"
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// WALEntry is a raft entry read from the WAL.
type WALEntry struct {
	Index, Term uint64
	Type        EntryType
	Data        []byte // the state machine's entry (normal), or the encoded membership change
}

// Membership decodes the membership change a conf-change entry carries:
// each change as "<type>:<node id>" (for example "ConfChangeAddNode:2"),
// and for a v2 change its transition.
func (e *WALEntry) Membership() (changes []string, transition string, err error) {
	switch e.Type {
	case EntryConfChange:
		var cc raftpb.ConfChange
		if err := cc.Unmarshal(e.Data); err != nil {
			return nil, "", fmt.Errorf("storage: decoding membership change %d: %w", e.Index, err)
		}
		return []string{fmt.Sprintf("%s:%d", cc.Type, cc.NodeID)}, "", nil
	case EntryConfChangeV2:
		var cc raftpb.ConfChangeV2
		if err := cc.Unmarshal(e.Data); err != nil {
			return nil, "", fmt.Errorf("storage: decoding membership change %d: %w", e.Index, err)
		}
		changes = []string{}
		for _, c := range cc.Changes {
			changes = append(changes, fmt.Sprintf("%s:%d", c.Type, c.NodeID))
		}
		return changes, cc.Transition.String(), nil
	}
	return nil, "", fmt.Errorf("storage: entry %d is not a membership change", e.Index)
}

// HardState is raft's durable vote and commit state.
type HardState struct {
	Term, Vote, Commit uint64
}

// TornTail is a last segment that ends in a record that does not decode
// and that OpenWAL's rules call torn (no valid record after it, or a
// sector of it that reads as zeros): a write cut short, by a crash or
// because the segment is being appended to right now. OpenWAL cuts it off.
type TornTail struct {
	Path   string
	Offset int64 // where the partial record starts
	Bytes  int64 // bytes from there to the end of the file
	Reason error // why the record does not decode
}

// ScanWAL reads every segment of the WAL in dir, oldest first, checking the
// headers and each record's checksum, and calls visit for each record in
// order. The segments are those ListWALSegments lists: a live spare is the
// last (read under its final name if a running server renamed it in the
// meantime). It neither takes the WAL's lock nor changes anything, so it
// may run while a server appends to the WAL: what was written after a
// segment was read is not seen, and a record being written shows as a torn
// tail.
//
// Damage follows OpenWAL's rules (the same function decides): a torn bad
// record in the last segment is returned as torn (and the scan succeeds);
// any other damage fails with a *CorruptError naming the file and offset. An
// error from visit stops the scan and is returned as is.
func ScanWAL(dir string, visit func(*WALRecord) error) (segs []WALSegment, torn *TornTail, err error) {
	ss, spare, err := walSegments(dir)
	if err != nil {
		return nil, nil, err
	}
	for i, s := range ss {
		data, err := os.ReadFile(s.path)
		if spare && i == len(ss)-1 && errors.Is(err, os.ErrNotExist) {
			// A running server renamed the spare into place since.
			s.path = filepath.Join(dir, segmentName(s.seq, s.first))
			data, err = os.ReadFile(s.path)
		}
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return segs, nil, fmt.Errorf("storage: WAL segment %s disappeared while being read (a running server released it; run again): %w", s.path, err)
			}
			return segs, nil, fmt.Errorf("storage: reading WAL segment: %w", err)
		}
		seg := WALSegment{Path: s.path, Seq: s.seq, FirstIndex: s.first, Size: int64(len(data))}
		segs = append(segs, seg)
		if err := checkSegmentHeader(s, data); err != nil {
			return segs, nil, err
		}
		var rec WALRecord
		_, bad, err := walkSegment(s, data, func(off int, r *record) error {
			rec = WALRecord{Segment: seg, Offset: int64(off), Kind: RecordKind(r.typ)}
			rec.Size = recordHeaderLen + int64(binary.BigEndian.Uint32(data[off:]))
			switch r.typ {
			case recordEntry:
				e := &r.entry
				rec.Entry = WALEntry{Index: e.Index, Term: e.Term, Type: EntryType(e.Type), Data: e.Data}
			case recordHardState:
				rec.HardState = HardState{Term: r.hs.Term, Vote: r.hs.Vote, Commit: r.hs.Commit}
			case recordSnapshot:
				rec.Marker = r.marker
			}
			return visit(&rec)
		})
		if err != nil {
			return segs, nil, err
		}
		if bad == nil {
			continue
		}
		if i < len(ss)-1 {
			return segs, nil, &CorruptError{Path: s.path, Offset: int64(bad.offset), Err: bad.err}
		}
		if err := tailDamage(s.path, data, bad); err != nil {
			return segs, nil, err
		}
		torn = &TornTail{Path: s.path, Offset: int64(bad.offset), Bytes: int64(len(data) - bad.offset), Reason: bad.err}
	}
	return segs, torn, nil
}
