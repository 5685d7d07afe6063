//go:build linux

package storage

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"go.etcd.io/raft/v3/raftpb"
	"golang.org/x/sys/unix"
)

// TestDirectWriterContent writes files of awkward sizes through a
// directWriter in uneven pieces and reads them back: whole chunks, whole
// blocks and the partial last block must all land at their offsets.
func TestDirectWriterContent(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, 4095, 4096, 4097, directChunk - 1, directChunk, directChunk + 1, 3*directChunk + 12345} {
		want := make([]byte, size)
		for i := range want {
			want[i] = byte(rng.IntN(256))
		}
		path := filepath.Join(dir, "snap")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w := newSnapshotSink(f)
		for p := want; len(p) > 0; {
			k := min(len(p), 1+rng.IntN(300<<10))
			if n, err := w.Write(p[:k]); n != k || err != nil {
				t.Fatalf("size %d: Write = %d, %v", size, n, err)
			}
			p = p[k:]
		}
		if err := w.finish(); err != nil {
			t.Fatalf("size %d: finish: %v", size, err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("size %d: read back %d bytes that differ from the %d written", size, len(got), len(want))
		}
	}
}

// TestSnapshotSinkUsesDirectIO checks that a snapshot file is written with
// O_DIRECT when the filesystem takes it, and that finish turns it off for
// the last partial block.
func TestSnapshotSinkUsesDirectIO(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "snap"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	probe, err := os.Create(filepath.Join(t.TempDir(), "probe"))
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	supported := setDirect(probe, true) == nil
	w := newSnapshotSink(f)
	dw, isDirect := w.(*directWriter)
	if isDirect != supported {
		t.Fatalf("sink %T on a filesystem where O_DIRECT can be set: %v", w, supported)
	}
	if !supported {
		t.Log("this filesystem refuses O_DIRECT: snapshots go through the page cache")
		return
	}
	if !directFlag(t, f) {
		t.Fatal("O_DIRECT is not set on the snapshot file")
	}
	if _, err := w.Write(make([]byte, directChunk+10)); err != nil {
		t.Fatal(err)
	}
	if dw.buffered || dw.off != directChunk {
		t.Fatalf("after a full chunk: buffered %v, offset %d; want a direct write of %d bytes", dw.buffered, dw.off, directChunk)
	}
	if err := w.finish(); err != nil {
		t.Fatal(err)
	}
	if directFlag(t, f) {
		t.Fatal("O_DIRECT still set after the partial last block")
	}
}

// TestDirectWriterFallsBack checks that a direct write the filesystem
// refuses (here: an unaligned offset, EINVAL) is done through the page
// cache instead, and the rest of the file too.
func TestDirectWriterFallsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "snap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte{7}, 0); err != nil {
		t.Fatal(err)
	}
	if setDirect(f, true) != nil {
		t.Log("this filesystem refuses O_DIRECT: nothing to fall back from")
		return
	}
	w := newDirectWriter(f)
	w.off = 1 // unaligned: a direct write there fails with EINVAL
	want := bytes.Repeat([]byte("paddock!"), (2*directChunk+100)/8)
	if _, err := w.Write(want); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if err := w.finish(); err != nil {
		t.Fatalf("finish: %v", err)
	}
	if !w.buffered {
		t.Fatal("the writer did not fall back to the page cache")
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != 7 || !bytes.Equal(got[1:], want) {
		t.Fatalf("read back %d bytes that differ from the %d written after the first", len(got), len(want))
	}
}

// directFlag reports whether f has O_DIRECT set.
func directFlag(t *testing.T, f *os.File) bool {
	t.Helper()
	flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	return flags&unix.O_DIRECT != 0
}

