package storage

import (
	"errors"
	"fmt"
)

// directTail is how the WAL appends to a preallocated segment with direct
// I/O (O_DIRECT) where the system has it. Appends are staged in an aligned
// buffer of the WAL's own and written from the start of the page the
// segment's durable part ends in to the end of the page the staged bytes end
// in, so every write covers whole pages at a page-aligned offset, as direct
// I/O needs. The first part of that first page was written before; it is
// written again with the same bytes (kept in the buffer), and the rest of
// the last page is zeros, as it is on disk already (see WAL.padded), so a
// torn write can damage only the new records, which recovery then cuts off
// as a torn tail.
//
// An append that needs no fsync (a hard state whose commit index alone
// changed) is only staged: it goes out with the next append that is
// synced, the next roll or Close. Through the page cache it would have
// been written there and reached the disk with the next fsync, so a crash
// of the machine could lose it; now a crash of the process can too. That
// loses no acknowledged write: the entries are durable, and a restarted
// member learns the commit index again from raft (a leader at once, a
// follower from the leader) and refuses, as before, a client that has
// seen a later zxid than it has applied.
//
// Why: through the page cache every byte of the log is copied into a
// freshly allocated page and written back by the fsync; a perf profile of a
// 3-member ensemble under the multi workload (30 MB/s of log per member)
// found 11-13% of the members' CPU in that copy alone
// (docs/benchmarks.md).
type directTail struct {
	buf  []byte // aligned to directAlign
	head int    // buf[:head]: the written part of the segment's last page
	pend int    // buf[head:head+pend]: staged, not yet written
}

// directBufferSize is the size of a directTail's buffer to begin with, and
// the size it goes back to after a large batch.
const directBufferSize = 64 << 10

// maxStaged bounds the bytes staged without a write.
const maxStaged = 16 << 10

// startDirect turns direct appends on for the current segment if it is
// preallocated and the system allows it. tail is the written part of the
// page the segment's records end in (everything from that page's start to
// w.size).
func (w *WAL) startDirect(tail []byte) {
	w.dt = nil
	if w.prealloc == 0 || setDirect == nil || w.noDirect || int64(len(tail)) != w.size%directAlign {
		return
	}
	if setDirect(w.f, true) != nil {
		return
	}
	dt := &directTail{buf: alignedBuffer(directBufferSize)}
	dt.head = copy(dt.buf, tail)
	w.dt = dt
}

// stage adds b to the bytes waiting to be written.
func (dt *directTail) stage(b []byte) {
	need := dt.head + dt.pend + len(b)
	if total := roundUp(need); total > len(dt.buf) {
		nb := alignedBuffer(max(total, 2*len(dt.buf)))
		copy(nb, dt.buf[:dt.head+dt.pend])
		dt.buf = nb
	}
	copy(dt.buf[dt.head+dt.pend:], b)
	dt.pend += len(b)
}

// roundUp rounds n up to a multiple of directAlign.
func roundUp(n int) int { return (n + directAlign - 1) &^ (directAlign - 1) }

// flushDirect writes what is staged. Where direct I/O cannot take it (the
// write would reach past the preallocation's last whole page, or the
// filesystem refuses direct writes) it turns direct appends off for the
// segment and writes the staged bytes through the page cache.
func (w *WAL) flushDirect() error {
	dt := w.dt
	if dt == nil || dt.pend == 0 {
		return nil
	}
	need := dt.head + dt.pend
	start := w.size - int64(need)
	if total := roundUp(need); start+int64(total) <= w.prealloc&^(directAlign-1) {
		clear(dt.buf[need:total])
		_, err := w.f.WriteAt(dt.buf[:total], start)
		if err == nil {
			whole := need &^ (directAlign - 1)
			dt.head, dt.pend = copy(dt.buf, dt.buf[whole:need]), 0
			if len(dt.buf) > directBufferSize {
				nb := alignedBuffer(directBufferSize)
				dt.head = copy(nb, dt.buf[:dt.head])
				dt.buf = nb
			}
			return nil
		}
		if !errors.Is(err, errInvalid) {
			return fmt.Errorf("storage: appending to WAL segment %s: %w", w.f.Name(), err)
		}
		w.noDirect = true
	}
	staged := dt.buf[dt.head:need]
	w.dt = nil
	if err := setDirect(w.f, false); err != nil {
		return fmt.Errorf("storage: WAL segment %s: turning off direct I/O: %w", w.f.Name(), err)
	}
	off := w.size - int64(len(staged))
	if _, err := w.f.WriteAt(w.padded(staged, off), off); err != nil {
		return fmt.Errorf("storage: appending to WAL segment %s: %w", w.f.Name(), err)
	}
	return nil
}
