package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"

	"go.etcd.io/raft/v3/raftpb"
)

// Record types; the values are part of the on-disk format (see doc.go).
const (
	recordEntry     byte = 1
	recordHardState byte = 2
	recordSnapshot  byte = 3
)

const (
	// recordHeaderLen is length (4) + CRC (4) + type (1).
	recordHeaderLen = 9
	// maxRecordPayload bounds a record's payload; a length field above it is
	// damage, and Save refuses entries that would need a bigger record.
	maxRecordPayload = 256 << 20
	// markerLen is the payload length of a snapshot marker record.
	markerLen = 16
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt is matched (with errors.Is) by every error reporting damaged
// WAL or snapshot data.
var ErrCorrupt = errors.New("storage: corrupt data")

// Reasons a record fails to decode.
var (
	errTruncated = errors.New("record truncated")
	errLength    = errors.New("record length out of range")
	errType      = errors.New("unknown record type")
	errChecksum  = errors.New("record checksum mismatch")
)

// CorruptError reports damaged data at a byte offset of a file.
type CorruptError struct {
	Path   string // the damaged file
	Offset int64  // byte offset of the damaged record or header
	Err    error  // what is wrong
}

// Error implements error.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("storage: corrupt file %s at byte offset %d: %v", e.Path, e.Offset, e.Err)
}

// Unwrap returns the reason.
func (e *CorruptError) Unwrap() error { return e.Err }

// Is reports whether target is ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// SnapshotMarker is the WAL's record that a snapshot with this index and term
// is durable.
type SnapshotMarker struct {
	Index uint64
	Term  uint64
}

// marshaler is what the gogo-generated raftpb types provide.
type marshaler interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

// appendMessageRecord appends m as a record of type typ.
func appendMessageRecord(b []byte, typ byte, m marshaler) ([]byte, error) {
	n := m.Size()
	if n > maxRecordPayload {
		return b, fmt.Errorf("storage: record of %d bytes exceeds the limit of %d", n, maxRecordPayload)
	}
	start := len(b)
	b = slices.Grow(b, recordHeaderLen+n)[:start+recordHeaderLen+n]
	if _, err := m.MarshalToSizedBuffer(b[start+recordHeaderLen:]); err != nil {
		return b[:start], fmt.Errorf("storage: encoding record type %d: %w", typ, err)
	}
	sealRecord(b[start:], typ)
	return b, nil
}

// appendMarkerRecord appends a snapshot marker record.
func appendMarkerRecord(b []byte, m SnapshotMarker) []byte {
	start := len(b)
	b = slices.Grow(b, recordHeaderLen+markerLen)[:start+recordHeaderLen+markerLen]
	binary.BigEndian.PutUint64(b[start+recordHeaderLen:], m.Index)
	binary.BigEndian.PutUint64(b[start+recordHeaderLen+8:], m.Term)
	sealRecord(b[start:], recordSnapshot)
	return b
}

// sealRecord fills in the header of rec, whose payload is already in place.
func sealRecord(rec []byte, typ byte) {
	binary.BigEndian.PutUint32(rec[0:4], uint32(len(rec)-recordHeaderLen))
	rec[8] = typ
	binary.BigEndian.PutUint32(rec[4:8], crc32.Checksum(rec[8:], castagnoli))
}

// decodeRecord decodes the record at the start of b. It returns the record's
// type, its payload (aliasing b) and the record's total length.
func decodeRecord(b []byte) (typ byte, payload []byte, n int, err error) {
	if len(b) < recordHeaderLen {
		return 0, nil, 0, errTruncated
	}
	size := binary.BigEndian.Uint32(b[0:4])
	if size > maxRecordPayload {
		return 0, nil, 0, errLength
	}
	typ = b[8]
	if typ < recordEntry || typ > recordSnapshot {
		return 0, nil, 0, errType
	}
	if typ == recordSnapshot && size != markerLen {
		return 0, nil, 0, errLength
	}
	total := recordHeaderLen + int(size)
	if len(b) < total {
		return 0, nil, 0, errTruncated
	}
	if crc32.Checksum(b[8:total], castagnoli) != binary.BigEndian.Uint32(b[4:8]) {
		return 0, nil, 0, errChecksum
	}
	return typ, b[recordHeaderLen:total], total, nil
}

// decodeMarker decodes a snapshot marker payload (already length-checked).
func decodeMarker(p []byte) SnapshotMarker {
	return SnapshotMarker{Index: binary.BigEndian.Uint64(p[0:8]), Term: binary.BigEndian.Uint64(p[8:16])}
}

// record is a decoded WAL record; exactly one of the value fields is set,
// according to typ.
type record struct {
	typ    byte
	entry  raftpb.Entry
	hs     raftpb.HardState
	marker SnapshotMarker
}

// parseRecord decodes a record payload into r.
func parseRecord(typ byte, payload []byte, r *record) error {
	r.typ = typ
	switch typ {
	case recordEntry:
		r.entry = raftpb.Entry{}
		if err := r.entry.Unmarshal(payload); err != nil {
			return fmt.Errorf("decoding entry record: %w", err)
		}
	case recordHardState:
		r.hs = raftpb.HardState{}
		if err := r.hs.Unmarshal(payload); err != nil {
			return fmt.Errorf("decoding hard state record: %w", err)
		}
	case recordSnapshot:
		r.marker = decodeMarker(payload)
	default:
		return errType
	}
	return nil
}
