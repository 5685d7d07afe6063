package raftnode

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// storages runs the same calls on a logStore and on raft.MemoryStorage,
// whose semantics it must have, and fails on the first difference.
type storages struct {
	t    *testing.T
	got  *logStore
	want *raft.MemoryStorage
	step string
}

func (s *storages) errs(what string, got, want error) {
	s.t.Helper()
	if !errors.Is(got, want) && !(got == nil && want == nil) {
		s.t.Fatalf("%s: %s: logStore error %v, MemoryStorage %v", s.step, what, got, want)
	}
}

// panics runs f and returns what it panicked with, or nil.
func panics(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

func (s *storages) append(ents []raftpb.Entry) {
	s.t.Helper()
	var gerr, werr error
	gp := panics(func() { gerr = s.got.Append(ents) })
	wp := panics(func() { werr = s.want.Append(ents) })
	if (gp == nil) != (wp == nil) {
		s.t.Fatalf("%s: Append: logStore panicked %v, MemoryStorage %v", s.step, gp, wp)
	}
	s.errs("Append", gerr, werr)
}

func (s *storages) compact(i uint64) {
	s.t.Helper()
	var gerr, werr error
	gp := panics(func() { gerr = s.got.Compact(i) })
	wp := panics(func() { werr = s.want.Compact(i) })
	if (gp == nil) != (wp == nil) {
		s.t.Fatalf("%s: Compact(%d): logStore panicked %v, MemoryStorage %v", s.step, i, gp, wp)
	}
	s.errs(fmt.Sprintf("Compact(%d)", i), gerr, werr)
}

// check compares everything the storages answer.
func (s *storages) check() {
	s.t.Helper()
	gf, _ := s.got.FirstIndex()
	wf, _ := s.want.FirstIndex()
	gl, _ := s.got.LastIndex()
	wl, _ := s.want.LastIndex()
	if gf != wf || gl != wl {
		s.t.Fatalf("%s: first/last index %d/%d, MemoryStorage %d/%d", s.step, gf, gl, wf, wl)
	}
	gs, _ := s.got.Snapshot()
	ws, _ := s.want.Snapshot()
	if !reflect.DeepEqual(gs, ws) {
		s.t.Fatalf("%s: Snapshot %v, MemoryStorage %v", s.step, gs.Metadata, ws.Metadata)
	}
	ghs, gcs, _ := s.got.InitialState()
	whs, wcs, _ := s.want.InitialState()
	if !reflect.DeepEqual(ghs, whs) || !reflect.DeepEqual(gcs, wcs) {
		s.t.Fatalf("%s: InitialState %v %v, MemoryStorage %v %v", s.step, ghs, gcs, whs, wcs)
	}
	for i := wf - min(wf, 2); i <= wl+2; i++ {
		gt, gerr := s.got.Term(i)
		wt, werr := s.want.Term(i)
		s.errs(fmt.Sprintf("Term(%d)", i), gerr, werr)
		if gt != wt {
			s.t.Fatalf("%s: Term(%d) = %d, MemoryStorage %d", s.step, i, gt, wt)
		}
	}
	// Ranges from before the first index to the end (some 25 starting
	// points), whole and limited in size.
	for lo := wf - min(wf, 1); lo <= wl+1; lo += 1 + (wl+1-wf)/24 {
		for _, hi := range []uint64{lo + 1, lo + 3, wl + 1} {
			if hi > wl+1 || hi < lo {
				continue
			}
			for _, max := range []uint64{0, 100, 1000, 1 << 30} {
				ge, gerr := s.got.Entries(lo, hi, max)
				we, werr := s.want.Entries(lo, hi, max)
				s.errs(fmt.Sprintf("Entries(%d, %d, %d)", lo, hi, max), gerr, werr)
				if len(ge) != len(we) || (len(we) > 0 && !reflect.DeepEqual(ge, we)) {
					s.t.Fatalf("%s: Entries(%d, %d, %d): %d entries, MemoryStorage %d (or they differ)",
						s.step, lo, hi, max, len(ge), len(we))
				}
				if cap(ge) != len(ge) {
					s.t.Fatalf("%s: Entries(%d, %d, %d) returned room to append (cap %d, len %d)",
						s.step, lo, hi, max, cap(ge), len(ge))
				}
			}
		}
	}
}

// entries returns n entries from index first in term, with data of
// random sizes.
func entries(r *rand.Rand, first, term uint64, n int) []raftpb.Entry {
	ents := make([]raftpb.Entry, n)
	for i := range ents {
		data := make([]byte, r.IntN(300))
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		ents[i] = raftpb.Entry{Index: first + uint64(i), Term: term, Data: data}
	}
	return ents
}

// TestLogStoreMatchesMemoryStorage drives a logStore and raft's
// MemoryStorage through the same random appends (at the end, overlapping
// and replacing the tail, wholly compacted, past the end), compactions,
// snapshots and hard states, and compares every answer after each step:
// the logStore replaces MemoryStorage under raft, which relies on these
// semantics exactly.
func TestLogStoreMatchesMemoryStorage(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 99))
			s := &storages{t: t, got: newLogStore(), want: raft.NewMemoryStorage()}
			s.step = "empty"
			s.check()
			term := uint64(1)
			for step := range 300 {
				first, _ := s.want.FirstIndex()
				last, _ := s.want.LastIndex()
				switch op := r.IntN(10); {
				case op < 5: // append at the end, sometimes across chunks
					n := 1 + r.IntN(40)
					if r.IntN(8) == 0 {
						n = logChunk + r.IntN(logChunk)
					}
					s.step = fmt.Sprintf("step %d: append %d at %d", step, n, last+1)
					s.append(entries(r, last+1, term, n))
				case op < 7: // a new term replaces part of the tail
					term++
					at := first + uint64(r.IntN(int(last-first)+2))
					if r.IntN(4) == 0 && first > 3 {
						at = first - uint64(r.IntN(3)) // partly compacted already
					}
					n := 1 + r.IntN(30)
					s.step = fmt.Sprintf("step %d: append %d at %d (term %d)", step, n, at, term)
					s.append(entries(r, at, term, n))
				case op < 8: // compact
					at := first - 1 + uint64(r.IntN(int(last-first)+3))
					s.step = fmt.Sprintf("step %d: compact %d", step, at)
					s.compact(at)
				case op < 9: // snapshot, and sometimes compact to it
					if last < first {
						continue
					}
					at := first + uint64(r.IntN(int(last-first)+1))
					cs := &raftpb.ConfState{Voters: []uint64{1, 2, uint64(step)}}
					s.step = fmt.Sprintf("step %d: create snapshot %d", step, at)
					_, gerr := s.got.CreateSnapshot(at, cs, nil)
					_, werr := s.want.CreateSnapshot(at, cs, nil)
					s.errs("CreateSnapshot", gerr, werr)
					if r.IntN(2) == 0 {
						s.compact(at)
					}
				default:
					if r.IntN(3) == 0 {
						// A snapshot from the leader replaces the log.
						idx := last + uint64(r.IntN(50))
						if d := uint64(r.IntN(5)); idx > d {
							idx -= d // sometimes older than the log's end
						}
						snap := raftpb.Snapshot{Metadata: raftpb.SnapshotMetadata{
							Index: idx, Term: term,
							ConfState: raftpb.ConfState{Voters: []uint64{uint64(step)}}}}
						s.step = fmt.Sprintf("step %d: apply snapshot %d", step, snap.Metadata.Index)
						s.errs("ApplySnapshot", s.got.ApplySnapshot(snap), s.want.ApplySnapshot(snap))
					} else {
						hs := raftpb.HardState{Term: term, Vote: uint64(step % 3), Commit: last}
						s.step = fmt.Sprintf("step %d: hard state", step)
						s.errs("SetHardState", s.got.SetHardState(hs), s.want.SetHardState(hs))
					}
				}
				s.check()
			}
		})
	}
}

