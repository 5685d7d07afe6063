package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// DefaultSegmentBytes is the segment size at which the WAL starts a new
// segment when WALOptions.SegmentBytes is zero.
const DefaultSegmentBytes = 64 << 20

// maxKeptBuffer bounds the encoding buffer a WAL keeps between batches.
const maxKeptBuffer = 4 << 20

// ErrClosed is returned by the methods of a closed WAL.
var ErrClosed = errors.New("storage: WAL is closed")

// WALOptions tunes OpenWAL.
type WALOptions struct {
	// SegmentBytes is the size a segment may reach before the next Save goes
	// to a new segment; a single batch is never split, so a segment can be
	// larger by one batch. Zero means DefaultSegmentBytes.
	SegmentBytes int64
	// Logger receives recovery and rollover messages; nil discards them.
	Logger *slog.Logger
	// OnSync, if set, is told how long each fsync of the segment being
	// appended to took. It runs on the WAL's owner goroutine, so it must be
	// quick.
	OnSync func(time.Duration)
	// PreallocateAfter is how many bytes the WAL appends after it is opened
	// before it keeps a zero-filled spare segment ready (see the package
	// documentation): zero means DefaultPreallocateAfter, negative never.
	PreallocateAfter int64
}

// DefaultPreallocateAfter is WALOptions.PreallocateAfter when it is zero:
// a server that has logged this much is busy enough to be worth a
// preallocated segment, and the many short-lived servers of tests never
// write one.
const DefaultPreallocateAfter = 256 << 10

// minSpareBytes is the smallest spare segment. Spares are sized at twice
// what the WAL has written since it was opened, from this up to the segment
// size, so a quiet server's spares stay small and a busy one's reach
// SegmentBytes after a few segments.
const minSpareBytes = 4 << 20

// WALStats are counters for metrics and tests.
type WALStats struct {
	Syncs        uint64 // fsyncs of segment files
	BytesWritten uint64 // bytes appended, headers included
	Segments     int64  // segment files currently in the directory
}

// WAL is an open write-ahead log. See the package documentation for its
// format and recovery rules. A WAL is owned by one goroutine.
type WAL struct {
	dir          string
	logger       *slog.Logger
	segmentBytes int64
	lock         *os.File

	segs      []segment // oldest first; the last is open for appending
	f         *os.File  // the last segment
	size      int64     // bytes of records in it (where the next write goes)
	prealloc  int64     // its preallocated length, 0 if it was not preallocated
	unsynced  bool      // bytes written to f since its last fsync
	hs        raftpb.HardState
	marker    SnapshotMarker
	lastIndex uint64 // index of the last entry written, 0 if none
	buf       []byte
	onSync    func(time.Duration)
	err       error // sticky: a failed write leaves the tail unknown
	closed    bool

	dt            *directTail   // direct appends to the current segment, nil if off
	noDirect      bool          // the filesystem refused a direct append
	preallocAfter int64         // see WALOptions.PreallocateAfter; < 0 never
	spare         *spareSegment // the next segment, being zero-filled or ready
	pending       *pendingRoll  // the end of the last roll into a spare, nil when done
	rollHook      func()        // tests: runs before a pending roll's background part

	syncs    atomic.Uint64
	written  atomic.Uint64
	segCount atomic.Int64
}

