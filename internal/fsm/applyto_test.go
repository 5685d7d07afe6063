package fsm

import (
	"reflect"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// TestApplyEntryToReusesRoom applies the same entries to two machines, one
// with ApplyEntry and one with ApplyEntryTo into a result with room for its
// ops and changes (left over from the previous entry, as the server does),
// and checks that the results and the states agree, and that a failed multi
// leaves no changes behind.
func TestApplyEntryToReusesRoom(t *testing.T) {
	entries := []*Entry{
		{Type: EntryCreateSession, Session: sess1, Timeout: 30000, Passwd: []byte("pw")},
		{Type: EntryTxn, Session: sess1, Ops: []Op{create("/a", "x", proto.FlagPersistent)}},
		{Type: EntryTxn, Session: sess1, Ops: []Op{setData("/a", "y", -1)}},
		{Type: EntryTxn, Session: sess1, Ops: []Op{setData("/missing", "y", -1)}},
		{Type: EntryTxn, Session: sess1, Multi: true, Ops: []Op{
			create("/b", "", proto.FlagPersistent), create("/b/c", "", proto.FlagEphemeral), setData("/a", "z", 1)}},
		{Type: EntryTxn, Session: sess1, Multi: true, Ops: []Op{
			create("/d", "", proto.FlagPersistent), setData("/a", "w", 99)}}, // fails: bad version
		{Type: EntryTxn, Session: sess1, Multi: true, Ops: []Op{check("/a", 2)}},
		{Type: EntryTxn, Session: sess1, Ops: []Op{del("/b/c", -1)}},
		{Type: EntryCloseSession, Session: sess1},
	}
	a, b := New(Options{}), New(Options{})
	var room [1]OpResult
	var changeRoom [2]Change
	var r Result
	for i, e := range entries {
		index := uint64(i + 1)
		e.Time = t0 + int64(i)
		want := a.ApplyEntry(index, e)
		r.Ops, r.Changes = room[:0], changeRoom[:0]
		b.ApplyEntryTo(index, e, &r)
		if len(want.Ops) != len(r.Ops) || (len(want.Ops) > 0 && !reflect.DeepEqual(want.Ops, r.Ops)) {
			t.Errorf("entry %d: ops %+v, want %+v", index, r.Ops, want.Ops)
		}
		if len(want.Changes) != len(r.Changes) || (len(want.Changes) > 0 && !reflect.DeepEqual(want.Changes, r.Changes)) {
			t.Errorf("entry %d: changes %+v, want %+v", index, r.Changes, want.Changes)
		}
		w, g := want, r
		w.Ops, w.Changes, g.Ops, g.Changes = nil, nil, nil, nil
		if !reflect.DeepEqual(w, g) {
			t.Errorf("entry %d: result %+v, want %+v", index, g, w)
		}
	}
	if d := diffState(dumpMachine(a), dumpMachine(b)); d != "" {
		t.Errorf("states differ: %s", d)
	}
	// The failed multi (entry 6) reports no changes at all.
	if got := a.ApplyEntry(uint64(len(entries)+1), &Entry{Type: EntryTxn, Multi: true, Ops: []Op{
		create("/e", "", proto.FlagPersistent), setData("/a", "v", 99)}}); got.Changes != nil {
		t.Errorf("failed multi through ApplyEntry: changes %+v, want nil", got.Changes)
	}
}

// allocsApplying runs apply 100 times, each time at the next index after
// from into a result with room for one op and two changes (as the server
// gives it), and returns the average allocations and the last result,
// which must be a successful setData.
func allocsApplying(t *testing.T, from uint64, apply func(index uint64, r *Result)) float64 {
	t.Helper()
	var room [1]OpResult
	var changeRoom [2]Change
	var r Result
	index := from
	allocs := testing.AllocsPerRun(100, func() {
		index++
		r.Ops, r.Changes = room[:0], changeRoom[:0]
		apply(index, &r)
	})
	if r.Err != proto.ErrOK || len(r.Changes) != 1 {
		t.Fatalf("setData: %+v", r)
	}
	return allocs
}

// TestApplyEntryToAllocations checks that a setData applied into a result
// with room for its op and change allocates nothing.
func TestApplyEntryToAllocations(t *testing.T) {
	m := New(Options{})
	m.ApplyEntry(1, &Entry{Type: EntryTxn, Ops: []Op{create("/a", "x", proto.FlagPersistent)}})
	e := &Entry{Type: EntryTxn, Ops: []Op{setData("/a", "y", -1)}, Time: t0}
	allocs := allocsApplying(t, 1, func(index uint64, r *Result) { m.ApplyEntryTo(index, e, r) })
	if allocs != 0 {
		t.Errorf("setData into a result with room: %v allocations, want 0", allocs)
	}
}

// TestApplyToAllocations: applying another member's setData (decoded
// from the log) allocates only the znode's new data and the path; the
// entry, its op and its identities are reused from the previous entry.
func TestApplyToAllocations(t *testing.T) {
	m := New(Options{})
	m.ApplyEntry(1, &Entry{Type: EntryCreateSession, Session: sess1, Timeout: 30000, Passwd: []byte("pw")})
	m.ApplyEntry(2, &Entry{Type: EntryTxn, Ops: []Op{create("/a", "x", proto.FlagPersistent)}})
	data := (&Entry{Type: EntryTxn, Session: sess1, Time: t0, Auth: []proto.ID{aliceID, superID},
		Ops: []Op{setData("/a", "y", -1)}}).Encode(nil)
	allocs := allocsApplying(t, 2, func(index uint64, r *Result) { m.ApplyTo(index, data, r) })
	if allocs > 2 {
		t.Errorf("setData decoded and applied: %v allocations, want at most 2 (data and path)", allocs)
	}
	if got := m.Tree().Get("/a"); got == nil || string(got.Data) != "y" {
		t.Fatalf("/a after the setData: %+v", got)
	}
}
