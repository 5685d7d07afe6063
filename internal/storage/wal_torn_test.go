package storage_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"strconv"
	"strings"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/paddockhq/paddock/internal/storage"
)

// emptyHardStateRecord is a valid 9-byte WAL record: an empty hard state
// (length 0, the CRC-32C of its type byte, type 2).
func emptyHardStateRecord() []byte {
	r := make([]byte, 9)
	r[8] = 2
	binary.BigEndian.PutUint32(r[4:], crc32.Checksum(r[8:], crc32.MakeTable(crc32.Castagnoli)))
	return r
}

// holdingRecord is entry i of term 1 whose data holds a valid record
// between two runs of other bytes.
func holdingRecord(i uint64) raftpb.Entry {
	d := append(bytes.Repeat([]byte("a"), 40), emptyHardStateRecord()...)
	d = append(d, bytes.Repeat([]byte("b"), 200)...)
	return raftpb.Entry{Index: i, Term: 1, Data: d}
}

// bigEntries returns entries lo..hi of term 1 with 300 bytes of data each.
func bigEntries(lo, hi uint64) []raftpb.Entry {
	var es []raftpb.Entry
	for i := lo; i <= hi; i++ {
		es = append(es, raftpb.Entry{Index: i, Term: 1, Data: bytes.Repeat([]byte{byte(i) | 0x80}, 300)})
	}
	return es
}

// buildBatch writes entries 1..5 with a hard state (one Save) and then
// last (another Save, not yet synced when a crash comes in the cases
// below) to a WAL in dir. It returns the segment, where each record of
// last starts, and where the last one ends.
func buildBatch(t *testing.T, dir string, last []raftpb.Entry) (path string, offs []int64, end int64) {
	t.Helper()
	w := openWAL(t, dir, 0)
	save(t, w, batch{hs: raftpb.HardState{Term: 1, Vote: 1, Commit: 5}, ents: ents(1, 5, 1)})
	path = w.SegmentPaths()[0]
	end = fileSize(t, path)
	save(t, w, batch{ents: last})
	for _, e := range last {
		offs = append(offs, end)
		end += 9 + int64(e.Size())
	}
	if got := fileSize(t, path); got != end {
		t.Fatalf("segment is %d bytes, want %d", got, end)
	}
	must(t, w.Close())
	return path, offs, end
}

