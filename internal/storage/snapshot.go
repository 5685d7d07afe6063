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
	"time"

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
	snapLockName     = "snap.lock" // see LockSnapshotDir

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
	out := newSnapshotSink(f)
	bw := bufio.NewWriterSize(io.MultiWriter(out, h), 256<<10)
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
	if _, err := out.Write(sum[:]); err != nil {
		return "", fmt.Errorf("storage: writing snapshot %s: %w", tmp, err)
	}
	if err := out.finish(); err != nil {
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

// LoadNewestSnapshot reads the snapshot with the highest index in dir whose
// checksum verifies (ReadSnapshot). A damaged snapshot is logged and skipped
// for the next older one. It returns ErrNoSnapshot when dir has no snapshot,
// and an error matching ErrCorrupt when every snapshot is damaged.
func LoadNewestSnapshot(dir string, logger *slog.Logger) (*Snapshot, error) {
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
		s, err := ReadSnapshot(infos[i])
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
	size, err := snapshotSize(f, info)
	if err != nil {
		return nil, err
	}
	h := crc32.New(castagnoli)
	if _, err := io.CopyBuffer(h, io.NewSectionReader(f, 0, size-4), make([]byte, 1<<20)); err != nil {
		return nil, fmt.Errorf("storage: reading snapshot %s: %w", info.Path, err)
	}
	var hdr [snapFixedHeader]byte
	var trailer [snapTrailerLen]byte
	if _, err := f.ReadAt(trailer[:], size-snapTrailerLen); err != nil {
		return nil, fmt.Errorf("storage: reading snapshot %s: %w", info.Path, err)
	}
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return nil, fmt.Errorf("storage: reading snapshot %s: %w", info.Path, err)
	}
	metaLen, bodyLen, err := snapshotLayout(info, size, hdr[:], trailer[:], h.Sum32())
	if err != nil {
		return nil, err
	}
	metaBytes := make([]byte, metaLen)
	if _, err := f.ReadAt(metaBytes, snapFixedHeader); err != nil {
		return nil, fmt.Errorf("storage: reading snapshot %s: %w", info.Path, err)
	}
	meta, err := decodeSnapshotMeta(info, metaBytes)
	if err != nil {
		return nil, err
	}
	return &SnapshotReader{
		Path: info.Path,
		Meta: meta,
		body: io.NewSectionReader(f, snapFixedHeader+metaLen, bodyLen),
		f:    f,
	}, nil
}

// snapshotSize returns the length of the snapshot file f, checking it can
// hold a header and a trailer.
func snapshotSize(f *os.File, info SnapshotInfo) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("storage: stat of snapshot: %w", err)
	}
	size := fi.Size()
	if size < snapFixedHeader+snapTrailerLen {
		return 0, snapCorrupt(info, 0, "snapshot file of %d bytes is too short", size)
	}
	return size, nil
}

// snapCorrupt returns the CorruptError for a damaged snapshot file.
func snapCorrupt(info SnapshotInfo, off int64, format string, args ...any) error {
	return &CorruptError{Path: info.Path, Offset: off, Err: fmt.Errorf(format, args...)}
}

// snapshotLayout checks a snapshot file of size bytes against its header,
// its trailer and sum, the checksum of all its bytes but the last four, and
// returns the lengths of its metadata and body.
func snapshotLayout(info SnapshotInfo, size int64, hdr, trailer []byte, sum uint32) (metaLen, bodyLen int64, err error) {
	if want := binary.BigEndian.Uint32(trailer[8:]); sum != want {
		return 0, 0, snapCorrupt(info, size-4, "snapshot checksum mismatch")
	}
	if string(hdr[:8]) != snapMagic {
		return 0, 0, snapCorrupt(info, 0, "bad snapshot magic")
	}
	if v := binary.BigEndian.Uint32(hdr[8:]); v != snapVersion {
		return 0, 0, fmt.Errorf("storage: snapshot %s has format version %d, this build reads version %d", info.Path, v, snapVersion)
	}
	metaLen = int64(binary.BigEndian.Uint32(hdr[12:]))
	body := binary.BigEndian.Uint64(trailer[:8])
	if metaLen > snapMaxMetaBytes || snapFixedHeader+metaLen+snapTrailerLen > size ||
		body != uint64(size-snapFixedHeader-metaLen-snapTrailerLen) {
		return 0, 0, snapCorrupt(info, 12, "snapshot lengths disagree: metadata %d, body %d, file %d", metaLen, body, size)
	}
	return metaLen, int64(body), nil
}

