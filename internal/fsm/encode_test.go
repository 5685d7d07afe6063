package fsm

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/paddockhq/paddock/internal/proto"
)

// sampleEntries has every entry type and every op kind, with nil and empty
// byte slices and ACLs where the difference matters.
func sampleEntries() []*Entry {
	acls := []proto.ACL{{Perms: proto.PermRead, ID: aliceID}, {Perms: proto.PermAll, ID: proto.ID{Scheme: "ip", ID: "10.0.0.0/8"}}}
	return []*Entry{
		{Type: EntryCreateSession, ReqID: 1, Time: t0, Session: sess1, Timeout: 30000, Passwd: []byte("0123456789abcdef")},
		{Type: EntryCreateSession, Session: -1, Timeout: -5},
		{Type: EntryCreateSession, Session: 2, Passwd: []byte{}},
		{Type: EntryCloseSession, ReqID: 1 << 63, Time: -1, Session: sess2},
		{Type: EntryTxn, ReqID: 7, Time: t0, Session: sess1, Auth: []proto.ID{aliceID, superID},
			Ops: []Op{{Op: proto.OpCreate, Path: "/a", Data: []byte("d"), ACL: acls, Flags: 3}}},
		{Type: EntryTxn, Ops: []Op{{Op: proto.OpCreate2, Path: "/a", ACL: []proto.ACL{}, Flags: 0}}},
		{Type: EntryTxn, Ops: []Op{{Op: proto.OpCreateContainer, Path: "/c", Data: []byte{}, ACL: openACL, Flags: 4}}},
		{Type: EntryTxn, Ops: []Op{{Op: proto.OpCreateTTL, Path: "/t", ACL: openACL, Flags: 5, TTL: 1<<40 - 1}}},
		{Type: EntryTxn, Ops: []Op{{Op: proto.OpDelete, Path: "/a", Version: -1}}},
		{Type: EntryTxn, Ops: []Op{{Op: proto.OpDeleteContainer, Path: "/c"}}},
		{Type: EntryTxn, Ops: []Op{{Op: proto.OpSetData, Path: "/a", Data: []byte{0, 255}, Version: 3}}},
		{Type: EntryTxn, Ops: []Op{{Op: proto.OpSetACL, Path: "/a", ACL: acls, Version: 2}}},
		{Type: EntryTxn, Ops: []Op{{Op: proto.OpCheck, Path: "/a", Version: 9}}},
		{Type: EntryTxn, Multi: true},
		{Type: EntryTxn, Session: sess1, Multi: true, Ops: []Op{
			{Op: proto.OpCreate, Path: "/m", Data: []byte("x"), ACL: openACL},
			{Op: proto.OpCreateTTL, Path: "/m/t", ACL: openACL, Flags: 6, TTL: 5},
			{Op: proto.OpCheck, Path: "/m", Version: -1},
			{Op: proto.OpSetData, Path: "/m", Data: nil, Version: 0},
			{Op: proto.OpDelete, Path: "/m/t"},
			{Op: proto.OpSetACL, Path: "/m", ACL: nil, Version: -1},
			{Op: proto.OpDeleteContainer, Path: "/m"},
		}},
		{Type: EntryTxn, Session: sess1, Conn: 0x9e3779b97f4a7c15, Seq: 1, Ops: []Op{{Op: proto.OpDelete, Path: "/a", Version: -1}}},
		{Type: EntryTxn, Session: sess1, Term: 4, Origin: 2, Conn: 1, Seq: 1 << 40, Ops: []Op{{Op: proto.OpCheck, Path: "/a", Version: 1}}},
		{Type: EntryTxn, Session: sess1, Term: 5, Conn: 7, Seq: 3, Flags: EntryFlagEnforceQuota, Ops: []Op{{Op: proto.OpSetData, Path: "/q", Data: []byte("x"), Version: -1}}},
		{Type: EntryTxn, Flags: EntryFlagEnforceQuota, Multi: true, Ops: []Op{{Op: proto.OpCreate, Path: "/q/c", Flags: proto.FlagPersistent}}},
	}
}

// normalize maps what the encoding does not distinguish: a nil and an empty
// Auth list.
func normalize(e *Entry) *Entry {
	c := *e
	if len(c.Auth) == 0 {
		c.Auth = nil
	}
	if c.Ops == nil && c.Type == EntryTxn {
		c.Ops = []Op{}
	}
	return &c
}