// TestReadWhole reads files of awkward sizes back whole, with direct I/O
// where the filesystem takes it.
func TestReadWhole(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, size := range []int{0, 1, 4095, 4096, 4097, directChunk + 1, 3*directChunk + 12345} {
		want := make([]byte, size)
		for i := range want {
			want[i] = byte(rng.IntN(256))
		}
		path := filepath.Join(dir, "whole")
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		got, release, err := readWhole(f, int64(size))
		f.Close()
		if err != nil {
			t.Fatalf("size %d: readWhole: %v", size, err)
		}
		if !bytes.Equal(got, want) || len(got) != cap(got) {
			t.Fatalf("size %d: read %d bytes (capacity %d) that differ from the %d written", size, len(got), cap(got), size)
		}
		release()
	}
}

// TestReadWholeBypassesPageCache checks that a snapshot read at startup
// does not fill the page cache: with the file's pages evicted, reading it
// with readWhole leaves them out, where an ordinary read brings them in.
func TestReadWholeBypassesPageCache(t *testing.T) {
	want := bytes.Repeat([]byte("0123456789abcdef"), (8<<20)/16)
	path, f := writeFile(t, want)
	if setDirect(f, true) != nil || setDirect(f, false) != nil {
		t.Fatal("this filesystem refuses O_DIRECT; the data directory's filesystem (ext4 on CI) takes it")
	}
	evict(t, path)
	if n := resident(t, path); n != 0 {
		t.Fatalf("%d pages still cached after fsync and FADV_DONTNEED", n)
	}
	got, release, err := readWhole(f, int64(len(want)))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("readWhole: %d bytes, %v", len(got), err)
	}
	release()
	if n := resident(t, path); n != 0 {
		t.Fatalf("readWhole left %d of the file's pages in the page cache", n)
	}
	if _, err := os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	if n := resident(t, path); n == 0 {
		t.Fatal("an ordinary read left no page cached either: the check measures nothing")
	}
}

// TestReadWholeFallsBack checks that a direct read the filesystem refuses
// (here: a misaligned buffer, EINVAL) is done again through the page cache.
func TestReadWholeFallsBack(t *testing.T) {
	want := bytes.Repeat([]byte("paddock!"), (directChunk+100)/8)
	_, f := writeFile(t, want)
	refused := false
	defer func(orig func(int) ([]byte, func())) { readBuffer = orig }(readBuffer)
	readBuffer = func(n int) ([]byte, func()) {
		refused = true
		return alignedBuffer(n + 1)[1:], func() {} // misaligned: the read fails with EINVAL
	}
	got, _, err := readWhole(f, int64(len(want)))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("readWhole: %d bytes, %v", len(got), err)
	}
	if !refused {
		t.Fatal("readWhole never tried direct I/O")
	}
	if directFlag(t, f) {
		t.Fatal("O_DIRECT still set after the fallback")
	}
}

// TestReadWholeShortFile checks that a file shorter than the size asked
// for is an error, not a buffer with zeros at its end.
func TestReadWholeShortFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "snap")
	if err := os.WriteFile(path, make([]byte, 10000), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, _, err := readWhole(f, 20000); err == nil || !strings.Contains(err.Error(), "10000 of its 20000") {
		t.Fatalf("readWhole of a short file = %v, want an error naming both lengths", err)
	}
}

// evict writes path's pages back and drops them from the page cache.
func evict(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
}

// resident counts path's pages in the page cache (mincore(2)).
func resident(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// TestReadWholeOutsideGoHeap checks that readWhole's buffer is not Go heap
// (so a snapshot's memory leaves the process when released, not when the
// collector and scavenger get to it).
func TestReadWholeOutsideGoHeap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "snap")
	const size = 32 << 20
	if err := os.WriteFile(path, bytes.Repeat([]byte{0xa5}, size), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, release, err := readWhole(f, size)
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got[0] != 0xa5 || got[size-1] != 0xa5 || len(got) != size {
		t.Fatalf("read %d bytes, ends %#x %#x", len(got), got[0], got[size-1])
	}
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > size/4 {
		t.Fatalf("the Go heap grew by %d bytes reading %d: the buffer is Go heap", grew, size)
	}
	release()
}

