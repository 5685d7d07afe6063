package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
)

// A roll into a ready spare segment (rollToSpare) keeps the file system's
// metadata off the append path. The new segment's header goes out with the
// first records appended to it, in one write and one fsync; only then, on a
// goroutine of its own (pendingRoll), is the previous segment cut to its
// records and closed, and the spare renamed into place and the directory
// synced. Those are the slow part of a roll: on the disk of
// docs/benchmarks.md a roll that did them in line, after an fsync of the
// header of its own, held the appends up for 0.8-10.5 ms.
//
// Until the rename is durable the live segment is still called
// spare.wal.tmp, so a crash can leave it under that name; OpenWAL then
// adopts it (adoptSpare) when its header is valid and names the segment
// after the last one, and removes it as an unfinished spare otherwise. A
// header is valid only once the roll's first fsync is done, and nothing
// the segment holds was acknowledged before that fsync, so removing a spare
// with no valid header loses nothing. Until the rename is durable the WAL
// also neither fills the next spare (it would take the same name) nor
// releases segments (the previous one holds the hard state a restart needs
// if the spare were lost).

// pendingRoll is what is left of a roll into a spare once the new segment's
// first fsync is done.
type pendingRoll struct {
	old     *os.File // the previous segment
	cut     int64    // the length to cut old to, -1 to leave it
	tmp     string   // the spare's name, the new segment's until the rename
	final   string   // the new segment's name
	started bool
	done    chan struct{} // closed when run returned (never if not started)
	err     error         // run's, set before done is closed
	hook    func()        // tests: runs first in the background
}

// start runs the rest of the roll in the background.
func (p *pendingRoll) start(dir string, logger *slog.Logger) {
	p.started = true
	go func() {
		defer close(p.done)
		p.err = p.run(dir, logger)
	}()
}

// run cuts and closes the previous segment and renames the new one into
// place, durably.
func (p *pendingRoll) run(dir string, logger *slog.Logger) error {
	if p.hook != nil {
		p.hook()
	}
	if p.cut >= 0 {
		// Give back the unused preallocation. Not synced: if a crash
		// undoes the cut, the zeros read as the end of the segment.
		if err := p.old.Truncate(p.cut); err != nil {
			logger.Warn("could not cut the unused end of a WAL segment", "path", p.old.Name(), "err", err)
		}
	}
	if err := p.old.Close(); err != nil {
		return fmt.Errorf("storage: closing WAL segment %s: %w", p.old.Name(), err)
	}
	if err := os.Rename(p.tmp, p.final); err != nil {
		return fmt.Errorf("storage: renaming the spare WAL segment to %s: %w", p.final, err)
	}
	return syncDir(dir)
}

// finished reports, without waiting, whether the background part is done.
func (p *pendingRoll) finished() bool {
	if !p.started {
		return false
	}
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits for the background part of a started roll.
func (p *pendingRoll) wait() error {
	<-p.done
	return p.err
}

// rollToSpare starts the next segment in the ready spare. The caller (write)
// appends its records and fsyncs, and then starts the pending roll.
func (w *WAL) rollToSpare() error {
	cur := w.segs[len(w.segs)-1]
	s := segment{seq: cur.seq + 1, first: w.lastIndex + 1}
	s.path = filepath.Join(w.dir, segmentName(s.seq, s.first))
	b, err := w.segmentStart(s.seq, s.first)
	if err != nil {
		return err
	}
	f, alloc := w.takeSpare()
	if f == nil {
		return errors.New("storage: rolling the WAL: the spare segment is not ready") // ready() said it was
	}
	p := &pendingRoll{old: w.f, cut: -1, tmp: f.Name(), final: s.path, done: make(chan struct{}), hook: w.rollHook}
	if w.prealloc > w.size {
		p.cut = w.size
	}
	w.f, w.size, w.prealloc = f, 0, alloc
	w.startDirect(nil)
	if w.dt != nil {
		w.dt.stage(b)
	} else if _, err := f.WriteAt(b, 0); err != nil {
		_ = p.old.Close()
		return fmt.Errorf("storage: writing WAL segment header to %s: %w", f.Name(), err)
	}
	w.size = int64(len(b))
	w.written.Add(uint64(len(b)))
	w.unsynced = true
	w.segs = append(w.segs, s)
	w.segCount.Store(int64(len(w.segs)))
	w.pending = p
	w.logger.Info("started WAL segment", "path", s.path, "previous", cur.path)
	return nil
}

// finishRoll waits until the last roll into a spare is complete: the new
// segment durable under its own name. It starts the background part first
// if the new segment was never synced (write syncs it at once, so only
// after a failed write).
func (w *WAL) finishRoll() error {
	p := w.pending
	if p == nil {
		return nil
	}
	if !p.started {
		if err := w.flushDirect(); err != nil {
			w.err = err
			return err
		}
		if err := w.sync(); err != nil {
			return err
		}
		p.start(w.dir, w.logger)
	}
	w.pending = nil
	if err := p.wait(); err != nil {
		w.err = err
		return err
	}
	return nil
}

// adoptSpare renames into place a spare segment that a roll had begun
// appending to when the process stopped, before its rename reached the
// disk (see liveSpare).
func (w *WAL) adoptSpare() error {
	segs, err := listSegments(w.dir)
	if err != nil {
		return err
	}
	spare, ok, err := liveSpare(w.dir, segs)
	if err != nil || !ok {
		return err
	}
	final := filepath.Join(w.dir, segmentName(spare.seq, spare.first))
	if err := os.Rename(spare.path, final); err != nil {
		return fmt.Errorf("storage: renaming the spare WAL segment to %s: %w", final, err)
	}
	if err := syncDir(w.dir); err != nil {
		return err
	}
	w.logger.Info("adopted a WAL segment whose rename had not reached the disk", "path", final)
	return nil
}

// liveSpare reports whether the spare segment file in dir is a live
// segment: its header is valid and names the segment after the last of
// segs (dir's segments, as listSegments lists them).
// A spare without a valid header is an unfinished one (removeTempSegments
// deletes it). One whose valid header names any other segment is damage,
// reported as a *CorruptError rather than deleted with its records.
func liveSpare(dir string, segs []segment) (segment, bool, error) {
	path := filepath.Join(dir, spareName)
	h, err := readFilePrefix(path, segmentHeaderLen)
	if errors.Is(err, fs.ErrNotExist) {
		return segment{}, false, nil
	}
	if err != nil {
		return segment{}, false, fmt.Errorf("storage: reading the spare WAL segment %s: %w", path, err)
	}
	if len(h) < segmentHeaderLen || string(h[:8]) != walMagic ||
		crc32.Checksum(h[:32], castagnoli) != binary.BigEndian.Uint32(h[32:]) {
		return segment{}, false, nil
	}
	s := segment{seq: binary.BigEndian.Uint64(h[16:]), first: binary.BigEndian.Uint64(h[24:]), path: path}
	if n := len(segs); n > 0 && s.seq != segs[n-1].seq+1 {
		return segment{}, false, &CorruptError{Path: path, Offset: 16, Err: fmt.Errorf(
			"the spare segment's header says segment %d, but the last segment is %d (%s)",
			s.seq, segs[n-1].seq, filepath.Base(segs[n-1].path))}
	}
	return s, true, nil
}
