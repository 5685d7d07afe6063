package raftnode

import (
	"fmt"
	"sync"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// logChunk is how many entries one chunk of a logStore holds (48 KiB of
// raftpb.Entry headers; the entries' data lives elsewhere).
const logChunk = 1024

// logStore is raft's in-memory log (a raft.Storage) with the semantics of
// raft.MemoryStorage, method for method, but its entries kept in chunks
// of logChunk instead of one slice. MemoryStorage appends to one slice
// that grows to every entry since the last compaction (100,000 or more
// between snapshots): each time it outgrows its array the whole array is
// copied into a new one a quarter larger, which was an eighth of all the
// bytes a member allocated per write, and an allocation of megabytes on
// the append path, which during a garbage collection's mark phase makes
// the appending goroutine do mark work in proportion to its size before
// the next fsync. A chunk, once full, is never copied; compaction drops
// whole chunks.
//
// Slices returned by Entries are never written to afterwards: appends
// only fill slots past the last entry, and an append that replaces
// entries (a new leader's log overriding this one's tail) copies the
// chunk it starts in first, as MemoryStorage copies its slice.
//
// It is safe for concurrent use (raft reads it on the node's goroutine
// while the appender appends).
type logStore struct {
	mu sync.Mutex
	hs raftpb.HardState
	// snap is the latest snapshot's metadata (raft asks for it to send a
	// follower that is too far behind; the data is streamed separately).
	snap raftpb.Snapshot
	// chunks hold the log: slot head of chunks[0] is the dummy entry,
	// whose index and term are those of the last compacted (or
	// snapshotted) entry and of which nothing else is read; entries
	// follow it in order, n in all with the dummy.
	chunks [][]raftpb.Entry
	head   int
	n      int
}

var _ raft.Storage = (*logStore)(nil)

// newLogStore returns an empty log, as raft.NewMemoryStorage does: a dummy
// entry at index 0, term 0.
func newLogStore() *logStore {
	s := &logStore{}
	s.reset(0, 0)
	return s
}

// reset leaves only a dummy entry with index and term.
func (s *logStore) reset(index, term uint64) {
	c := make([]raftpb.Entry, logChunk)
	c[0] = raftpb.Entry{Index: index, Term: term}
	s.chunks, s.head, s.n = [][]raftpb.Entry{c}, 0, 1
}

// at returns the entry at position p (0 is the dummy).
func (s *logStore) at(p int) *raftpb.Entry {
	p += s.head
	return &s.chunks[p/logChunk][p%logChunk]
}

func (s *logStore) offset() uint64    { return s.at(0).Index }
func (s *logStore) lastIndex() uint64 { return s.offset() + uint64(s.n) - 1 }

// InitialState implements raft.Storage.
func (s *logStore) InitialState() (raftpb.HardState, raftpb.ConfState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hs, s.snap.Metadata.ConfState, nil
}

// SetHardState saves the current hard state.
func (s *logStore) SetHardState(hs raftpb.HardState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hs = hs
	return nil
}

// Entries implements raft.Storage. A range within one chunk is returned
// without copying (capped, so that a caller's append copies it); one that
// spans chunks is copied.
func (s *logStore) Entries(lo, hi, maxSize uint64) ([]raftpb.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	off := s.offset()
	if lo <= off {
		return nil, raft.ErrCompacted
	}
	if hi > s.lastIndex()+1 {
		panic(fmt.Sprintf("raftnode: log entries' hi(%d) is out of bound lastindex(%d)", hi, s.lastIndex()))
	}
	if s.n == 1 {
		return nil, raft.ErrUnavailable
	}
	if lo >= hi {
		return nil, nil
	}
	// How many entries fit in maxSize: at least one.
	count := 1
	size := uint64(s.at(int(lo - off)).Size())
	for i := lo + 1; i < hi; i++ {
		size += uint64(s.at(int(i - off)).Size())
		if size > maxSize {
			break
		}
		count++
	}
	first := int(lo-off) + s.head
	if c := first / logChunk; (first+count-1)/logChunk == c {
		from := first % logChunk
		return s.chunks[c][from : from+count : from+count], nil
	}
	ents := make([]raftpb.Entry, count)
	for i := range ents {
		ents[i] = *s.at(int(lo-off) + i)
	}
	return ents, nil
}

// Term implements raft.Storage.
func (s *logStore) Term(i uint64) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	off := s.offset()
	if i < off {
		return 0, raft.ErrCompacted
	}
	if i-off >= uint64(s.n) {
		return 0, raft.ErrUnavailable
	}
	return s.at(int(i - off)).Term, nil
}