func TestEntryRoundTrip(t *testing.T) {
	for i, e := range sampleEntries() {
		prefix := []byte{9, 9}
		b := e.Encode(append([]byte(nil), prefix...))
		format := byte(EntryFormat)
		switch {
		case e.Flags != 0:
			format = EntryFormatFlags
		case e.Conn != 0:
			format = EntryFormatConn
		case e.Origin != 0:
			format = EntryFormatOrigin
		case e.Term != 0:
			format = EntryFormatTerm
		}
		if string(b[:2]) != string(prefix) || b[2] != format {
			t.Fatalf("entry %d: Encode did not append after the prefix, in format %d", i, format)
		}
		if got := PeekTerm(b[2:]); got != e.Term {
			t.Fatalf("entry %d: PeekTerm = %d, want %d", i, got, e.Term)
		}
		got, err := DecodeEntry(b[2:])
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if !reflect.DeepEqual(normalize(got), normalize(e)) {
			t.Fatalf("entry %d:\n got %+v\nwant %+v", i, got, e)
		}
		// Every strict prefix fails to decode.
		for n := 0; n < len(b)-2; n++ {
			if _, err := DecodeEntry(b[2 : 2+n]); err == nil {
				t.Fatalf("entry %d: prefix of %d bytes decoded", i, n)
			}
		}
	}
}

// TestDecodeEntryReusing: decoding into one Entry after another, in both
// orders (a multi after a single op and the other way round), with
// interned identities, gives what a fresh decode gives.
func TestDecodeEntryReusing(t *testing.T) {
	samples := sampleEntries()
	var e Entry
	var room decodeRoom
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}, {14, 4, 13, 12, 14, 0, 4}} {
		for _, i := range order {
			b := samples[i].Encode(nil)
			want, err := DecodeEntry(b)
			if err != nil {
				t.Fatalf("entry %d: %v", i, err)
			}
			if err := decodeEntry(b, &e, &room); err != nil {
				t.Fatalf("entry %d reusing: %v", i, err)
			}
			if !reflect.DeepEqual(&e, want) {
				t.Fatalf("entry %d decoded reusing an entry:\n got %+v\nwant %+v", i, &e, want)
			}
			room.keep(&e)
		}
	}
	// The same identity decoded twice is one string, not two.
	b := samples[4].Encode(nil)
	var a, c Entry
	if err := decodeEntry(b, &a, &room); err != nil {
		t.Fatal(err)
	}
	if err := decodeEntry(b, &c, &room); err != nil {
		t.Fatal(err)
	}
	if unsafe.StringData(a.Auth[0].ID) != unsafe.StringData(c.Auth[0].ID) {
		t.Error("an identity decoded twice was not interned")
	}
	// The cache is bounded.
	for i := range maxCachedIDs + 10 {
		id := proto.ID{Scheme: "ip", ID: fmt.Sprint(i)}
		in := id.Append(nil)
		if got := room.ids.decode(proto.NewDecoder(in), in); got != id {
			t.Fatalf("decoded %v, want %v", got, id)
		}
		if len(room.ids.m) > maxCachedIDs {
			t.Fatalf("%d identities cached, bound %d", len(room.ids.m), maxCachedIDs)
		}
	}
}

func TestDecodeEntryErrors(t *testing.T) {
	good := (&Entry{Type: EntryTxn, Ops: []Op{{Op: proto.OpCheck, Path: "/a"}}}).Encode(nil)
	withOps := func(multi bool, n int32) []byte {
		b := []byte{EntryFormat, byte(EntryTxn)}
		b = append(b, make([]byte, 24)...) // reqID, time, session
		b = proto.AppendInt32(b, 0)        // auth
		b = proto.AppendBool(b, multi)
		b = proto.AppendInt32(b, n)
		for i := int32(0); i < n && i < 4; i++ {
			b = proto.AppendInt32(b, int32(proto.OpCheck))
			b = proto.AppendString(b, "/a")
			b = proto.AppendInt32(b, -1)
		}
		return b
	}
	cases := []struct {
		name string
		b    []byte
		why  string
	}{
		{"empty", nil, "0 bytes"},
		{"one byte", []byte{EntryFormat}, "1 bytes"},
		{"future format", append([]byte{6}, good[1:]...), "format 6"},
		{"format 5 without its flags", append([]byte{EntryFormatFlags}, good[1:]...), "short buffer"},
		{"format 5 with flags 0", proto.AppendInt64(proto.AppendInt64(proto.AppendInt64(proto.AppendInt64(proto.AppendInt64(
			append([]byte{EntryFormatFlags}, good[1:]...), 0), 0), 0), 0), 0), "flags 0"},
		{"format 5 with a seq and no conn", proto.AppendInt64(proto.AppendInt64(proto.AppendInt64(proto.AppendInt64(proto.AppendInt64(
			append([]byte{EntryFormatFlags}, good[1:]...), 0), 0), 0), 3), 1), "conn 0, seq 3"},
		{"format 4 without its connection", append([]byte{EntryFormatConn}, good[1:]...), "short buffer"},
		{"format 2 without its term", append([]byte{EntryFormatTerm}, good[1:]...), "short buffer"},
		{"format 0", append([]byte{0}, good[1:]...), "format 0"},
		{"unknown type", append([]byte{EntryFormat, 9}, good[2:]...), "unknown type 9"},
		{"type 0", append([]byte{EntryFormat, 0}, good[2:]...), "unknown type 0"},
		{"unknown op", func() []byte {
			b := withOps(false, 1)
			b[len(b)-11] = 4 // opcode 13 -> getData (4)
			return b
		}(), "unknown op 4"},
		{"negative op count", withOps(true, -1), "-1 ops"},
		{"op count beyond input", withOps(true, 1000), "1000 ops"},
		{"single with two ops", withOps(false, 2), "single txn with 2 ops"},
		{"single with no ops", withOps(false, 0), "single txn with 0 ops"},
		{"truncated", good[:len(good)-1], "short"},
	}
	for _, tc := range cases {
		_, err := DecodeEntry(tc.b)
		if err == nil || !errors.Is(err, errEntry) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%s: err = %v, want errEntry containing %q", tc.name, err, tc.why)
		}
	}
	if _, err := DecodeEntry(withOps(true, 4)); err != nil {
		t.Fatalf("valid hand-made multi: %v", err)
	}
}

