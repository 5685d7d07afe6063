package storage

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.etcd.io/raft/v3/raftpb"
)

const (
	snapMagic        = "PDCKSNAP"
	snapVersion      = 1
	snapFixedHeader  = 16 // magic, version, metadata length
	snapTrailerLen   = 12 // body length, CRC
	snapMaxMetaBytes = 1 << 20
	snapSuffix       = ".snap"
	snapTmpMarker    = ".snap.tmp"

	// MinSnapRetain is the fewest snapshots PurgeSnapshots keeps, as
	// ZooKeeper's autopurge.snapRetainCount.
	MinSnapRetain = 3
)

// ErrNoSnapshot is returned by LoadNewestSnapshot when the directory has no
// snapshot file at all.
var ErrNoSnapshot = errors.New("storage: no snapshot")

// SnapshotInfo names a snapshot file.
type SnapshotInfo struct {
	Path  string
	Index uint64
	Term  uint64
}

func snapshotName(index, term uint64) string {
	return fmt.Sprintf("%016x-%016x%s", index, term, snapSuffix)
}

// SaveSnapshot writes a snapshot file for meta into dir: a header with meta,
// the bytes write produces, and a checksum. The file is complete and durable
// under its final name when SaveSnapshot returns; on error nothing but
// possibly a temporary file is left. It returns the file's path.
func SaveSnapshot(dir string, meta raftpb.SnapshotMetadata, write func(io.Writer) error) (path string, err error) {
	metaBytes, err := meta.Marshal()
	if err != nil {
		return "", fmt.Errorf("storage: encoding snapshot metadata: %w", err)
	}
	if len(metaBytes) > snapMaxMetaBytes {
		return "", fmt.Errorf("storage: snapshot metadata of %d bytes exceeds %d", len(metaBytes), snapMaxMetaBytes)
	}
	path = filepath.Join(dir, snapshotName(meta.Index, meta.Term))
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if err != nil {
		return "", fmt.Errorf("storage: creating snapshot file: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	h := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(&writebackWriter{w: f, sync: fileRangeSyncer(f)}, h), 256<<10)
	var hdr [snapFixedHeader]byte
	copy(hdr[:], snapMagic)
	binary.BigEndian.PutUint32(hdr[8:], snapVersion)
	binary.BigEndian.PutUint32(hdr[12:], uint32(len(metaBytes)))
	_, _ = bw.Write(hdr[:]) // bufio reports write errors at Flush
	_, _ = bw.Write(metaBytes)
	body := &countingWriter{w: bw}
	if err := write(body); err != nil {
		return "", fmt.Errorf("storage: writing snapshot body for index %d: %w", meta.Index, err)
	}
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], body.n)
	_, _ = bw.Write(n[:])
	if err := bw.Flush(); err != nil {
		return "", fmt.Errorf("storage: writing snapshot %s: %w", tmp, err)
	}
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], h.Sum32())
	if _, err := f.Write(sum[:]); err != nil {
		return "", fmt.Errorf("storage: writing snapshot %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		return "", fmt.Errorf("storage: fsync of snapshot %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("storage: closing snapshot %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("storage: renaming snapshot into place: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return "", err
	}
	return path, nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n uint64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += uint64(n)
	return n, err
}

// ListSnapshots returns the snapshot files of dir, lowest index first. It
// does not read them.
func ListSnapshots(dir string) ([]SnapshotInfo, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("storage: listing snapshot directory: %w", err)
	}
	var infos []SnapshotInfo
	for _, de := range des {
		index, term, ok := parseHexPair(de.Name(), snapSuffix)
		if !ok || !de.Type().IsRegular() {
			continue
		}
		infos = append(infos, SnapshotInfo{Path: filepath.Join(dir, de.Name()), Index: index, Term: term})
	}
	slices.SortFunc(infos, func(a, b SnapshotInfo) int {
		switch {
		case a.Index < b.Index:
			return -1
		case a.Index > b.Index:
			return 1
		}
		return 0
	})
	return infos, nil
}

// SnapshotReader is a verified snapshot file open for reading its body.
type SnapshotReader struct {
	Path string
	Meta raftpb.SnapshotMetadata
	body *io.SectionReader
	f    *os.File
}

// Read reads the state machine's bytes.
func (s *SnapshotReader) Read(p []byte) (int, error) { return s.body.Read(p) }

// Size returns the length of the body.
func (s *SnapshotReader) Size() int64 { return s.body.Size() }

// Close closes the file.
func (s *SnapshotReader) Close() error { return s.f.Close() }

