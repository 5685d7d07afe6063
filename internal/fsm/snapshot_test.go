package fsm

import (
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

func TestSnapshotRestore(t *testing.T) {
	h := opsFixture(t)
	h.openSession(sess2)
	h.apply(&Entry{Type: EntryCreateSession, Session: -0x7f00000000000001, Timeout: 1, Passwd: nil})
	h.must(sess2, nil, create("/p/e2", "", proto.FlagEphemeral))
	h.must(sess1, []proto.ID{aliceID}, setACL("/p/c", authACL, -1))
	h.m.ApplyEmpty(h.index + 1)
	h.index++
	want := dumpMachine(h.m)
	b := h.m.AppendSnapshot([]byte("xx"))[2:]

	// Restore over a machine with other state replaces all of it.
	other := newHarness(t, Options{ExtendedTypes: true})
	other.openSession(0x42)
	other.must(0x42, nil, create("/stale", "", proto.FlagEphemeral))
	if err := other.m.Restore(b); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if d := diffState(want, dumpMachine(other.m)); d != "" {
		t.Fatalf("restored state differs:\n%s", d)
	}
	if other.m.LastZxid() != int64(h.index) || other.m.AppliedIndex() != h.index {
		t.Fatalf("restored index %d zxid %d, want %d", other.m.AppliedIndex(), other.m.LastZxid(), h.index)
	}
	// The restored machine carries on exactly like the original.
	index, now := h.index, h.now
	for _, m := range []*harness{h, other} {
		m.index, m.now = index, now
		r := m.apply(&Entry{Type: EntryCloseSession, Session: sess1})
		if r.Err != proto.ErrOK || len(r.Changes) != 2 {
			t.Fatalf("close after restore: %+v", r)
		}
		m.must(sess2, nil, create("/p/s-", "", proto.FlagPersistentSequential))
		m.multi(sess2, nil, create("/q", "", 0), setData("/p", "x", 0), check("/p", 0))
	}
	if d := diffState(dumpMachine(h.m), dumpMachine(other.m)); d != "" {
		t.Fatalf("original and restored machines diverged:\n%s", d)
	}
	checkState(t, other.m)
}

func TestRestoreErrors(t *testing.T) {
	h := opsFixture(t)
	good := h.m.AppendSnapshot(nil)
	bad := func(f func(b []byte)) []byte {
		b := append([]byte(nil), good...)
		f(b)
		return b
	}
	cases := []struct {
		name string
		b    []byte
		why  string
	}{
		{"empty", nil, "bad magic"},
		{"bad magic", bad(func(b []byte) { b[0] ^= 1 }), "bad magic"},
		{"future format", bad(func(b []byte) { b[7] = 4 }), "format 4"},
		{"negative session count", bad(func(b []byte) { copy(b[16:20], []byte{0xff, 0xff, 0xff, 0xff}) }), "session count -1"},
		{"huge session count", bad(func(b []byte) { copy(b[16:20], []byte{0x10, 0, 0, 0}) }), "session count"},
		{"short", good[:len(good)-3], "short"},
		{"header only", good[:20], "session count"},
	}
	for _, tc := range cases {
		m := New(Options{})
		before := dumpMachine(m)
		err := m.Restore(tc.b)
		if err == nil || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.why)
		}
		if d := diffState(before, dumpMachine(m)); d != "" {
			t.Errorf("%s: failed Restore changed the machine:\n%s", tc.name, d)
		}
	}
	for n := 0; n < len(good); n++ {
		if err := New(Options{}).Restore(good[:n]); err == nil {
			t.Fatalf("prefix of %d/%d bytes restored", n, len(good))
		}
	}
}
