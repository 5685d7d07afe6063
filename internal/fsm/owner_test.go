package fsm

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// TestEntryOrigin: an entry with an Origin is written in format 3, with or
// without a term, and decodes and peeks to the same fields; format 3 with
// origin 0 is refused.
func TestEntryOrigin(t *testing.T) {
	for _, term := range []uint64{0, 9} {
		e := &Entry{Type: EntryTxn, ReqID: 5, Session: 3, Term: term, Origin: 2,
			Ops: []Op{{Op: proto.OpDelete, Path: "/a", Version: -1}}}
		b := e.Encode(nil)
		if b[0] != EntryFormatOrigin {
			t.Fatalf("term %d: format %d, want %d", term, b[0], EntryFormatOrigin)
		}
		if got := PeekTerm(b); got != term {
			t.Fatalf("PeekTerm = %d, want %d", got, term)
		}
		if id, ok := PeekReqID(b); !ok || id != 5 {
			t.Fatalf("PeekReqID = %d, %v", id, ok)
		}
		d, err := DecodeEntry(b)
		if err != nil || d.Term != term || d.Origin != 2 || d.Ops[0].Path != "/a" {
			t.Fatalf("DecodeEntry = %+v, %v", d, err)
		}
	}
	for _, typ := range []EntryType{EntryCreateSession, EntryCloseSession, EntryMoveSession} {
		e := &Entry{Type: typ, Session: 7, Origin: 3}
		d, err := DecodeEntry(e.Encode(nil))
		if err != nil || d.Type != typ || d.Origin != 3 || d.Session != 7 {
			t.Fatalf("type %d: DecodeEntry = %+v, %v", typ, d, err)
		}
	}
	b := (&Entry{Type: EntryMoveSession, Session: 7, Origin: 3}).Encode(nil)
	binary.BigEndian.PutUint64(b[len(b)-8:], 0)
	if _, err := DecodeEntry(b); !errors.Is(err, errEntry) {
		t.Fatalf("format 3 with origin 0: %v", err)
	}
}

// TestSessionMoved: once a session moved to another member, requests of the
// session that the old member proposed are refused with SESSIONMOVED and
// change nothing; the new member's, and those no member made for a client
// (expiry), apply.
func TestSessionMoved(t *testing.T) {
	h := newHarness(t, Options{})
	const id = 0x51
	if r := h.apply(&Entry{Type: EntryCreateSession, Session: id, Timeout: 30000, Passwd: []byte("pw"), Origin: 1}); r.Err != proto.ErrOK {
		t.Fatal(r.Err)
	}
	if got := h.m.Session(id).Owner; got != 1 {
		t.Fatalf("owner %d after create from member 1", got)
	}
	write := func(origin uint64, path string, multi bool) Result {
		e := &Entry{Type: EntryTxn, Session: id, Origin: origin, Multi: multi, Ops: []Op{create(path, "", 0)}}
		return h.apply(e)
	}
	if r := write(1, "/before", false); r.Err != proto.ErrOK {
		t.Fatalf("write from the owner: %v", r.Err)
	}
	if r := h.apply(&Entry{Type: EntryMoveSession, Session: id, Origin: 2}); r.Err != proto.ErrOK {
		t.Fatal(r.Err)
	}
	for _, multi := range []bool{false, true} {
		if r := write(1, "/late", multi); r.Err != proto.ErrSessionMoved || len(r.Changes) != 0 {
			t.Fatalf("write from the old member (multi %v): %+v, want SESSIONMOVED", multi, r)
		}
	}
	if h.m.Tree().Get("/late") != nil {
		t.Fatal("a refused write created its node")
	}
	if r := write(2, "/after", false); r.Err != proto.ErrOK {
		t.Fatalf("write from the new owner: %v", r.Err)
	}
	if r := write(0, "/standalone", false); r.Err != proto.ErrOK {
		t.Fatalf("write with no origin: %v", r.Err)
	}
	if r := h.apply(&Entry{Type: EntryCloseSession, Session: id, Origin: 1}); r.Err != proto.ErrSessionMoved || h.m.Session(id) == nil {
		t.Fatalf("close from the old member: %+v; session open %v", r, h.m.Session(id) != nil)
	}
	if r := h.apply(&Entry{Type: EntryMoveSession, Session: 0x99, Origin: 2}); r.Err != proto.ErrSessionExpired {
		t.Fatalf("move of an unknown session: %v", r.Err)
	}
	// Expiry has no origin.
	if r := h.apply(&Entry{Type: EntryCloseSession, Session: id}); r.Err != proto.ErrOK || h.m.Session(id) != nil {
		t.Fatalf("expiry: %+v", r)
	}
}

// TestSnapshotOwner: the session owner survives a snapshot, and a format 1
// snapshot (no owners) still restores, with no owner.
func TestSnapshotOwner(t *testing.T) {
	h := newHarness(t, Options{})
	h.apply(&Entry{Type: EntryCreateSession, Session: 0x51, Timeout: 3000, Passwd: []byte("pw"), Origin: 3})
	b := h.m.AppendSnapshot(nil)
	m := New(Options{})
	if err := m.Restore(b); err != nil {
		t.Fatal(err)
	}
	if s := m.Session(0x51); s == nil || s.Owner != 3 {
		t.Fatalf("restored session %+v, want owner 3", s)
	}
	// Format 1: the same bytes without the owner (nor the last write's
	// connection and number, format 3).
	off := 4 + 4 + 8 + 4 + 8 + 4 + 4 + len("pw")
	old := append(append([]byte{}, b[:off]...), b[off+24:]...)
	binary.BigEndian.PutUint32(old[4:8], snapshotFormatNoOwner)
	m = New(Options{})
	if err := m.Restore(old); err != nil {
		t.Fatalf("format 1: %v", err)
	}
	if s := m.Session(0x51); s == nil || s.Owner != 0 || string(s.Passwd) != "pw" {
		t.Fatalf("format 1 session %+v", s)
	}
}
