// Package storage keeps Paddock's raft log and snapshots on disk: a
// write-ahead log (WAL) of raft entries and hard states, and checksummed
// snapshot files of the state machine. It knows the raftpb types but none of
// raft's logic; internal/raftnode is its only intended caller.
//
// # WAL directory
//
// A WAL lives in one directory (ZooKeeper's dataLogDir). It holds segment
// files named "<seq>-<firstIndex>.wal", both 16 lower-case hex digits: seq
// counts segments from 0 without gaps, and firstIndex is the raft index the
// first entry appended to the segment was expected to have (last index + 1
// when the segment was created); it can be lower than the previous
// segment's when raft replaced the log's tail in that segment. A file
// "wal.lock" is held with flock(2) while the WAL is open, so two processes
// cannot append to one log. Files ending in ".wal.tmp" are half-created
// segments and are removed on open, except a live spare (below).
//
// Every segment starts with a 36-byte header, all integers big-endian:
//
//	0  [8]byte  magic "PDCKWAL\n"
//	8  uint32   format version (1)
//	12 uint32   flags, 0 (reserved)
//	16 uint64   seq, equal to the name's
//	24 uint64   firstIndex, equal to the name's
//	32 uint32   CRC-32C (Castagnoli) of bytes 0..31
//
// followed by records:
//
//	0  uint32   payload length n (at most 256 MiB)
//	4  uint32   CRC-32C of bytes 8..9+n (the type byte and the payload)
//	8  byte     record type
//	9  [n]byte  payload
//
// Record types: 1 = a raft entry (raftpb.Entry, protobuf), 2 = a raft hard
// state (raftpb.HardState, protobuf), 3 = a snapshot marker (index and term,
// two big-endian uint64s) written once the snapshot file with that index is
// durable. A new segment begins with the current hard state and the latest
// snapshot marker, so removing older segments never loses them.
//
// Version history: 1, the first format. A reader refuses versions it does not
// know; a change to the header, the record framing or a payload encoding bumps
// the version and says why here.
//
// # Log semantics
//
// Entries are appended in the order raft hands them out. An entry whose index
// is not above the last one written replaces that index and everything after
// it (a new leader truncated the log), so ReadAll returns, for each index, the
// entry written last. Save writes a whole batch with one write and at most one
// fsync (fdatasync on Linux: the data and, for a segment that grew, its
// length): callers put everything of one raft Ready into one call (group
// commit). The fsync is skipped when the batch changes only the commit index,
// which raft can recompute; entries, term and vote are always durable when
// Save returns.
//
// # Crash recovery
//
// Zero bytes from a record boundary to the end of a segment end it cleanly:
// they are the unused part of a preallocated segment (a zero length, CRC and
// type never form a valid record). Once WALOptions.PreallocateAfter bytes
// have been appended, the WAL fills "spare.wal.tmp" with zeros in the
// background (twice what it has written since it was opened, from 4 MiB up
// to the segment size; with direct I/O on Linux, so the zeros are not
// copied into the page cache first), fsyncs it, and on its next rollover (at once, if
// the current segment is not preallocated) writes the header into it with
// the first records, fsyncs once, and then renames it into place in the
// background (wal_roll.go), so appends overwrite allocated blocks and an
// fsync writes no inode. A spare whose header is valid and names the
// segment after the last one is a live segment whose rename a crash undid:
// OpenWAL renames it into place; one whose valid header names another
// segment is damage (a *CorruptError); a spare without a valid header is
// removed. A segment
// that fills while the next spare is still being filled goes on growing
// (through the page cache) until the spare is ready, up to twice the
// segment size. On Linux appends to a preallocated segment
// go to the disk with direct I/O (directTail in wal_direct.go): each write
// covers whole pages, from the start of the page the log ends in (its
// written part rewritten with the same bytes) to the end of the page the
// append ends in (zeros, as on disk already), so a torn write can only
// damage the new records; a hard state whose commit index alone changed
// waits in the aligned buffer for the next synced append (or a roll, or
// Close). Where direct I/O is refused, and for the last partial page of a
// preallocation that does not end on a page, appends go through the page
// cache, padded with zeros to the end of their page (WAL.padded): the
// spare's pages are not cached, and a write covering only part of an
// uncached page makes the kernel read that page from the disk first.
// A full preallocated segment is cut to its records before the next
// one starts (not synced: a cut a crash undid leaves zeros, which read as
// the end).
//
// Only the last segment can have a torn tail: a segment is fsynced before the
// next one is created, and a segment appears under its final name only after
// its header is durable. OpenWAL checks every record. In the last segment, a
// bad record (short, bad length, unknown type or CRC mismatch) is a torn
// write when no valid record follows it (past the length its header
// declares, when that is plausible: a valid record inside it is payload),
// or when a 512-byte sector it overlaps reads as zeros (a power loss can
// lose a page in the middle of an unsynced write and keep a later one) and
// its length field is not shown damaged (below):
// the tail from the bad record on is cut off and the cut is logged
// (torn.go has the rules). A bad record followed by a valid one, or whose
// checksum matches its bytes up to a valid record inside the length it
// declares (a damaged length field), a bad record in an earlier segment or
// a damaged header is corruption: OpenWAL (or ReadAll) fails with a
// *CorruptError naming the file and byte offset. A missing segment is too:
// the error names the directory, the missing segment's number and the
// segments around the gap. Either way errors.Is(err, ErrCorrupt) holds.
// Nothing is repaired silently.
//
// # Snapshots
//
// Snapshot files live in the data directory (ZooKeeper's dataDir), named
// "<index>-<term>.snap" in 16-digit hex, so lexical order is index order.
// A file "snap.lock" is held with flock(2) (LockSnapshotDir) by the one
// process that writes and purges snapshots there, as "wal.lock" is for the
// WAL; the two lock files differ, so they may share a directory. A
// snapshot file is:
//
//	0  [8]byte  magic "PDCKSNAP"
//	8  uint32   format version (1)
//	12 uint32   m, length of the metadata (at most 1 MiB)
//	16 [m]byte  raftpb.SnapshotMetadata, protobuf (index, term, ConfState)
//	   ...      the state machine's bytes (body)
//	   uint64   body length
//	   uint32   CRC-32C of every byte before it
//
// SaveSnapshot writes to a temporary file, fsyncs, renames it into place and
// fsyncs the directory, so a snapshot file is either complete or absent (a
// crash leaves only a temporary file, which RemoveTempSnapshots deletes).
// On Linux it writes with direct I/O (directWriter), bypassing the page
// cache, and falls back to buffered writes with writeback hints
// (writebackWriter) where the filesystem refuses it.
// LoadNewestSnapshot reads the newest snapshot whole in one pass
// (ReadSnapshot: with direct I/O on Linux, so a snapshot written with direct
// I/O is not first copied through the page cache), verifies its checksum in
// memory before returning any of it (the buffer is anonymous memory outside
// the Go heap on Linux, given back by Snapshot.Close once the state machine
// has decoded it), and falls back to older snapshots,
// logging each damaged one. OpenSnapshot verifies a file and streams its
// body instead, for sending it to another member and for the data tools.
//
// PurgeSnapshots and the function WAL.Release returns delete old files a
// few megabytes at a time (removeInSteps: renamed to "*.drop", cut in steps
// of 8 MiB, then unlinked), so that the WAL's fsyncs on the same disk never
// wait for hundreds of megabytes to be freed at once; a "*.drop" file left
// by a crash is deleted by OpenWAL or RemoveTempSnapshots.
//
// # Concurrency
//
// A WAL is owned by one goroutine: its methods must not be called
// concurrently, except Stats. The snapshot functions are safe to call from
// any goroutine as long as one directory has one writer.
package storage