// writeFile writes data to a new file and opens it for reading; the file is
// closed when the test ends.
func writeFile(t *testing.T, data []byte) (string, *os.File) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "snap")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return path, f
}

// fillSpare fills a spare of size bytes and returns its path and file.
func fillSpare(t *testing.T, size int64) (string, *os.File) {
	t.Helper()
	path := filepath.Join(t.TempDir(), spareName)
	s := startSpare(path, size, nil)
	<-s.done
	if s.err != nil {
		t.Fatalf("filling a %d-byte spare: %v", size, s.err)
	}
	t.Cleanup(func() { s.f.Close() })
	return path, s.f
}

// TestSpareBypassesPageCache checks that a spare segment's zeros go to
// the disk without passing through the page cache (and without leaving 64
// MiB of cached pages per segment), that the file is zeros of the asked
// size, and that the WAL gets it back with direct I/O off.
func TestSpareBypassesPageCache(t *testing.T) {
	const size = 4 << 20
	path, f := fillSpare(t, size)
	if n := resident(t, path); n != 0 {
		t.Fatalf("filling the spare left %d of its %d pages in the page cache", n, size/os.Getpagesize())
	}
	if directFlag(t, f) {
		t.Fatal("the filled spare still has O_DIRECT set: the WAL's small appends would fail")
	}
	got, err := os.ReadFile(path)
	if err != nil || len(got) != size || !bytes.Equal(got, make([]byte, size)) {
		t.Fatalf("spare: %d bytes (want %d zeros), %v", len(got), size, err)
	}
	// The check can tell: an ordinary write leaves pages cached.
	if _, err := f.WriteAt([]byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	if resident(t, path) == 0 {
		t.Fatal("a buffered write left no page cached either: the check measures nothing")
	}
}

// TestSpareOddSizes fills spares whose size ends inside a block or a chunk:
// the tail goes through the page cache, and the file is all zeros.
func TestSpareOddSizes(t *testing.T) {
	for _, size := range []int64{1, 4095, spareChunk + 4096, spareChunk + 100, 3*spareChunk - 1} {
		path, f := fillSpare(t, size)
		got, err := os.ReadFile(path)
		if err != nil || int64(len(got)) != size || !bytes.Equal(got, make([]byte, size)) {
			t.Fatalf("size %d: %d bytes, %v", size, len(got), err)
		}
		if directFlag(t, f) {
			t.Fatalf("size %d: O_DIRECT still set", size)
		}
	}
}

// threadReadBytes is how many bytes the calling OS thread has had read from
// the disk (page cache hits do not count).
func threadReadBytes(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/thread-self/io")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "read_bytes: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no read_bytes in /proc/thread-self/io")
	return 0
}

// TestBufferedAppendsToSpareDoNotReadDisk checks that appends through the
// page cache to a preallocated segment (where direct I/O is refused), whose
// zeros were written around the page cache, never wait for the kernel to
// read a page from the disk: each append is padded with zeros to the end of
// its last page. Without the padding the first small append into every page
// reads that page first.
func TestBufferedAppendsToSpareDoNotReadDisk(t *testing.T) {
	runtime.LockOSThread() // the counter is the thread's
	defer runtime.UnlockOSThread()
	w, index := moveToSpare(t, t.TempDir(), 8<<20, true) // as on a filesystem without direct I/O
	defer w.Close()
	data := make([]byte, 300)
	saveOne := func() {
		t.Helper()
		if err := w.Save(raftpb.HardState{Term: 1, Commit: index}, []raftpb.Entry{{Index: index, Term: 1, Data: data}}); err != nil {
			t.Fatal(err)
		}
		index++
	}
	if w.dt != nil {
		t.Fatal("direct appends on the preallocated segment: want appends through the page cache")
	}
	path := w.segs[len(w.segs)-1].path // w.f still has the spare's name
	if n := resident(t, path); n > 2 {
		t.Fatalf("%d pages of the new segment are cached already: the check would measure nothing", n)
	}
	before := threadReadBytes(t)
	const saves = 200 // about 16 pages of records
	for range saves {
		saveOne()
	}
	if read := threadReadBytes(t) - before; read != 0 {
		t.Errorf("%d appends of %d bytes read %d bytes from the disk, want none", saves, len(data), read)
	}

	// The check can tell: a small buffered write into an uncached page of
	// the same file reads that page.
	far := (w.prealloc - 8*directAlign) &^ (directAlign - 1)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	before = threadReadBytes(t)
	if _, err := f.WriteAt([]byte{0}, far+10); err != nil {
		t.Fatal(err)
	}
	if threadReadBytes(t) == before {
		t.Fatal("a one-byte write into an uncached page read nothing: the check measures nothing")
	}
}

// moveToSpare opens a WAL in dir that preallocates at once, and returns it
// appending to its first preallocated segment, after entries 1..n-1;
// noDirect makes it append through the page cache, as where direct I/O is
// refused.
func moveToSpare(t *testing.T, dir string, segBytes int64, noDirect bool) (*WAL, uint64) {
	t.Helper()
	w, err := OpenWAL(dir, WALOptions{SegmentBytes: segBytes, PreallocateAfter: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.noDirect = noDirect
	if err := w.Save(raftpb.HardState{Term: 1}, []raftpb.Entry{{Index: 1, Term: 1, Data: []byte("one")}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !w.spare.ready() {
		if time.Now().After(deadline) {
			t.Fatal("the spare segment was not filled within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	if err := w.Save(raftpb.HardState{Term: 1, Commit: 1}, []raftpb.Entry{{Index: 2, Term: 1, Data: []byte("two")}}); err != nil {
		t.Fatal(err)
	}
	if w.prealloc == 0 {
		t.Fatal("the WAL did not move to the preallocated spare")
	}
	if err := w.finishRoll(); err != nil { // the tests open the segment by its name
		t.Fatal(err)
	}
	return w, 3
}

// entryData is the payload of entry i in the direct-append tests: sizes
// from a few bytes to past the staging buffer's first size.
func entryData(i uint64) []byte {
	n := int(i*131) % 5000
	if i%97 == 0 {
		n = directBufferSize + 3000
	}
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(i) ^ byte(j)
	}
	return b
}

// smallData is entryData without the payloads past the staging buffer.
func smallData(i uint64) []byte { return entryData(i % 96) }

// checkLog reopens dir and requires entries 1..last, those from 3 on with
// the payloads data gives, and the hard state's commit index.
func checkLog(t *testing.T, dir string, last, commit uint64, data func(uint64) []byte) {
	t.Helper()
	w, err := OpenWAL(dir, WALOptions{PreallocateAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	hs, ents, _, err := w.ReadAll(0)
	if err != nil {
		t.Fatal(err)
	}
	if uint64(len(ents)) != last {
		t.Fatalf("reopened: %d entries, want %d", len(ents), last)
	}
	for _, e := range ents[2:] {
		if !bytes.Equal(e.Data, data(e.Index)) {
			t.Fatalf("entry %d: %d bytes, not what was written", e.Index, len(e.Data))
		}
	}
	if hs.Commit != commit {
		t.Fatalf("reopened: commit %d, want %d", hs.Commit, commit)
	}
}

// TestDirectAppends checks that appends to a preallocated segment go to the
// disk with direct I/O (leaving none of the segment's pages in the page
// cache, which appends through it would fill), of every size, across pages
// and past the staging buffer, and read back whole after a close, after a
// reopen that goes on appending (direct again), and without a close.
func TestDirectAppends(t *testing.T) {
	dir := t.TempDir()
	w, next := moveToSpare(t, dir, 16<<20, false)
	if w.dt == nil {
		t.Fatal("no direct appends on the preallocated segment")
	}
	path := w.segs[len(w.segs)-1].path
	save := func(w *WAL, n int) {
		t.Helper()
		for range n {
			if err := w.Save(raftpb.HardState{Term: 1, Commit: next - 1}, []raftpb.Entry{{Index: next, Term: 1, Data: entryData(next)}}); err != nil {
				t.Fatal(err)
			}
			next++
		}
	}
	save(w, 300)
	if w.dt == nil {
		t.Fatal("direct appends were turned off")
	}
	if n := resident(t, path); n != 0 {
		t.Fatalf("%d pages of the segment are in the page cache after direct appends, want none", n)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	checkLog(t, dir, next-1, next-2, entryData)

	w, err := OpenWAL(dir, WALOptions{SegmentBytes: 16 << 20, PreallocateAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := w.ReadAll(0); err != nil {
		t.Fatal(err)
	}
	if w.dt == nil {
		t.Fatal("reopened on a preallocated segment: no direct appends")
	}
	save(w, 150)
	// No Close: as after kill -9, the synced appends are all there (the
	// last commit-only change may not be).
	crashed := t.TempDir()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if de.Name() == spareName {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(crashed, de.Name()), b, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	checkLog(t, crashed, next-1, next-2, entryData)
	w.Close()
}

// TestDirectAppendsStageCommitOnly checks that a hard state whose commit
// index alone changed waits in the staging buffer (it needs no fsync), goes
// out with the next synced append, and is written by Close.
func TestDirectAppendsStageCommitOnly(t *testing.T) {
	dir := t.TempDir()
	w, next := moveToSpare(t, dir, 16<<20, false)
	path := w.segs[len(w.segs)-1].path
	written := func() []byte {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	before := written()
	if err := w.Save(raftpb.HardState{Term: 1, Commit: 2}, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(written(), before) {
		t.Fatal("a commit-only hard state was written at once")
	}
	if err := w.Save(raftpb.HardState{Term: 1, Commit: 2}, []raftpb.Entry{{Index: next, Term: 1, Data: entryData(next)}}); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(written(), before) {
		t.Fatal("a synced append was not written")
	}
	if err := w.Save(raftpb.HardState{Term: 1, Commit: next}, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	checkLog(t, dir, next, next, entryData)
}

// TestDirectAppendsFallBack checks that appends that would reach past the
// last whole page of the preallocation go through the page cache, and that
// the log reads back whole after the segment fills and the WAL moves on
// (once the next spare is ready: until then the segment grows past its
// preallocation).
func TestDirectAppendsFallBack(t *testing.T) {
	dir := t.TempDir()
	w, next := moveToSpare(t, dir, 16<<20, false)
	// Pretend the preallocation ends inside a page, three pages on.
	w.prealloc = w.size&^(directAlign-1) + 3*directAlign - 100
	save := func() {
		t.Helper()
		if err := w.Save(raftpb.HardState{Term: 1, Commit: next - 1}, []raftpb.Entry{{Index: next, Term: 1, Data: smallData(next)}}); err != nil {
			t.Fatal(err)
		}
		next++
	}
	for i := 0; w.dt != nil; i++ {
		if i > 1000 {
			t.Fatalf("after %d appends the segment is still appended to directly", i)
		}
		save()
	}
	if len(w.segs) != 2 {
		t.Fatalf("%d segments once the appends left direct I/O, want 2", len(w.segs))
	}
	// Through the page cache until the WAL moves on.
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; len(w.segs) < 3; i++ {
		if i > 1000 && time.Now().After(deadline) {
			t.Fatalf("after %d more appends: %d segments", i, len(w.segs))
		}
		if i > 1000 {
			time.Sleep(time.Millisecond) // the next spare is still being filled
		}
		save()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	checkLog(t, dir, next-1, next-2, smallData)
}