// decodeSnapshotMeta decodes a snapshot's metadata and checks it against
// the file's name.
func decodeSnapshotMeta(info SnapshotInfo, b []byte) (raftpb.SnapshotMetadata, error) {
	var meta raftpb.SnapshotMetadata
	if err := meta.Unmarshal(b); err != nil {
		return meta, snapCorrupt(info, snapFixedHeader, "decoding snapshot metadata: %v", err)
	}
	if meta.Index != info.Index || meta.Term != info.Term {
		return meta, snapCorrupt(info, snapFixedHeader, "metadata says index %d term %d, file name disagrees", meta.Index, meta.Term)
	}
	return meta, nil
}

// Snapshot is a snapshot file read whole and verified.
type Snapshot struct {
	Path string
	Meta raftpb.SnapshotMetadata
	// Body is the state machine's bytes. It may live outside the Go heap:
	// it must not be used, nor anything kept that points into it, after
	// Close.
	Body    []byte
	release func()
}

// Close gives the memory holding Body back. Closing twice is harmless.
func (s *Snapshot) Close() {
	if s.release != nil {
		s.release()
		s.release = nil
	}
	s.Body = nil
}

// ReadSnapshot reads the snapshot file info into memory in one pass and
// verifies it there (the caller must Close the result): the checksum,
// header and trailer are checked before any of it is returned, as
// OpenSnapshot checks them, without reading the file twice. On Linux the file is read with direct I/O (readWhole), so a
// snapshot written with direct I/O goes straight from the disk into the
// buffer at startup.
func ReadSnapshot(info SnapshotInfo) (*Snapshot, error) {
	f, err := os.Open(info.Path)
	if err != nil {
		return nil, fmt.Errorf("storage: opening snapshot: %w", err)
	}
	defer f.Close()
	size, err := snapshotSize(f, info)
	if err != nil {
		return nil, err
	}
	data, release, err := readWhole(f, size)
	if err != nil {
		return nil, fmt.Errorf("storage: reading snapshot %s: %w", info.Path, err)
	}
	sum := crc32.Checksum(data[:size-4], castagnoli)
	metaLen, bodyLen, err := snapshotLayout(info, size, data[:snapFixedHeader], data[size-snapTrailerLen:], sum)
	if err != nil {
		release()
		return nil, err
	}
	// The metadata is decoded into fresh memory (no bytes fields alias it).
	meta, err := decodeSnapshotMeta(info, data[snapFixedHeader:snapFixedHeader+metaLen])
	if err != nil {
		release()
		return nil, err
	}
	start := snapFixedHeader + metaLen
	return &Snapshot{Path: info.Path, Meta: meta, Body: data[start : start+bodyLen : start+bodyLen], release: release}, nil
}

// PurgeSnapshots deletes all but the retain newest snapshots of dir (retain
// below MinSnapRetain counts as MinSnapRetain) and returns the ones kept,
// lowest index first. Each file is freed a few megabytes at a time
// (removeInSteps), so that the WAL's fsyncs on the same disk do not wait
// for hundreds of megabytes to be released at once: a purge of a large
// snapshot takes a fraction of a second.
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
		if err := removeInSteps(s.Path, removeStep, time.Sleep); err != nil {
			return nil, fmt.Errorf("storage: purging snapshot: %w", err)
		}
	}
	if err := syncDir(dir); err != nil {
		return nil, err
	}
	return infos[len(infos)-retain:], nil
}

// RemoveTempSnapshots deletes the temporary files of snapshots whose writing
// never finished (a crash, or an error), and returns their paths. It also
// deletes, without reporting them, purged snapshots whose deletion a crash
// interrupted. Call it only while no SaveSnapshot or PurgeSnapshots runs on
// dir.
func RemoveTempSnapshots(dir string) (removed []string, err error) {
	if _, err := removeDropped(dir); err != nil {
		return nil, fmt.Errorf("storage: removing a purged snapshot: %w", err)
	}
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