// LoadNewestSnapshot opens the snapshot with the highest index in dir whose
// checksum verifies. A damaged snapshot is logged and skipped for the next
// older one. It returns ErrNoSnapshot when dir has no snapshot, and an error
// matching ErrCorrupt when every snapshot is damaged.
func LoadNewestSnapshot(dir string, logger *slog.Logger) (*SnapshotReader, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	infos, err := ListSnapshots(dir)
	if err != nil {
		return nil, err
	}
	if len(infos) == 0 {
		return nil, ErrNoSnapshot
	}
	var errs []error
	for i := len(infos) - 1; i >= 0; i-- {
		s, err := OpenSnapshot(infos[i])
		if err == nil {
			return s, nil
		}
		logger.Error("snapshot is damaged; trying an older one", "path", infos[i].Path, "err", err)
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("storage: all %d snapshots in %s are damaged: %w", len(infos), dir, errors.Join(errs...))
}

// OpenSnapshot verifies the snapshot file info and opens it for reading.
func OpenSnapshot(info SnapshotInfo) (*SnapshotReader, error) {
	f, err := os.Open(info.Path)
	if err != nil {
		return nil, fmt.Errorf("storage: opening snapshot: %w", err)
	}
	s, err := verifySnapshot(f, info)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return s, nil
}

// verifySnapshot checks the checksum, header and trailer of f.
func verifySnapshot(f *os.File, info SnapshotInfo) (*SnapshotReader, error) {
	corrupt := func(off int64, format string, args ...any) error {
		return &CorruptError{Path: info.Path, Offset: off, Err: fmt.Errorf(format, args...)}
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("storage: stat of snapshot: %w", err)
	}
	size := fi.Size()
	if size < snapFixedHeader+snapTrailerLen {
		return nil, corrupt(0, "snapshot file of %d bytes is too short", size)
	}
	h := crc32.New(castagnoli)
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, size-4)); err != nil {
		return nil, fmt.Errorf("storage: reading snapshot %s: %w", info.Path, err)
	}
	var trailer [snapTrailerLen]byte
	if _, err := f.ReadAt(trailer[:], size-snapTrailerLen); err != nil {
		return nil, fmt.Errorf("storage: reading snapshot %s: %w", info.Path, err)
	}
	if want := binary.BigEndian.Uint32(trailer[8:]); h.Sum32() != want {
		return nil, corrupt(size-4, "snapshot checksum mismatch")
	}
	var hdr [snapFixedHeader]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return nil, fmt.Errorf("storage: reading snapshot %s: %w", info.Path, err)
	}
	if string(hdr[:8]) != snapMagic {
		return nil, corrupt(0, "bad snapshot magic")
	}
	if v := binary.BigEndian.Uint32(hdr[8:]); v != snapVersion {
		return nil, fmt.Errorf("storage: snapshot %s has format version %d, this build reads version %d", info.Path, v, snapVersion)
	}
	metaLen := int64(binary.BigEndian.Uint32(hdr[12:]))
	bodyLen := binary.BigEndian.Uint64(trailer[:8])
	if metaLen > snapMaxMetaBytes || snapFixedHeader+metaLen+snapTrailerLen > size ||
		bodyLen != uint64(size-snapFixedHeader-metaLen-snapTrailerLen) {
		return nil, corrupt(12, "snapshot lengths disagree: metadata %d, body %d, file %d", metaLen, bodyLen, size)
	}
	metaBytes := make([]byte, metaLen)
	if _, err := f.ReadAt(metaBytes, snapFixedHeader); err != nil {
		return nil, fmt.Errorf("storage: reading snapshot %s: %w", info.Path, err)
	}
	var meta raftpb.SnapshotMetadata
	if err := meta.Unmarshal(metaBytes); err != nil {
		return nil, corrupt(snapFixedHeader, "decoding snapshot metadata: %v", err)
	}
	if meta.Index != info.Index || meta.Term != info.Term {
		return nil, corrupt(snapFixedHeader, "metadata says index %d term %d, file name disagrees", meta.Index, meta.Term)
	}
	return &SnapshotReader{
		Path: info.Path,
		Meta: meta,
		body: io.NewSectionReader(f, snapFixedHeader+metaLen, int64(bodyLen)),
		f:    f,
	}, nil
}

// PurgeSnapshots deletes all but the retain newest snapshots of dir (retain
// below MinSnapRetain counts as MinSnapRetain) and returns the ones kept,
// lowest index first.
func PurgeSnapshots(dir string, retain int) (kept []SnapshotInfo, err error) {
	retain = max(retain, MinSnapRetain)
	infos, err := ListSnapshots(dir)
	if err != nil {
		return nil, err
	}
	if len(infos) <= retain {
		return infos, nil
	}
	drop := infos[:len(infos)-retain]
	for _, s := range drop {
		if err := os.Remove(s.Path); err != nil {
			return nil, fmt.Errorf("storage: purging snapshot: %w", err)
		}
	}
	if err := syncDir(dir); err != nil {
		return nil, err
	}
	return infos[len(infos)-retain:], nil
}

// RemoveTempSnapshots deletes the temporary files of snapshots whose writing
// never finished (a crash, or an error). Call it only while no SaveSnapshot
// runs on dir.
func RemoveTempSnapshots(dir string) (removed []string, err error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("storage: listing snapshot directory: %w", err)
	}
	for _, de := range des {
		if !strings.Contains(de.Name(), snapTmpMarker) {
			continue
		}
		p := filepath.Join(dir, de.Name())
		if err := os.Remove(p); err != nil {
			return removed, fmt.Errorf("storage: removing unfinished snapshot: %w", err)
		}
		removed = append(removed, p)
	}
	return removed, nil
}
