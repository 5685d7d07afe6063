package storage

import (
	"io"
	"time"
)

// writebackChunk is how many bytes of a snapshot are written before the
// kernel is asked to start writing them to disk.
const writebackChunk = 1 << 20

// writebackPause is how many times the wait for a chunk the writer pauses
// after it: 3 leaves the disk to others three quarters of the time.
const writebackPause = 3

// Flags of rangeSyncer calls, as sync_file_range(2) takes them.
const (
	rangeWaitBefore = 1 // SYNC_FILE_RANGE_WAIT_BEFORE
	rangeWrite      = 2 // SYNC_FILE_RANGE_WRITE
	rangeWaitAfter  = 4 // SYNC_FILE_RANGE_WAIT_AFTER
)

// rangeSyncer starts or waits for the writeback of a byte range of a file,
// as sync_file_range(2). It is advisory: the final fsync is what makes the
// file durable.
type rangeSyncer func(off, n int64, flags int) error

// writebackWriter writes a large file (a snapshot) so that its dirty pages
// never pile up: every writebackChunk bytes it starts the writeback of the
// chunk just written and waits for the chunk before it. Without this the
// whole file (hundreds of megabytes for millions of znodes) stays dirty in
// the page cache until the final fsync, which then fills the disk's queue
// for seconds, and the WAL's fsyncs, which every acknowledged write waits
// for, queue behind it. With it the final fsync has at most two chunks left
// to write, and the writer is paced by the disk rather than racing ahead.
//
// It also leaves most of the disk's time to others: after waiting for a
// chunk it pauses writebackPause times as long as the wait took, so a
// snapshot written while the disk is busy takes about four times its disk
// time but never holds the disk for more than a chunk or two at a time.
// When the disk keeps up there is no wait and no pause.
type writebackWriter struct {
	w     io.Writer
	sync  rangeSyncer         // nil: no writeback hints on this system
	sleep func(time.Duration) // nil: time.Sleep

	off     int64 // bytes written so far
	started int64 // end of the ranges handed to writeback
	waited  int64 // end of the ranges waited for
}

func (w *writebackWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.off += int64(n)
	if err == nil && w.sync != nil && w.off-w.started >= writebackChunk {
		// Wait for the previous chunk, then start this one. A failure (a
		// file system without sync_file_range) only turns the hints off.
		if w.started > w.waited {
			t0 := time.Now()
			if w.sync(w.waited, w.started-w.waited, rangeWaitBefore|rangeWrite|rangeWaitAfter) != nil {
				w.sync = nil
				return n, nil
			}
			w.waited = w.started
			if d := time.Since(t0); d > time.Millisecond {
				sleep := w.sleep
				if sleep == nil {
					sleep = time.Sleep
				}
				sleep(writebackPause * d)
			}
		}
		if w.sync(w.started, w.off-w.started, rangeWrite) != nil {
			w.sync = nil
			return n, nil
		}
		w.started = w.off
	}
	return n, err
}