// TestWALTornTailRecovery covers bad records in the last segment that
// earlier rules misjudged, and the damage that must still be corruption:
//   - A torn record (a kill -9 or a power loss in the middle of a write)
//     whose payload holds bytes that form a valid record is torn: what is
//     inside the bad record's own bytes is its payload, not a record after
//     it.
//   - A power loss can tear an unsynced write other than at its end: a
//     page (or a 512-byte sector) in the middle reads as zeros while a
//     later one of the same write reached the disk. A bad record whose
//     sectors include one that reads as zeros is torn, even with valid
//     records after it.
//   - A damaged record followed by records from later writes is corruption,
//     including one whose length field was damaged so that it seems to
//     reach past those records.
func TestWALTornTailRecovery(t *testing.T) {
	type built struct {
		offs []int64 // where the last batch's records start
		end  int64   // where it ends
	}
	tests := []struct {
		name   string
		last   []raftpb.Entry
		damage func(t *testing.T, b []byte, bt built) []byte
		// torn: the log keeps entries 1..keep and the file is cut
		// where entry keep+1 started. Otherwise corruption at the
		// record of entry keep+1.
		torn bool
		keep uint64
	}{
		{
			name: "cut inside a payload holding a record",
			last: []raftpb.Entry{holdingRecord(6)},
			damage: func(_ *testing.T, b []byte, bt built) []byte {
				return b[:bt.offs[0]+9+60] // past the record the data holds
			},
			torn: true, keep: 5,
		},
		{
			name: "cut inside a payload holding a record, zeros after",
			last: []raftpb.Entry{holdingRecord(6)},
			damage: func(_ *testing.T, b []byte, bt built) []byte {
				return append(b[:bt.offs[0]+9+60], make([]byte, 8192)...) // a preallocated segment
			},
			torn: true, keep: 5,
		},
		{
			name: "damaged end of a payload holding a record",
			last: []raftpb.Entry{holdingRecord(6)},
			damage: func(_ *testing.T, b []byte, bt built) []byte {
				b[bt.end-1] ^= 0x40
				return b
			},
			torn: true, keep: 5,
		},
		{
			name: "a page of an unsynced batch reads as zeros, a later one survived",
			last: bigEntries(6, 45),
			damage: func(t *testing.T, b []byte, bt built) []byte {
				return zeroBlock(t, b, bt.offs, bt.end, 4096)
			},
			torn: true,
		},
		{
			name: "a sector of an unsynced batch reads as zeros, a later one survived",
			last: bigEntries(6, 45),
			damage: func(t *testing.T, b []byte, bt built) []byte {
				return zeroBlock(t, b, bt.offs, bt.end, 512)
			},
			torn: true,
		},
		{
			name: "flipped byte before later records",
			last: bigEntries(6, 45),
			damage: func(_ *testing.T, b []byte, bt built) []byte {
				b[bt.offs[10]+40] ^= 0x01
				return b
			},
			keep: 15,
		},
		{
			name: "damaged payload holding a record before later records",
			last: []raftpb.Entry{holdingRecord(6), holdingRecord(7), holdingRecord(8)},
			damage: func(_ *testing.T, b []byte, bt built) []byte {
				b[bt.offs[1]+9+100] ^= 0x01
				return b
			},
			keep: 6,
		},
		{
			name: "length field reaching past later records to the end of the file",
			last: bigEntries(6, 45),
			damage: func(_ *testing.T, b []byte, bt built) []byte {
				binary.BigEndian.PutUint32(b[bt.offs[10]:], uint32(bt.end-bt.offs[10]-9-3))
				return b
			},
			keep: 15,
		},
		{
			// A preallocated segment: zeros follow the records, and the
			// damaged length reaches into them. The zeros must not make
			// it a torn write (rule 1): its checksum still matches its
			// bytes up to the next record, so it is a whole record with
			// a damaged length (rule 2), and the records after it were
			// acknowledged.
			name: "length field reaching past later records into preallocated zeros",
			last: bigEntries(6, 45),
			damage: func(_ *testing.T, b []byte, bt built) []byte {
				b = append(b, make([]byte, 8192)...)
				binary.BigEndian.PutUint32(b[bt.offs[10]:], uint32(bt.end-bt.offs[10]-9+2000))
				return b
			},
			keep: 15,
		},
		{
			name: "length field reaching past the end of the file",
			last: bigEntries(6, 45),
			damage: func(_ *testing.T, b []byte, bt built) []byte {
				binary.BigEndian.PutUint32(b[bt.offs[10]:], 1<<20)
				return b
			},
			keep: 15,
		},
		{
			name: "length field reaching into the next record",
			last: bigEntries(6, 45),
			damage: func(_ *testing.T, b []byte, bt built) []byte {
				n := binary.BigEndian.Uint32(b[bt.offs[10]:])
				binary.BigEndian.PutUint32(b[bt.offs[10]:], n+20)
				return b
			},
			keep: 15,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path, offs, end := buildBatch(t, dir, tt.last)
			b, err := os.ReadFile(path)
			must(t, err)
			b = tt.damage(t, b, built{offs: offs, end: end})
			must(t, os.WriteFile(path, b, 0o640))
			keep := tt.keep
			if tt.torn && keep == 0 {
				keep = keptBefore(t, b, offs)
			}
			at := offs[keep-5] // the record of entry keep+1

			_, torn, err := storage.ScanWAL(dir, func(*storage.WALRecord) error { return nil })
			w, oerr := storage.OpenWAL(dir, storage.WALOptions{Logger: testLogger(t)})
			if !tt.torn {
				for _, err := range []error{err, oerr} {
					checkCorrupt(t, err, path, at)
				}
				if got := fileSize(t, path); got != int64(len(b)) {
					t.Fatalf("a corrupt file was modified: %d bytes, was %d", got, len(b))
				}
				return
			}
			if err != nil || torn == nil || torn.Path != path || torn.Offset != at {
				t.Fatalf("ScanWAL: %v, torn tail %+v; want a torn tail at %s offset %d", err, torn, path, at)
			}
			if oerr != nil {
				t.Fatalf("OpenWAL: %v; want the torn tail at offset %d cut off", oerr, at)
			}
			defer w.Close()
			_, es := readEntries(t, w, 0)
			sameEntries(t, es, concat(ents(1, 5, 1), tt.last[:keep-5]))
			if got := fileSize(t, path); got != at {
				t.Fatalf("file is %d bytes after recovery, want %d", got, at)
			}
		})
	}
}

// zeroBlock zeros the first size-aligned block of b, size bytes, that
// starts after the first record of a batch (record starts offs, end end)
// and has a whole record of the batch after it.
func zeroBlock(t *testing.T, b []byte, offs []int64, end, size int64) []byte {
	t.Helper()
	p := (offs[0] + size) &^ (size - 1)
	if p+size > offs[len(offs)-2] {
		t.Fatalf("no whole record after the block %d..%d (batch %d..%d)", p, p+size, offs[0], end)
	}
	clear(b[p : p+size])
	return b
}

// keptBefore returns the index of the last entry (of the batch whose
// records start at offs, entries 6 on) whose record ends before the first
// zeroed bytes of b after offs[0]: where the log of a torn case ends.
func keptBefore(t *testing.T, b []byte, offs []int64) uint64 {
	t.Helper()
	q := offs[0] + int64(bytes.Index(b[offs[0]:], make([]byte, 8)))
	for k := 1; k < len(offs); k++ {
		if q < offs[k] {
			return uint64(4 + k)
		}
	}
	t.Fatal("no zeroed bytes in the batch")
	return 0
}

// checkCorrupt fails unless err is a *CorruptError naming path and off.
func checkCorrupt(t *testing.T, err error, path string, off int64) {
	t.Helper()
	var ce *storage.CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, storage.ErrCorrupt) {
		t.Fatalf("got %v, want a CorruptError", err)
	}
	if ce.Path != path || ce.Offset != off {
		t.Fatalf("error names %s offset %d, want %s offset %d", ce.Path, ce.Offset, path, off)
	}
	if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, strconv.FormatInt(off, 10)) {
		t.Fatalf("message %q does not name the file and offset", msg)
	}
}