// TestLogStoreKeepsReturnedEntries: entries handed out by Entries stay as
// they were when a new leader's entries replace that part of the log, or
// when it is compacted: raft may still be sending or applying them.
func TestLogStoreKeepsReturnedEntries(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	s := newLogStore()
	if err := s.Append(entries(r, 1, 1, 3*logChunk)); err != nil {
		t.Fatal(err)
	}
	within, err := s.Entries(logChunk+10, logChunk+20, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	across, err := s.Entries(logChunk-5, logChunk+5, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	replaced, err := s.Entries(logChunk-6, logChunk-1, 1<<30) // in the chunk the new term starts in
	if err != nil {
		t.Fatal(err)
	}
	keep := func(ents []raftpb.Entry) []raftpb.Entry {
		c := make([]raftpb.Entry, len(ents))
		copy(c, ents)
		return c
	}
	wantWithin, wantAcross, wantReplaced := keep(within), keep(across), keep(replaced)
	// Term 2 replaces everything from logChunk-8 on, then a compaction.
	if err := s.Append(entries(r, logChunk-8, 2, 40)); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(logChunk + 15); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(within, wantWithin) || !reflect.DeepEqual(across, wantAcross) ||
		!reflect.DeepEqual(replaced, wantReplaced) {
		t.Fatal("entries returned earlier changed when the log was replaced or compacted")
	}
	if term, err := s.Term(logChunk + 16); err != nil || term != 2 {
		t.Fatalf("Term(%d) = %d, %v; want 2 (the new leader's entry)", logChunk+16, term, err)
	}
	// An append to a returned slice must not write into the log.
	got, _ := s.Entries(logChunk+16, logChunk+18, 1<<30)
	_ = append(got, raftpb.Entry{Index: 999, Term: 9})
	if term, _ := s.Term(logChunk + 18); term != 2 {
		t.Fatalf("an append to a returned slice changed the log: Term(%d) = %d", logChunk+18, term)
	}
}

// TestLogStoreDropsCompactedChunks: compaction lets go of whole chunks
// (memory is bounded by what is kept, not by what was ever appended).
func TestLogStoreDropsCompactedChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	s := newLogStore()
	next := uint64(1)
	for range 20 {
		if err := s.Append(entries(r, next, 1, logChunk)); err != nil {
			t.Fatal(err)
		}
		next += logChunk
		if err := s.Compact(next - 100); err != nil {
			t.Fatal(err)
		}
		if len(s.chunks) > 2 {
			t.Fatalf("%d chunks held for 100 entries after compaction", len(s.chunks))
		}
	}
}

// appendCompacter is what BenchmarkLogAppend needs of a log.
type appendCompacter interface {
	Append([]raftpb.Entry) error
	Compact(uint64) error
}

// BenchmarkLogAppend appends batches of 16 entries, compacting to 5,000
// entries behind the end every 100,000 (as after a snapshot), to the
// logStore and to raft's MemoryStorage side by side: B/op is what the
// log allocates per entry.
func BenchmarkLogAppend(b *testing.B) {
	for _, tt := range []struct {
		name string
		log  func() appendCompacter
	}{
		{"logStore", func() appendCompacter { return newLogStore() }},
		{"MemoryStorage", func() appendCompacter { return raft.NewMemoryStorage() }},
	} {
		b.Run(tt.name, func(b *testing.B) {
			batch := make([]raftpb.Entry, 16)
			data := make([]byte, 200)
			log := tt.log()
			next := uint64(1)
			b.ReportAllocs()
			for i := 0; i < b.N; i += len(batch) {
				for j := range batch {
					batch[j] = raftpb.Entry{Index: next + uint64(j), Term: 1, Data: data}
				}
				if err := log.Append(batch); err != nil {
					b.Fatal(err)
				}
				next += uint64(len(batch))
				if next%100_000 < uint64(len(batch)) && next > 5000 {
					if err := log.Compact(next - 5000); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
