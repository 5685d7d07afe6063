package fsm

import (
	"encoding/binary"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// TestConnectionOrder applies client writes carrying their connection's
// order (Entry.Conn, Entry.Seq) and checks that a write applies only right
// after its connection's previous one, or as the first of a connection:
// one whose predecessor never applied is refused with a lost connection
// and changes nothing, and so is everything after it on that connection.
func TestConnectionOrder(t *testing.T) {
	type w struct {
		conn, seq uint64
		applies   bool
	}
	for _, tc := range []struct {
		name   string
		writes []w
	}{
		{"in order", []w{{7, 1, true}, {7, 2, true}, {7, 3, true}}},
		{"first lost", []w{{7, 2, false}, {7, 3, false}}},
		{"middle lost", []w{{7, 1, true}, {7, 3, false}, {7, 4, false}}},
		{"repeated", []w{{7, 1, true}, {7, 1, false}, {7, 2, true}}},
		{"new connection", []w{{7, 1, true}, {7, 2, true}, {9, 1, true}, {9, 2, true}}},
		{"new connection must start at 1", []w{{7, 1, true}, {9, 2, false}, {9, 1, true}}},
		{"old connection after a new one", []w{{7, 1, true}, {9, 1, true}, {7, 2, false}}},
		{"no connection: not ordered", []w{{7, 1, true}, {0, 0, true}, {7, 2, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			h.apply(&Entry{Type: EntryCreateSession, Session: 0x51, Timeout: 3000, Passwd: []byte("pw")})
			h.apply(&Entry{Type: EntryTxn, Session: 0x51, Ops: []Op{{Op: proto.OpCreate, Path: "/n", ACL: openACL}}})
			version := int32(0)
			for i, x := range tc.writes {
				r := h.apply(&Entry{Type: EntryTxn, Session: 0x51, Conn: x.conn, Seq: x.seq,
					Ops: []Op{{Op: proto.OpSetData, Path: "/n", Data: []byte{byte(i)}, Version: -1}}})
				if x.applies {
					version++
				}
				want := proto.ErrOK
				if !x.applies {
					want = proto.ErrConnectionLoss
				}
				if r.Err != want || len(r.Changes) != 0 != x.applies {
					t.Fatalf("write %d (conn %d, seq %d): err %v, %d changes; want err %v", i, x.conn, x.seq, r.Err, len(r.Changes), want)
				}
				if got := h.m.Tree().Get("/n").Version; got != version {
					t.Fatalf("write %d (conn %d, seq %d): version %d, want %d", i, x.conn, x.seq, got, version)
				}
			}
		})
	}
}

// TestConnectionOrderSurvivesSnapshot checks that a restored machine knows
// where each session's connection stands, as the machine it came from
// does: replicas that restored a snapshot and replicas that applied the
// log must refuse the same writes.
func TestConnectionOrderSurvivesSnapshot(t *testing.T) {
	h := newHarness(t, Options{})
	h.apply(&Entry{Type: EntryCreateSession, Session: 0x51, Timeout: 3000, Passwd: []byte("pw")})
	h.apply(&Entry{Type: EntryTxn, Session: 0x51, Conn: 7, Seq: 1, Ops: []Op{{Op: proto.OpCreate, Path: "/n", ACL: openACL}}})
	b := h.m.AppendSnapshot(nil)
	for _, tc := range []struct {
		seq  uint64
		want proto.ErrCode
	}{{2, proto.ErrOK}, {3, proto.ErrConnectionLoss}} {
		m := New(Options{})
		if err := m.Restore(b); err != nil {
			t.Fatal(err)
		}
		r := m.ApplyEntry(m.AppliedIndex()+1, &Entry{Type: EntryTxn, Session: 0x51, Conn: 7, Seq: tc.seq,
			Ops: []Op{{Op: proto.OpSetData, Path: "/n", Version: -1}}})
		if r.Err != tc.want {
			t.Errorf("after restore, seq %d: %v, want %v", tc.seq, r.Err, tc.want)
		}
	}
	// A format 2 snapshot (no connection order): the session's next write
	// must be a connection's first.
	off := 4 + 4 + 8 + 4 + 8 + 4 + 4 + len("pw") + 8
	old := append(append([]byte{}, b[:off]...), b[off+16:]...)
	binary.BigEndian.PutUint32(old[4:8], snapshotFormatNoConn)
	m := New(Options{})
	if err := m.Restore(old); err != nil {
		t.Fatalf("format 2: %v", err)
	}
	if r := m.ApplyEntry(m.AppliedIndex()+1, &Entry{Type: EntryTxn, Session: 0x51, Conn: 7, Seq: 2,
		Ops: []Op{{Op: proto.OpSetData, Path: "/n", Version: -1}}}); r.Err != proto.ErrConnectionLoss {
		t.Errorf("format 2, seq 2: %v, want a lost connection", r.Err)
	}
}