// OpenWAL opens (or creates) the WAL in dir, checks every segment, and cuts
// off a torn tail of the last segment, logging it. It fails with a
// *CorruptError for damage anywhere else.
func OpenWAL(dir string, opts WALOptions) (*WAL, error) {
	if opts.SegmentBytes < 0 {
		return nil, fmt.Errorf("storage: WAL segment size %d is negative", opts.SegmentBytes)
	}
	if opts.SegmentBytes == 0 {
		opts.SegmentBytes = DefaultSegmentBytes
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := MkdirAllDurable(dir, 0o750); err != nil {
		return nil, err
	}
	lock, err := lockFile(filepath.Join(dir, lockName), "WAL")
	if err != nil {
		return nil, err
	}
	if opts.PreallocateAfter == 0 {
		opts.PreallocateAfter = DefaultPreallocateAfter
	}
	w := &WAL{dir: dir, logger: logger, segmentBytes: opts.SegmentBytes, lock: lock, onSync: opts.OnSync,
		preallocAfter: opts.PreallocateAfter}
	if err := w.open(); err != nil {
		w.release()
		return nil, err
	}
	return w, nil
}

// MkdirAllDurable creates dir and the parents it lacks, as os.MkdirAll
// does, and fsyncs the parent of each directory it created, so that a
// crash cannot undo the creation of a directory that acknowledged records
// (or snapshots) are in. Create data directories with it: OpenWAL finds
// one created by os.MkdirAll there already and has nothing to make
// durable.
func MkdirAllDurable(dir string, perm os.FileMode) error {
	var created []string // deepest first
	for d := filepath.Clean(dir); ; {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
			break // there already (or MkdirAll reports why not)
		}
		created = append(created, d)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if err := os.MkdirAll(dir, perm); err != nil {
		return fmt.Errorf("storage: creating directory: %w", err)
	}
	for _, d := range slices.Backward(created) {
		if err := syncCreated(filepath.Dir(d)); err != nil {
			return fmt.Errorf("storage: making the creation of directory %s durable: %w", d, err)
		}
	}
	return nil
}

// syncCreated is syncDir; a test replaces it to see what MkdirAllDurable
// syncs.
var syncCreated = syncDir

// open recovers the WAL's state from disk and opens the last segment.
func (w *WAL) open() error {
	if err := w.adoptSpare(); err != nil {
		return err
	}
	removed, err := removeTempSegments(w.dir)
	if err != nil {
		return err
	}
	for _, p := range removed {
		if filepath.Base(p) == spareName {
			w.logger.Debug("removed the spare WAL segment of the last run", "path", p)
			continue
		}
		w.logger.Warn("removed half-created WAL segment", "path", p)
	}
	segs, err := listSegments(w.dir)
	if err != nil {
		return err
	}
	if len(segs) == 0 {
		return w.createSegment(0, 1)
	}
	var end int64
	for i, s := range segs {
		if end, err = w.recoverSegment(s, i == len(segs)-1); err != nil {
			return err
		}
	}
	last := segs[len(segs)-1]
	f, err := os.OpenFile(last.path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("storage: opening WAL segment for appending: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("storage: stat of WAL segment: %w", err)
	}
	w.segs, w.f, w.size = segs, f, end
	if fi.Size() > end {
		w.prealloc = fi.Size()
		tail := make([]byte, end%directAlign)
		if _, err := f.ReadAt(tail, end-int64(len(tail))); err != nil {
			_ = f.Close()
			return fmt.Errorf("storage: reading the last page of WAL segment %s: %w", last.path, err)
		}
		w.startDirect(tail)
	}
	w.segCount.Store(int64(len(segs)))
	return nil
}

// recoverSegment checks s, tracks the state it records and, when s is the
// last segment, truncates a torn tail. It returns the offset where the
// segment's records end.
func (w *WAL) recoverSegment(s segment, last bool) (int64, error) {
	data, err := os.ReadFile(s.path)
	if err != nil {
		return 0, fmt.Errorf("storage: reading WAL segment: %w", err)
	}
	if err := checkSegmentHeader(s, data); err != nil {
		return 0, err
	}
	// The segment was started after entry first-1; it may hold no entry.
	if s.first > 0 {
		w.lastIndex = s.first - 1
	}
	end, bad, err := walkSegment(s, data, func(_ int, r *record) error {
		switch r.typ {
		case recordEntry:
			w.lastIndex = r.entry.Index
		case recordHardState:
			w.hs = r.hs
		case recordSnapshot:
			w.marker = r.marker
			w.lastIndex = max(w.lastIndex, r.marker.Index)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if bad == nil {
		return int64(end), nil
	}
	if !last {
		return 0, &CorruptError{Path: s.path, Offset: int64(bad.offset), Err: bad.err}
	}
	if err := tailDamage(s.path, data, bad); err != nil {
		return 0, err
	}
	w.logger.Warn("truncating torn tail of WAL segment",
		"path", s.path, "offset", bad.offset, "dropped_bytes", len(data)-bad.offset, "reason", bad.err.Error())
	if err := truncateFile(s.path, int64(bad.offset)); err != nil {
		return 0, err
	}
	return int64(bad.offset), nil
}

// truncateFile cuts path to size and makes the cut durable.
func truncateFile(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("storage: opening %s to truncate its torn tail: %w", path, err)
	}
	terr := f.Truncate(size)
	if terr == nil {
		terr = f.Sync()
	}
	cerr := f.Close()
	if terr != nil {
		return fmt.Errorf("storage: truncating torn tail of %s at %d: %w", path, size, terr)
	}
	if cerr != nil {
		return fmt.Errorf("storage: closing %s: %w", path, cerr)
	}
	return nil
}

// ReadAll returns the last hard state, the entries with an index above
// after (for each index the entry written last) and the last snapshot
// marker. Pass the index of the snapshot the caller restored, or 0. The
// entries are contiguous from after+1; a hole is reported as corruption.
func (w *WAL) ReadAll(after uint64) (hs raftpb.HardState, ents []raftpb.Entry, marker SnapshotMarker, err error) {
	if w.closed {
		return hs, nil, marker, ErrClosed
	}
	if err := w.finishRoll(); err != nil {
		return hs, nil, marker, err
	}
	// Write out a staged commit-only hard state (directTail): the reads
	// below go to the file.
	if w.err == nil {
		if err := w.flushDirect(); err != nil {
			w.err = err
			return hs, nil, marker, err
		}
	}
	for i, s := range w.segs {
		limit := int64(-1)
		if i == len(w.segs)-1 {
			limit = w.size // not the preallocated zeros after it
		}
		data, err := readFilePrefix(s.path, limit)
		if err != nil {
			return hs, nil, marker, fmt.Errorf("storage: reading WAL segment: %w", err)
		}
		if err := checkSegmentHeader(s, data); err != nil {
			return hs, nil, marker, err
		}
		_, bad, err := walkSegment(s, data, func(off int, r *record) error {
			switch r.typ {
			case recordHardState:
				hs = r.hs
			case recordSnapshot:
				marker = r.marker
			case recordEntry:
				var aerr error
				ents, aerr = appendEntry(ents, r.entry, after)
				if aerr != nil {
					return &CorruptError{Path: s.path, Offset: int64(off), Err: aerr}
				}
			}
			return nil
		})
		if err != nil {
			return hs, nil, marker, err
		}
		if bad != nil {
			// OpenWAL already cut any torn tail; damage now is new.
			return hs, nil, marker, &CorruptError{Path: s.path, Offset: int64(bad.offset), Err: bad.err}
		}
	}
	return hs, ents, marker, nil
}

// appendEntry adds e to ents (the entries above after, contiguous), letting
// e replace the entry with its index and everything after it.
func appendEntry(ents []raftpb.Entry, e raftpb.Entry, after uint64) ([]raftpb.Entry, error) {
	if e.Index <= after {
		// Everything above after that was written before e is superseded.
		return ents[:0], nil
	}
	if len(ents) == 0 {
		if e.Index != after+1 {
			return ents, fmt.Errorf("entry %d is the first after index %d: entries %d..%d missing",
				e.Index, after, after+1, e.Index-1)
		}
		return append(ents, e), nil
	}
	first, last := ents[0].Index, ents[len(ents)-1].Index
	if e.Index > last+1 {
		return ents, fmt.Errorf("entry %d follows entry %d: entries missing", e.Index, last)
	}
	return append(ents[:e.Index-first], e), nil
}

// Save appends ents and then hs (when not empty) with one write, and fsyncs
// once unless only the commit index changed (a roll into a new segment
// fsyncs the old one first as well). Put everything of one raft
// Ready into one call. A failed write makes every later call fail.
func (w *WAL) Save(hs raftpb.HardState, ents []raftpb.Entry) error {
	if err := w.usable(); err != nil {
		return err
	}
	emptyHS := isEmptyHardState(hs)
	if emptyHS && len(ents) == 0 {
		return nil
	}
	buf := w.buf[:0]
	var err error
	for i := range ents {
		if buf, err = appendMessageRecord(buf, recordEntry, &ents[i]); err != nil {
			return fmt.Errorf("storage: saving entry %d: %w", ents[i].Index, err)
		}
	}
	if !emptyHS {
		if buf, err = appendMessageRecord(buf, recordHardState, &hs); err != nil {
			return err
		}
	}
	mustSync := len(ents) > 0 || hs.Term != w.hs.Term || hs.Vote != w.hs.Vote
	if err := w.write(buf, mustSync); err != nil {
		return err
	}
	w.keepBuf(buf)
	if !emptyHS {
		w.hs = hs
	}
	if len(ents) > 0 {
		w.lastIndex = ents[len(ents)-1].Index
	}
	return nil
}

// SaveSnapshotMarker records, durably, that the snapshot m is on disk. Call
// it after SaveSnapshot returned.
func (w *WAL) SaveSnapshotMarker(m SnapshotMarker) error {
	if err := w.usable(); err != nil {
		return err
	}
	buf := appendMarkerRecord(w.buf[:0], m)
	if err := w.write(buf, true); err != nil {
		return err
	}
	w.keepBuf(buf)
	w.marker = m
	w.lastIndex = max(w.lastIndex, m.Index)
	return nil
}

// keepBuf keeps buf for the next batch unless a huge batch made it large.
func (w *WAL) keepBuf(buf []byte) {
	if cap(buf) > maxKeptBuffer {
		buf = nil
	}
	w.buf = buf
}

// usable reports why the WAL cannot be written, if it cannot.
func (w *WAL) usable() error {
	if w.closed {
		return ErrClosed
	}
	return w.err
}

// write appends b to the last segment, starting a new segment first if b
// would take the current one past the size limit (or, once a zero-filled
// spare is ready, if the current one is not preallocated), and fsyncs if
// asked.
func (w *WAL) write(b []byte, sync bool) error {
	limit := w.segmentBytes
	if w.prealloc > 0 {
		limit = w.prealloc
	}
	full := w.size+int64(len(b)) > limit
	if full && w.spare.filling() && w.size+int64(len(b)) <= 2*w.segmentBytes {
		// The spare is still being filled: go on past the limit (and
		// past the preallocation, through the page cache) until it is
		// ready rather than start a segment that is not preallocated and
		// leave it again as soon as the spare is.
		full = false
	}
	if w.size > segmentHeaderLen && (full || w.prealloc == 0 && w.spare.ready()) {
		if err := w.roll(); err != nil {
			w.err = err
			return err
		}
		// The new segment's header is written with b; it must be
		// durable before the segment is renamed into place.
		sync = sync || w.pending != nil
	}
	if w.dt != nil {
		w.dt.stage(b)
		w.size += int64(len(b))
		w.written.Add(uint64(len(b)))
		if sync || w.dt.pend >= maxStaged {
			if err := w.flushDirect(); err != nil {
				w.err = err
				return err
			}
		}
	} else {
		n, err := w.f.WriteAt(w.padded(b, w.size), w.size)
		n = min(n, len(b))
		w.size += int64(n)
		w.written.Add(uint64(n))
		if err != nil {
			w.err = fmt.Errorf("storage: appending to WAL segment %s: %w", w.f.Name(), err)
			return w.err
		}
	}
	w.unsynced = true
	if w.pending != nil && w.pending.finished() {
		if err := w.finishRoll(); err != nil {
			return err
		}
	}
	if w.spare == nil && w.preallocAfter >= 0 && w.written.Load() >= uint64(w.preallocAfter) {
		// The spare's file name is the current segment's until the
		// pending roll's rename: the filling waits for it.
		size := min(w.segmentBytes, max(minSpareBytes, 2*int64(w.written.Load())))
		w.spare = startSpare(filepath.Join(w.dir, spareName), size, w.pending)
	}
	if sync {
		if err := w.sync(); err != nil {
			return err
		}
		if w.pending != nil && !w.pending.started {
			w.pending.start(w.dir, w.logger)
		}
	}
	return nil
}

// zeroPage is what padded appends.
var zeroPage [directAlign]byte

// padded returns b, to be written at off, followed, when the segment is
// preallocated, by the zeros up to the end of the page b ends in (never
// past the preallocation). The bytes after w.size of a preallocated segment are
// zeros already (spare.go fills them, open checks them), so writing more of
// them changes nothing on disk; but a write that covers a page to its end
// is one the kernel can take without reading the page first, and the
// spare's zeros were written around the page cache, so without the padding
// the first append into each page would wait for a synchronous disk read
// (4.6 MB/s of reads under a 39,000 setData/s load, see docs/benchmarks.md).
// The next append starts inside the page the padding left cached.
func (w *WAL) padded(b []byte, off int64) []byte {
	if w.prealloc == 0 {
		return b
	}
	end := off + int64(len(b))
	to := min(w.prealloc, (end+directAlign-1)&^(directAlign-1))
	if to <= end {
		return b
	}
	return append(b, zeroPage[:to-end]...)
}

// sync makes the last segment's appends durable (fdatasync on Linux).
func (w *WAL) sync() error {
	var start time.Time
	if w.onSync != nil {
		start = time.Now()
	}
	if err := datasync(w.f); err != nil {
		w.err = fmt.Errorf("storage: syncing the WAL: %w", err) // err names the segment
		return w.err
	}
	if w.onSync != nil {
		w.onSync(time.Since(start))
	}
	w.syncs.Add(1)
	w.unsynced = false
	return nil
}

// roll makes the current segment durable and starts the next one: in the
// spare, if it is ready (rollToSpare), or else in a new file.
func (w *WAL) roll() error {
	if err := w.finishRoll(); err != nil {
		return err
	}
	if err := w.flushDirect(); err != nil {
		return err
	}
	if w.unsynced {
		if err := w.sync(); err != nil {
			return err
		}
	}
	if w.spare.ready() {
		return w.rollToSpare()
	}
	cur := w.segs[len(w.segs)-1]
	old := w.f
	if w.prealloc > w.size {
		// Give back the unused preallocation. Not synced: if a crash
		// undoes the cut, the zeros read as the end of the segment.
		if err := old.Truncate(w.size); err != nil {
			w.logger.Warn("could not cut the unused end of a WAL segment", "path", cur.path, "err", err)
		}
	}
	if err := w.createSegment(cur.seq+1, w.lastIndex+1); err != nil {
		return err
	}
	if err := old.Close(); err != nil {
		return fmt.Errorf("storage: closing WAL segment %s: %w", old.Name(), err)
	}
	w.logger.Info("started WAL segment", "path", w.segs[len(w.segs)-1].path, "previous", cur.path)
	return nil
}

// createSegment writes a new segment (header, current hard state and
// snapshot marker) under a temporary name, makes it durable, renames it into
// place and makes it the segment appended to.
func (w *WAL) createSegment(seq, first uint64) error {
	s := segment{seq: seq, first: first, path: filepath.Join(w.dir, segmentName(seq, first))}
	tmp := s.path + ".tmp"
	b, err := w.segmentStart(seq, first)
	if err != nil {
		return err
	}
	f, alloc := w.takeSpare() // only a spare whose filling failed is not ready here
	if f != nil {
		tmp = f.Name()
	} else {
		f, err = os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o640)
		if err != nil {
			return fmt.Errorf("storage: creating WAL segment: %w", err)
		}
	}
	fail := func(err error) error {
		_ = f.Close()
		_ = os.Remove(tmp)
		return err
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		return fail(fmt.Errorf("storage: writing WAL segment header to %s: %w", tmp, err))
	}
	if err := f.Sync(); err != nil {
		return fail(fmt.Errorf("storage: fsync of new WAL segment %s: %w", tmp, err))
	}
	w.syncs.Add(1)
	if err := os.Rename(tmp, s.path); err != nil {
		return fail(fmt.Errorf("storage: renaming new WAL segment: %w", err))
	}
	if err := syncDir(w.dir); err != nil {
		_ = f.Close()
		return err
	}
	w.written.Add(uint64(len(b)))
	w.segs = append(w.segs, s)
	w.segCount.Store(int64(len(w.segs)))
	w.f, w.size, w.prealloc, w.unsynced = f, int64(len(b)), alloc, false
	w.startDirect(b[len(b)&^(directAlign-1):])
	return nil
}

// segmentStart returns what a new segment begins with: its header, the
// current hard state and the latest snapshot marker.
func (w *WAL) segmentStart(seq, first uint64) ([]byte, error) {
	b := encodeSegmentHeader(seq, first)
	var err error
	if !isEmptyHardState(w.hs) {
		if b, err = appendMessageRecord(b, recordHardState, &w.hs); err != nil {
			return nil, err
		}
	}
	if w.marker != (SnapshotMarker{}) {
		b = appendMarkerRecord(b, w.marker)
	}
	return b, nil
}

// ReleaseTo deletes the segments that hold only entries at or below index
// (the index of the oldest snapshot to keep). The segment being appended to
// is never deleted.
func (w *WAL) ReleaseTo(index uint64) error {
	remove, err := w.Release(index)
	if err != nil {
		return err
	}
	return remove()
}

// Release drops from the WAL the segments that hold only entries at or
// below index, as ReleaseTo, and returns a function that deletes their files
// and syncs the directory. The function touches no WAL state, so it may run
// on another goroutine, outside the lock that orders the WAL's methods:
// freeing tens of megabytes (a few at a time, removeInSteps) and syncing a
// directory take milliseconds that appends need not wait for. A crash
// before the files are gone leaves segments whose entries all precede a
// durable snapshot: a restart finds them with the rest, skips their
// entries, and releases them after its next snapshot; a segment whose
// freeing had begun is renamed out of the log first, and the next open
// deletes it.
func (w *WAL) Release(index uint64) (remove func() error, err error) {
	if err := w.usable(); err != nil {
		return nil, err
	}
	// A segment whose successor is not yet in place (its rename may not
	// have reached the disk) stays: it holds the hard state.
	if err := w.finishRoll(); err != nil {
		return nil, err
	}
	n := 0
	for n < len(w.segs)-1 && w.segs[n+1].first-1 <= index {
		n++
	}
	if n == 0 {
		return func() error { return nil }, nil
	}
	paths := make([]string, n)
	for i, s := range w.segs[:n] {
		paths[i] = s.path
	}
	w.segs = w.segs[n:]
	w.segCount.Store(int64(len(w.segs)))
	dir, logger := w.dir, w.logger
	return func() error {
		for _, p := range paths {
			if err := removeInSteps(p, removeStep, time.Sleep); err != nil {
				return fmt.Errorf("storage: removing WAL segment released up to index %d: %w", index, err)
			}
			logger.Info("removed WAL segment", "path", p, "released_to", index)
		}
		return syncDir(dir)
	}, nil
}

// LastIndex returns the index of the last entry written, or the index of
// the newest snapshot marker if that is higher (the log goes on after a
// snapshot), or 0.
func (w *WAL) LastIndex() uint64 { return w.lastIndex }

// Stats returns the WAL's counters; it may be called from any goroutine.
func (w *WAL) Stats() WALStats {
	return WALStats{Syncs: w.syncs.Load(), BytesWritten: w.written.Load(), Segments: w.segCount.Load()}
}

// Close fsyncs what is not yet durable, closes the files and releases the
// directory lock. Closing twice returns ErrClosed.
func (w *WAL) Close() error {
	if w.closed {
		return ErrClosed
	}
	var err error
	if w.err == nil {
		err = w.flushDirect()
	}
	if w.unsynced && w.err == nil && err == nil {
		err = w.sync()
	}
	if p := w.pending; p != nil {
		if w.err == nil && err == nil {
			err = w.finishRoll()
		}
		switch {
		case !p.started:
			_ = p.old.Close() // the background part that closes it never ran
		case w.pending != nil:
			_ = p.wait() // the WAL failed already: that error is the one to report
		}
		w.pending = nil
	}
	if cerr := w.f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("storage: closing WAL segment: %w", cerr)
	}
	if w.spare != nil {
		w.spare.discard()
		w.spare = nil
	}
	w.release()
	w.closed = true
	return err
}

// release drops the directory lock.
func (w *WAL) release() {
	if w.lock != nil {
		_ = w.lock.Close()
		w.lock = nil
	}
}

func isEmptyHardState(hs raftpb.HardState) bool { return hs == raftpb.HardState{} }

// compile-time check that the raftpb types satisfy marshaler.
var (
	_ marshaler = (*raftpb.Entry)(nil)
	_ marshaler = (*raftpb.HardState)(nil)
	_ io.Closer = (*WAL)(nil)
)
