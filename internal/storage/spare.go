package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// spareName is the file a spare segment is filled in. Its suffix makes it a
// half-created segment to OpenWAL, which removes it.
const spareName = "spare" + segmentTmpSuffix

// spareChunk is how many zeros a spare is filled with at a time.
const spareChunk = 128 << 10

// spareQuiet is how many times as long as each chunk took the filling
// pauses after it.
const spareQuiet = 4

// spareSegment is the next WAL segment, filled with zeros in the background
// and made durable before the WAL appends to it.
//
// Why: appending to a file changes its length, and an fsync must then
// write the inode as well as the data, a second synchronous disk write;
// overwriting blocks that are already allocated and written (not holes, not
// fallocate's unwritten extents, which the first write converts) needs only
// the data. On the ext4 disk of docs/benchmarks.md an fsync after a small
// write takes 120-160 µs into a zero-filled file against 215-290 µs
// appending, and the WAL's fsync is what every acknowledged write waits for.
type spareSegment struct {
	path string
	size int64
	done chan struct{} // closed when filling ended
	stop atomic.Bool   // asks the filling to give up
	quit chan struct{} // closed with stop set, for a filling that waits
	f    *os.File      // the filled file, once done and err is nil
	err  error
}

// startSpare begins filling a spare of size bytes at path, once the roll
// after (if not nil) has renamed the last spare, which had the same name,
// into place.
func startSpare(path string, size int64, after *pendingRoll) *spareSegment {
	s := &spareSegment{path: path, size: size, done: make(chan struct{}), quit: make(chan struct{})}
	go s.fill(after)
	return s
}

// fill writes the zeros and fsyncs them and the spare's directory entry,
// gently: the WAL's fsyncs, which every acknowledged write waits for, share
// the disk with it. The zeros go to the disk with direct I/O (O_DIRECT)
// where the system has it: through the page cache each of a segment's 64
// MiB is copied into a freshly allocated page first, which a perf profile
// of a 3-member ensemble under a steady write load found taking 7% of the
// members' CPU (nearly all of it in that copy), and leaves the pages cached
// for nothing. Each spareChunk
// is written synchronously (direct I/O), or written and then waited for on
// its own (sync_file_range), so at most one small chunk is ever queued
// ahead of a WAL fsync; after each the filling pauses spareQuiet times as
// long as the disk took, keeping the disk busy about 1/(1+spareQuiet) of
// the time at most. A direct write the filesystem refuses (EINVAL) and a
// size that does not end on a block go through the page cache; the WAL
// appends to the filled file through the page cache as to any segment.
func (s *spareSegment) fill(after *pendingRoll) {
	defer close(s.done)
	if after != nil {
		select {
		case <-after.done:
			if after.err != nil {
				s.err = fmt.Errorf("storage: no spare WAL segment after a failed roll: %w", after.err)
				return
			}
		case <-s.quit:
			s.err = errSpareStopped
			return
		}
	}
	f, err := os.OpenFile(s.path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		s.err = fmt.Errorf("storage: creating spare WAL segment: %w", err)
		return
	}
	fail := func(err error) {
		_ = f.Close()
		_ = os.Remove(s.path)
		s.err = err
	}
	direct := setDirect != nil && setDirect(f, true) == nil
	buffered := func() error { // direct I/O off from here on
		if !direct {
			return nil
		}
		direct = false
		if err := setDirect(f, false); err != nil {
			return fmt.Errorf("storage: spare WAL segment %s: turning off direct I/O: %w", s.path, err)
		}
		return nil
	}
	sync := fileRangeSyncer(f)
	zeros := alignedBuffer(spareChunk)
	for off := int64(0); off < s.size; {
		if s.stop.Load() {
			fail(errSpareStopped)
			return
		}
		k := min(int64(len(zeros)), s.size-off)
		if direct && k%directAlign != 0 {
			if err := buffered(); err != nil {
				fail(err)
				return
			}
		}
		t0 := time.Now()
		_, err := f.WriteAt(zeros[:k], off)
		if err != nil && direct && errors.Is(err, errInvalid) {
			if err = buffered(); err == nil {
				_, err = f.WriteAt(zeros[:k], off)
			}
		}
		if err != nil {
			fail(fmt.Errorf("storage: filling spare WAL segment %s: %w", s.path, err))
			return
		}
		if !direct && sync != nil && sync(off, k, rangeWaitBefore|rangeWrite|rangeWaitAfter) != nil {
			sync = nil // no writeback hints here: the final fsync does it all
		}
		off += k
		time.Sleep(spareQuiet * time.Since(t0))
	}
	if err := buffered(); err != nil {
		fail(err)
		return
	}
	if err := f.Sync(); err != nil {
		fail(fmt.Errorf("storage: fsync of spare WAL segment %s: %w", s.path, err))
		return
	}
	// The spare's directory entry too: a roll acknowledges records in the
	// spare before its rename, and a restart finds them under this name.
	if err := syncDir(filepath.Dir(s.path)); err != nil {
		fail(fmt.Errorf("storage: spare WAL segment %s: %w", s.path, err))
		return
	}
	s.f = f
}

var errSpareStopped = fmt.Errorf("storage: filling the spare WAL segment was stopped")

// ready reports, without waiting, whether s is filled and usable. A nil
// spare is not ready.
func (s *spareSegment) ready() bool {
	if s == nil {
		return false
	}
	select {
	case <-s.done:
		return s.err == nil
	default:
		return false
	}
}

// filling reports whether s is still being filled.
func (s *spareSegment) filling() bool {
	if s == nil {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// discard stops the filling, waits for it and removes the file.
func (s *spareSegment) discard() {
	s.stop.Store(true)
	close(s.quit)
	<-s.done
	if s.f != nil {
		_ = s.f.Close()
		_ = os.Remove(s.path)
	}
}

// takeSpare hands over the spare's open file and its length if the spare is
// ready; the caller renames it into place. A spare whose filling failed is
// logged and preallocation stops for this WAL; one still filling stays.
func (w *WAL) takeSpare() (*os.File, int64) {
	s := w.spare
	if s == nil {
		return nil, 0
	}
	select {
	case <-s.done:
	default:
		return nil, 0
	}
	w.spare = nil
	if s.err != nil {
		w.logger.Warn("WAL segments will not be preallocated", "err", s.err)
		w.preallocAfter = -1
		return nil, 0
	}
	return s.f, s.size
}
