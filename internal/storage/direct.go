package storage

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"
	"unsafe"
)

// directAlign is the alignment direct I/O asks of buffers, file offsets and
// lengths: the page size, which covers every logical block size in use.
const directAlign = 4096

// directChunk is how many bytes a directWriter hands to the disk at a time.
const directChunk = 1 << 20

// snapshotSink is where SaveSnapshot writes a snapshot file's bytes, in
// order; finish writes out whatever it still holds.
type snapshotSink interface {
	io.Writer
	finish() error
}

// finish has nothing left to write: every Write went to the file.
func (w *writebackWriter) finish() error { return nil }

// newSnapshotSink returns the writer for a new snapshot file f: direct I/O
// where the system has it (Linux), else the page cache with writeback
// hints (writebackWriter).
func newSnapshotSink(f *os.File) snapshotSink {
	if setDirect != nil && setDirect(f, true) == nil {
		return newDirectWriter(f)
	}
	return &writebackWriter{w: f, sync: fileRangeSyncer(f)}
}

// directWriter writes a file with direct I/O (O_DIRECT): from an aligned
// buffer of its own straight to the disk, bypassing the page cache. A
// snapshot of a million znodes is hundreds of megabytes written every few
// seconds under a heavy write load; through the page cache each byte is
// copied into freshly allocated pages and written back later, which on this
// project's benchmark machine took 12 times the CPU (a 50 MiB snapshot: 158-172
// ms against 13-14 ms; docs/benchmarks.md), and the dirty pages compete with
// the WAL's fsyncs. Each directChunk is written synchronously, which paces the writer
// by the disk; like writebackWriter it then pauses writebackPause times as
// long as a slow write took, leaving the disk to the WAL.
//
// The file's last partial block is written through the page cache (direct
// I/O needs whole blocks), after finish turns direct I/O off. A filesystem
// that accepts the flag but refuses a direct write (EINVAL) gets the rest of
// the file through the page cache too. The caller fsyncs the file as usual:
// direct I/O leaves data in the disk's volatile cache, and the file's length
// and block map are metadata.
type directWriter struct {
	f     *os.File
	buf   []byte // directChunk bytes, aligned to directAlign
	n     int    // bytes buffered in buf
	off   int64  // file offset of buf[0]
	sleep func(time.Duration)
	// buffered is set once direct I/O is off: writes go through the page
	// cache from then on.
	buffered bool
	err      error
}

func newDirectWriter(f *os.File) *directWriter {
	return &directWriter{f: f, buf: alignedBuffer(directChunk)}
}

// alignedBuffer returns n bytes whose address is a multiple of directAlign
// (Go never moves heap memory, so it stays aligned).
func alignedBuffer(n int) []byte {
	b := make([]byte, n+directAlign)
	skip := (directAlign - int(uintptr(unsafe.Pointer(&b[0]))%directAlign)) % directAlign
	return b[skip : skip+n : skip+n]
}

func (w *directWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	written := 0
	for len(p) > 0 {
		k := copy(w.buf[w.n:], p)
		w.n += k
		p = p[k:]
		written += k
		if w.n == len(w.buf) {
			if err := w.writeOut(w.n); err != nil {
				w.err = err
				return written, err
			}
		}
	}
	return written, nil
}

// writeOut writes the first n buffered bytes (a multiple of directAlign
// unless direct I/O is off) at the writer's offset and keeps the rest.
func (w *directWriter) writeOut(n int) error {
	t0 := time.Now()
	_, err := w.f.WriteAt(w.buf[:n], w.off)
	if err != nil && !w.buffered && errors.Is(err, errInvalid) {
		// Direct I/O refused: go on through the page cache.
		if derr := setDirect(w.f, false); derr != nil {
			return derr
		}
		w.buffered = true
		_, err = w.f.WriteAt(w.buf[:n], w.off)
	}
	if err != nil {
		return err
	}
	w.off += int64(n)
	w.n = copy(w.buf, w.buf[n:w.n])
	if d := time.Since(t0); !w.buffered && d > time.Millisecond {
		sleep := w.sleep
		if sleep == nil {
			sleep = time.Sleep
		}
		sleep(writebackPause * d)
	}
	return nil
}

// finish writes the buffered bytes: the whole blocks directly, the last
// partial block through the page cache.
func (w *directWriter) finish() error {
	if w.err != nil {
		return w.err
	}
	if whole := w.n &^ (directAlign - 1); whole > 0 && !w.buffered {
		if err := w.writeOut(whole); err != nil {
			w.err = err
			return err
		}
	}
	if w.n > 0 {
		if !w.buffered {
			if err := setDirect(w.f, false); err != nil {
				w.err = err
				return err
			}
			w.buffered = true
		}
		if err := w.writeOut(w.n); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}

// readBuffer returns an n-byte buffer aligned for direct I/O, for
// readWhole, and the function that gives its memory back. Where the system
// can map anonymous memory (mapMemory) the buffer is outside the Go heap, so
// a snapshot's hundreds of megabytes leave the process as soon as it is
// decoded, instead of waiting for the collector and the scavenger. It is a
// variable so a test can hand readWhole a misaligned buffer.
var readBuffer = func(n int) ([]byte, func()) {
	if mapMemory != nil && n > 0 {
		if b, unmap, err := mapMemory(n); err == nil {
			return b, unmap
		}
	}
	return alignedBuffer(n), func() {}
}

// readWhole reads f, size bytes long, into a new buffer in one pass, and
// returns it with the function that releases it (after which the buffer
// must not be used). Where the system has direct I/O it reads with it:
// straight from the disk into the buffer, without copying through the page
// cache or filling it with pages nobody reads again (a snapshot is read
// whole once, at startup, and was written with direct I/O, so it is seldom
// cached anyway). A filesystem that refuses direct I/O gets an ordinary
// read.
func readWhole(f *os.File, size int64) (data []byte, release func(), err error) {
	buf, free := readBuffer(int((size + directAlign - 1) &^ (directAlign - 1)))
	defer func() {
		if err != nil {
			free()
		}
	}()
	// Go's os.File retries EINTR; a direct read can still be refused
	// (EINVAL) by a filesystem that took the flag, and is then done again
	// through the page cache.
	if setDirect != nil && setDirect(f, true) == nil {
		n, err := f.ReadAt(buf, 0)
		switch {
		case int64(n) == size && (err == nil || err == io.EOF):
			return buf[:size:size], free, nil
		case err == nil || err == io.EOF:
			return nil, nil, fmt.Errorf("%s ended after %d of its %d bytes", f.Name(), n, size)
		case !errors.Is(err, errInvalid):
			return nil, nil, err
		}
		if err := setDirect(f, false); err != nil {
			return nil, nil, err
		}
	}
	buf = buf[:size:size]
	if n, err := io.ReadFull(io.NewSectionReader(f, 0, size), buf); err != nil {
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			return nil, nil, fmt.Errorf("%s ended after %d of its %d bytes", f.Name(), n, size)
		}
		return nil, nil, err
	}
	return buf, free, nil
}