// LastIndex implements raft.Storage.
func (s *logStore) LastIndex() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastIndex(), nil
}

// FirstIndex implements raft.Storage.
func (s *logStore) FirstIndex() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.offset() + 1, nil
}

// Snapshot implements raft.Storage.
func (s *logStore) Snapshot() (raftpb.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap, nil
}

// ApplySnapshot replaces the log with snap's metadata: the log then holds
// nothing after snap's index.
func (s *logStore) ApplySnapshot(snap raftpb.Snapshot) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snap.Metadata.Index >= snap.Metadata.Index {
		return raft.ErrSnapOutOfDate
	}
	s.snap = snap
	s.reset(snap.Metadata.Index, snap.Metadata.Term)
	return nil
}

// CreateSnapshot records a snapshot at index i, which must be in the log;
// cs, when not nil, is its configuration.
func (s *logStore) CreateSnapshot(i uint64, cs *raftpb.ConfState, data []byte) (raftpb.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i <= s.snap.Metadata.Index {
		return raftpb.Snapshot{}, raft.ErrSnapOutOfDate
	}
	off := s.offset()
	if i > s.lastIndex() || i < off {
		panic(fmt.Sprintf("raftnode: snapshot %d is out of bound [%d, %d]", i, off, s.lastIndex()))
	}
	s.snap.Metadata.Index = i
	s.snap.Metadata.Term = s.at(int(i - off)).Term
	if cs != nil {
		s.snap.Metadata.ConfState = *cs
	}
	s.snap.Data = data
	return s.snap, nil
}

// Compact discards the entries before compactIndex; the entry at
// compactIndex becomes the dummy (only its index and term are read from
// then on). Whole chunks before it are dropped; the slots before it in its
// chunk are left as they are, since slices raft still holds may show them.
func (s *logStore) Compact(compactIndex uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	off := s.offset()
	if compactIndex <= off {
		return raft.ErrCompacted
	}
	if compactIndex > s.lastIndex() {
		panic(fmt.Sprintf("raftnode: compact %d is out of bound lastindex(%d)", compactIndex, s.lastIndex()))
	}
	i := int(compactIndex - off)
	p := s.head + i
	if drop := p / logChunk; drop > 0 {
		// Dropped chunks go to the collector; nil them so that this
		// slice's array does not keep them.
		clear(s.chunks[:drop])
		s.chunks = s.chunks[drop:]
	}
	s.head, s.n = p%logChunk, s.n-i
	return nil
}

// copyChunk replaces chunk c with a copy of its slots up to the log's end.
func (s *logStore) copyChunk(c int) {
	fresh := make([]raftpb.Entry, logChunk)
	copy(fresh, s.chunks[c][:s.head+s.n-c*logChunk])
	s.chunks[c] = fresh
}

// Append adds entries to the log; those that overlap it replace its tail
// from the first overlapping index on, as in raft.MemoryStorage.
func (s *logStore) Append(entries []raftpb.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	first := s.offset() + 1
	last := entries[0].Index + uint64(len(entries)) - 1
	if last < first {
		return nil // nothing new
	}
	if first > entries[0].Index {
		entries = entries[first-entries[0].Index:] // compacted already
	}
	pos := int(entries[0].Index - s.offset())
	switch {
	case pos < s.n:
		// Replacing the tail: slices handed out may show those slots,
		// so the chunk pos starts in is copied before it is written, and
		// chunks after it are dropped.
		p := s.head + pos
		c := p / logChunk
		clear(s.chunks[c+1:])
		s.chunks = s.chunks[:c+1]
		s.n = pos
		s.copyChunk(c)
	case pos > s.n:
		panic(fmt.Sprintf("raftnode: missing log entry [last: %d, append at: %d]", s.lastIndex(), entries[0].Index))
	}
	for _, e := range entries {
		p := s.head + s.n
		c := p / logChunk
		if c == len(s.chunks) {
			s.chunks = append(s.chunks, make([]raftpb.Entry, logChunk))
		}
		s.chunks[c][p%logChunk] = e
		s.n++
	}
	return nil
}