func TestApplyPanicsOnCorruptEntry(t *testing.T) {
	m := New(Options{})
	defer func() {
		v := recover()
		msg, _ := v.(string)
		if !strings.Contains(msg, "log entry 17 is corrupt") {
			t.Fatalf("panic %v, want one naming entry 17", v)
		}
		if m.AppliedIndex() != 0 {
			t.Fatalf("corrupt entry advanced the applied index to %d", m.AppliedIndex())
		}
	}()
	m.Apply(17, []byte{EntryFormat, 99, 0})
}

func TestApplyEntryPanicsOnImpossibleEntries(t *testing.T) {
	for name, e := range map[string]*Entry{
		"unknown type":      {Type: 77},
		"single with 2 ops": {Type: EntryTxn, Ops: []Op{check("/", -1), check("/", -1)}},
		"single with 0 ops": {Type: EntryTxn},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			New(Options{}).ApplyEntry(1, e)
		}()
	}
}

func FuzzDecodeEntry(f *testing.F) {
	for _, e := range sampleEntries() {
		f.Add(e.Encode(nil))
	}
	f.Add([]byte{})
	f.Add([]byte{EntryFormat, byte(EntryTxn)})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := DecodeEntry(b)
		if err != nil {
			return
		}
		// What decodes re-encodes to something that decodes the same.
		again, err := DecodeEntry(e.Encode(nil))
		if err != nil {
			t.Fatalf("re-decoding: %v", err)
		}
		if !reflect.DeepEqual(normalize(again), normalize(e)) {
			t.Fatalf("round trip differs:\n%+v\n%+v", e, again)
		}
		// Decoding into an entry used before, with interned identities,
		// gives the same.
		room := decodeRoom{ops: make([]Op, 3), auth: []proto.ID{aliceID}}
		var reused Entry
		if err := decodeEntry(b, &reused, &room); err != nil {
			t.Fatalf("decoding reusing an entry: %v", err)
		}
		if !reflect.DeepEqual(&reused, e) {
			t.Fatalf("decoding reusing an entry differs:\n%+v\n%+v", e, &reused)
		}
		// Whatever decodes can be applied without panicking.
		m := New(Options{ExtendedTypes: b[len(b)-1]&1 == 0})
		m.ApplyEntry(1, &Entry{Type: EntryCreateSession, Session: e.Session})
		m.Apply(2, b)
	})
}

// TestEntryTerm: an entry with a Term is written in format 2 with the term
// last, and decodes (and peeks) to the same term; one without stays in
// format 1.
func TestEntryTerm(t *testing.T) {
	e := &Entry{Type: EntryTxn, ReqID: 7, Session: 3, Term: 42,
		Ops: []Op{{Op: proto.OpSetData, Path: "/a", Data: []byte("x"), Version: -1}}}
	b := e.Encode(nil)
	if b[0] != EntryFormatTerm {
		t.Fatalf("format %d, want %d", b[0], EntryFormatTerm)
	}
	if got := PeekTerm(b); got != 42 {
		t.Fatalf("PeekTerm = %d, want 42", got)
	}
	if id, ok := PeekReqID(b); !ok || id != 7 {
		t.Fatalf("PeekReqID = %d, %v", id, ok)
	}
	d, err := DecodeEntry(b)
	if err != nil || d.Term != 42 || d.ReqID != 7 || len(d.Ops) != 1 || d.Ops[0].Path != "/a" {
		t.Fatalf("DecodeEntry = %+v, %v", d, err)
	}
	e.Term = 0
	b = e.Encode(nil)
	if b[0] != EntryFormat || PeekTerm(b) != 0 {
		t.Fatalf("an entry without a term: format %d, PeekTerm %d", b[0], PeekTerm(b))
	}
}
