package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

const (
	walMagic         = "PDCKWAL\n"
	walVersion       = 1
	segmentHeaderLen = 36
	segmentSuffix    = ".wal"
	segmentTmpSuffix = ".wal.tmp"
	lockName         = "wal.lock"
)

// segment is one WAL file.
type segment struct {
	seq   uint64
	first uint64
	path  string
}

func segmentName(seq, first uint64) string {
	return fmt.Sprintf("%016x-%016x%s", seq, first, segmentSuffix)
}

// parseHexPair parses "<16 hex>-<16 hex><suffix>" as written by %016x.
func parseHexPair(name, suffix string) (a, b uint64, ok bool) {
	base, found := strings.CutSuffix(name, suffix)
	if !found || len(base) != 33 || base[16] != '-' {
		return 0, 0, false
	}
	a, errA := strconv.ParseUint(base[:16], 16, 64)
	b, errB := strconv.ParseUint(base[17:], 16, 64)
	if errA != nil || errB != nil || fmt.Sprintf("%016x-%016x", a, b) != base {
		return 0, 0, false
	}
	return a, b, true
}

// encodeSegmentHeader returns the header of segment seq.
func encodeSegmentHeader(seq, first uint64) []byte {
	h := make([]byte, segmentHeaderLen)
	copy(h, walMagic)
	binary.BigEndian.PutUint32(h[8:], walVersion)
	binary.BigEndian.PutUint64(h[16:], seq)
	binary.BigEndian.PutUint64(h[24:], first)
	binary.BigEndian.PutUint32(h[32:], crc32.Checksum(h[:32], castagnoli))
	return h
}

// checkSegmentHeader verifies the header of s, whose contents are data.
func checkSegmentHeader(s segment, data []byte) error {
	if len(data) < segmentHeaderLen {
		return &CorruptError{Path: s.path, Offset: 0, Err: fmt.Errorf("segment header truncated (%d bytes)", len(data))}
	}
	h := data[:segmentHeaderLen]
	switch {
	case string(h[:8]) != walMagic:
		return &CorruptError{Path: s.path, Offset: 0, Err: errors.New("bad segment magic")}
	case crc32.Checksum(h[:32], castagnoli) != binary.BigEndian.Uint32(h[32:]):
		return &CorruptError{Path: s.path, Offset: 0, Err: errors.New("segment header checksum mismatch")}
	}
	if v := binary.BigEndian.Uint32(h[8:]); v != walVersion {
		return fmt.Errorf("storage: WAL segment %s has format version %d, this build reads version %d", s.path, v, walVersion)
	}
	if seq, first := binary.BigEndian.Uint64(h[16:]), binary.BigEndian.Uint64(h[24:]); seq != s.seq || first != s.first {
		return &CorruptError{Path: s.path, Offset: 16, Err: fmt.Errorf("header says segment %d first index %d, name disagrees", seq, first)}
	}
	return nil
}

// listSegments returns the segments of dir ordered by seq, and fails if one
// is missing in the middle. A segment's first index may be lower than the
// one before it: a segment is named after the last index + 1 when it is
// created, and the last index goes down when raft replaces the log's tail
// (see "Log semantics" in doc.go).
func listSegments(dir string) ([]segment, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("storage: listing WAL directory: %w", err)
	}
	var segs []segment
	for _, de := range des {
		seq, first, ok := parseHexPair(de.Name(), segmentSuffix)
		if !ok || !de.Type().IsRegular() {
			continue
		}
		segs = append(segs, segment{seq: seq, first: first, path: filepath.Join(dir, de.Name())})
	}
	slices.SortFunc(segs, func(a, b segment) int {
		switch {
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return 0
	})
	for i := 1; i < len(segs); i++ {
		if segs[i].seq != segs[i-1].seq+1 {
			return nil, fmt.Errorf("storage: WAL directory %s: segment %d missing between %s and %s: %w",
				dir, segs[i-1].seq+1, filepath.Base(segs[i-1].path), filepath.Base(segs[i].path), ErrCorrupt)
		}
	}
	return segs, nil
}

// removeTempSegments deletes half-created segments (a crash during rollover)
// and returns their paths; it also deletes, without reporting them,
// released segments whose deletion a crash interrupted.
func removeTempSegments(dir string) (removed []string, err error) {
	if _, err := removeDropped(dir); err != nil {
		return nil, fmt.Errorf("storage: removing a released WAL segment: %w", err)
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("storage: listing WAL directory: %w", err)
	}
	for _, de := range des {
		if !strings.HasSuffix(de.Name(), segmentTmpSuffix) {
			continue
		}
		p := filepath.Join(dir, de.Name())
		if err := os.Remove(p); err != nil {
			return removed, fmt.Errorf("storage: removing half-created segment: %w", err)
		}
		removed = append(removed, p)
	}
	return removed, nil
}

// badRecord describes the first record of a segment that failed to decode.
type badRecord struct {
	offset int
	err    error
}

// walkSegment decodes the records of s (contents data, header already
// checked) in order and calls visit for each. It stops at the first record
// that fails to decode and returns it; bad is nil when the segment is clean.
// Zero bytes from a record boundary to the end of data are the unused part
// of a preallocated segment, not damage: end is the offset where the records
// stop (len(data) when they fill the segment). An error from parsing a
// record whose checksum matched, or from visit, is returned as err.
func walkSegment(s segment, data []byte, visit func(off int, r *record) error) (end int, bad *badRecord, err error) {
	var r record
	off := segmentHeaderLen
	for off < len(data) {
		typ, payload, n, derr := decodeRecord(data[off:])
		if derr != nil {
			if allZero(data[off:]) {
				return off, nil, nil
			}
			return off, &badRecord{offset: off, err: derr}, nil
		}
		if perr := parseRecord(typ, payload, &r); perr != nil {
			return off, nil, &CorruptError{Path: s.path, Offset: int64(off), Err: perr}
		}
		if verr := visit(off, &r); verr != nil {
			return off, nil, verr
		}
		off += n
	}
	return off, nil, nil
}

// allZero reports whether every byte of b is zero.
func allZero(b []byte) bool {
	var zero [4096]byte
	for len(b) > 0 {
		n := min(len(b), len(zero))
		if !bytes.Equal(b[:n], zero[:n]) {
			return false
		}
		b = b[n:]
	}
	return true
}

// syncDir fsyncs a directory so that creations, renames and removals in it
// are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("storage: opening directory %s to sync it: %w", dir, err)
	}
	serr := d.Sync()
	cerr := d.Close()
	if serr != nil {
		return fmt.Errorf("storage: syncing directory %s: %w", dir, serr)
	}
	if cerr != nil {
		return fmt.Errorf("storage: closing directory %s: %w", dir, cerr)
	}
	return nil
}

// readFilePrefix returns the first limit bytes of the file at path (fewer
// if it is shorter), or all of it when limit is negative.
func readFilePrefix(path string, limit int64) ([]byte, error) {
	if limit < 0 {
		return os.ReadFile(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// One allocation of the known length: the last segment read at
	// startup can be tens of megabytes, which io.ReadAll would grow to
	// by doubling and copying.
	data := make([]byte, limit)
	n, err := io.ReadFull(f, data)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return data[:n], err
}
