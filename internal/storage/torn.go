package storage

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// A record of the last segment that does not decode is either a torn write
// (the process or the machine stopped while it was being written, before
// the fsync that would have acknowledged it), which recovery cuts off, or
// damage to data that was acknowledged, which it must refuse. tailDamage
// tells them apart; OpenWAL and ScanWAL both use it.
//
// What a crash leaves: a kill -9 stops a write after some of its pages,
// so the segment ends inside the record, or, in a preallocated segment,
// zeros follow. A power loss can lose any of the pages (or 512-byte
// sectors) of the writes since the last fsync, not only the last ones: a
// lost sector reads as what it held before, zeros (every byte after the
// last fsync's end was zero, in a spare as past the end of a file), while
// a later sector of the same write may have reached the disk with whole
// records in it. Damage, by contrast, leaves records of later writes intact
// after the bad one.
//
// The rules, in order, for the bad record at off:
//
//  1. If its header is plausible (the length within bounds, a known type),
//     what lies inside the length it declares is its payload: a valid
//     record there is ignored (entry data can hold anything, records
//     included), unless the bad record's checksum matches the bytes up to
//     that record, which makes it a whole record whose length field was
//     damaged: corruption. This comes first: a damaged length can reach
//     past the records after it into a preallocated segment's zeros,
//     which rule 2 would take for a torn write (and cut acknowledged
//     records); a torn record's checksum cannot match a prefix of its
//     bytes that ends where a valid record starts but by chance (2^-32).
//  2. If the bad record overlaps a sector of the file that reads as zeros
//     (from the record's start, when it starts inside the sector), it is
//     torn, whatever follows it. The part of the sector from the record's
//     start must cover its length and checksum fields to count (the first
//     bytes of most length fields are zeros), and a sector the file ends
//     inside does not count (nothing can follow it anyway). As in etcd's
//     WAL, a record that holds 512 zero bytes of its own, damaged
//     otherwise, reads as torn too.
//  3. A valid record after the bad one (after the length it declares when
//     its header is plausible, anywhere after its first byte otherwise) is
//     corruption; none is a torn write.

// sectorSize is the smallest write a disk makes atomically, and so the
// smallest part of a write a power loss can lose.
const sectorSize = 512

// scanBudget bounds the bytes tailDamage checksums while looking for valid
// records, so that a large region of garbage cannot stall start-up; when it
// runs out the damage is treated as corruption, which loses nothing.
const scanBudget = 1 << 30

// tailDamage decides whether bad, the first record of the last segment
// (path, contents data) that does not decode, is a torn write (it returns
// nil) or damage (a *CorruptError naming path and the bad record's
// offset). See the rules above.
func tailDamage(path string, data []byte, bad *badRecord) error {
	off := bad.offset
	end, plausible := declaredEnd(data, off)
	if !plausible {
		end = off + 1
	}
	corrupt := func(format string, args ...any) error {
		return &CorruptError{Path: path, Offset: int64(off), Err: fmt.Errorf("%w, "+format, append([]any{bad.err}, args...)...)}
	}
	const tooMuch = "followed by too much damage to tell a torn write from corruption"
	budget := scanBudget
	if plausible {
		p, found, exhausted := damagedLength(data, off, end, &budget)
		switch {
		case exhausted:
			return corrupt(tooMuch)
		case found:
			return corrupt("but its checksum matches its first %d bytes, after which a valid record starts: its length field is damaged",
				p-off)
		}
	}
	if zeroSector(data, off, end) {
		return nil
	}
	p, found, exhausted := validRecordAfter(data, max(off+1, end), &budget)
	switch {
	case exhausted:
		return corrupt(tooMuch)
	case found:
		return corrupt("and a valid record follows at offset %d", p)
	}
	return nil
}

// damagedLength looks for rule 1's case: a valid record inside the length
// the plausible bad record at off declares (it ends at end) before which
// the bad record's checksum matches its bytes. It returns that record's
// offset; exhausted is validRecordAfter's.
func damagedLength(data []byte, off, end int, budget *int) (at int, found, exhausted bool) {
	want := binary.BigEndian.Uint32(data[off+4:])
	var crc uint32 // of data[off+recordHeaderLen-1 : crcEnd]
	crcEnd := off + recordHeaderLen - 1
	for from := off + 1; ; {
		p, ok, ex := validRecordAfter(data, from, budget)
		switch {
		case ex:
			return 0, false, true
		case !ok || p >= end:
			return 0, false, false
		case p >= off+recordHeaderLen:
			crc = crc32.Update(crc, castagnoli, data[crcEnd:p])
			crcEnd = p
			if crc == want {
				return p, true, false
			}
		}
		from = p + 1
	}
}

// declaredEnd returns where the record at off ends according to its
// header (possibly past the end of data), and whether the header is
// plausible: whole, with a length within bounds and a known type.
func declaredEnd(data []byte, off int) (end int, plausible bool) {
	if len(data)-off < recordHeaderLen {
		return 0, false
	}
	size := binary.BigEndian.Uint32(data[off:])
	typ := data[off+8]
	if size > maxRecordPayload || typ < recordEntry || typ > recordSnapshot || (typ == recordSnapshot && size != markerLen) {
		return 0, false
	}
	return off + recordHeaderLen + int(size), true
}

// zeroSector reports whether a 512-byte-aligned sector that the bytes
// off..end of data overlap reads as zeros from off (or its start) to its
// end; see rule 1 above.
func zeroSector(data []byte, off, end int) bool {
	for s := off &^ (sectorSize - 1); s < end; s += sectorSize {
		lo, hi := max(s, off), s+sectorSize
		if hi > len(data) {
			return false
		}
		if hi-lo < 8 {
			continue // a length field's first bytes and part of its checksum
		}
		if allZero(data[lo:hi]) {
			return true
		}
	}
	return false
}

// validRecordAfter reports whether a complete record with a matching
// checksum starts at any offset from 'from' on, and the first such offset.
// It charges the bytes it checksums to budget; exhausted is true when the
// budget ran out before the end of data.
func validRecordAfter(data []byte, from int, budget *int) (offset int, found, exhausted bool) {
	for p := from; p+recordHeaderLen <= len(data); p++ {
		size := int(binary.BigEndian.Uint32(data[p:]))
		typ := data[p+8]
		if typ < recordEntry || typ > recordSnapshot || size > len(data)-p-recordHeaderLen {
			continue
		}
		if *budget -= size + 1; *budget < 0 {
			return p, false, true
		}
		if _, _, _, err := decodeRecord(data[p:]); err == nil {
			return p, true, false
		}
	}
	return 0, false, false
}
