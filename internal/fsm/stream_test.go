package fsm

import (
	"bytes"
	"math/rand"
	"testing"
)

// TestSnapshotStreamUnderApply applies random entries (creates of every
// kind, deletes, multis that fail and roll back, closed sessions taking
// their ephemerals, the reaper) while snapshot streams are open, reading a
// few znodes of the stream between entries, and checks that each stream is
// byte for byte the snapshot the machine would have written when it began.
// The entries carry the machine's real zxids, so the tree tells the
// children created during a stream by their czxid (tree.Stream).
func TestSnapshotStreamUnderApply(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewSource(seed))
		g := &generator{rng: rng, sessions: []int64{sess1, sess2, 0x3000000000003}}
		m := New(Options{ExtendedTypes: seed%2 == 0})
		now := t0
		index := uint64(0)
		apply := func() {
			index++
			now += int64(rng.Intn(25))
			e := g.entry(m, now)
			if index <= 3 {
				e = &Entry{Type: EntryCreateSession, Session: g.sessions[index-1], Timeout: 1000, Time: now}
			}
			r := m.Apply(index, e.Encode(nil))
			for _, res := range r.Ops {
				if res.Path != "" && len(g.known) < 300 {
					g.known = append(g.known, res.Path)
				}
			}
		}
		for range 300 {
			apply()
		}
		streamed := 0
		for round := range 60 {
			want := m.AppendSnapshot(nil)
			s := m.BeginSnapshot()
			var got []byte
			for done := false; !done; {
				got, done = s.Next(got, 1+rng.Intn(2))
				for j := rng.Intn(10); j > 0; j-- {
					apply()
					streamed++
				}
			}
			s.End()
			if !bytes.Equal(got, want) {
				t.Fatalf("seed %d round %d: the stream is not the snapshot of the state it began with (%d vs %d bytes)",
					seed, round, len(got), len(want))
			}
			restored := New(Options{ExtendedTypes: seed%2 == 0})
			if err := restored.Restore(got); err != nil {
				t.Fatalf("seed %d round %d: restoring the stream: %v", seed, round, err)
			}
			for range 50 {
				apply()
			}
		}
		if streamed < 1500 {
			t.Fatalf("seed %d: only %d entries applied with a stream open", seed, streamed)
		}
		checkState(t, m)
		t.Logf("seed %d: %d entries applied with a stream open, %d znodes", seed, streamed, m.Tree().NodeCount())
	}
}
