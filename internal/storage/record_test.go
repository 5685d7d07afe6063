package storage

import (
	"bytes"
	"errors"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
)

func mustEntryRecord(t testing.TB, e raftpb.Entry) []byte {
	t.Helper()
	b, err := appendMessageRecord(nil, recordEntry, &e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeRecord(t *testing.T) {
	good := mustEntryRecord(t, raftpb.Entry{Term: 2, Index: 7, Data: []byte("hello")})
	flip := func(i int) []byte {
		b := bytes.Clone(good)
		b[i] ^= 0x40
		return b
	}
	marker := appendMarkerRecord(nil, SnapshotMarker{Index: 9, Term: 3})
	shortMarker := bytes.Clone(marker[:recordHeaderLen+8])
	sealRecord(shortMarker, recordSnapshot)
	tests := []struct {
		name    string
		in      []byte
		wantErr error
		wantTyp byte
		wantN   int
	}{
		{"entry", good, nil, recordEntry, len(good)},
		{"entry followed by more", append(bytes.Clone(good), 1, 2, 3), nil, recordEntry, len(good)},
		{"marker", marker, nil, recordSnapshot, recordHeaderLen + markerLen},
		{"empty", nil, errTruncated, 0, 0},
		{"header only", good[:recordHeaderLen], errTruncated, 0, 0},
		{"payload cut", good[:len(good)-1], errTruncated, 0, 0},
		{"length too big", []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 1}, errLength, 0, 0},
		{"type zero", flip(8)[:len(good)], errType, 0, 0},
		{"crc flipped", flip(5), errChecksum, 0, 0},
		{"payload flipped", flip(len(good) - 1), errChecksum, 0, 0},
		{"zeros", make([]byte, 64), errType, 0, 0},
		{"marker of wrong length", shortMarker, errLength, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ, _, n, err := decodeRecord(tt.in)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && (typ != tt.wantTyp || n != tt.wantN) {
				t.Fatalf("got type %d length %d, want %d %d", typ, n, tt.wantTyp, tt.wantN)
			}
		})
	}
}

func TestRecordRoundTrip(t *testing.T) {
	e := raftpb.Entry{Term: 5, Index: 1 << 40, Type: raftpb.EntryConfChange, Data: bytes.Repeat([]byte{7}, 1000)}
	hs := raftpb.HardState{Term: 5, Vote: 1, Commit: 99}
	m := SnapshotMarker{Index: 1<<63 + 5, Term: 77}
	b := mustEntryRecord(t, e)
	b, err := appendMessageRecord(b, recordHardState, &hs)
	if err != nil {
		t.Fatal(err)
	}
	b = appendMarkerRecord(b, m)
	var got []record
	for off := 0; off < len(b); {
		typ, payload, n, err := decodeRecord(b[off:])
		if err != nil {
			t.Fatalf("offset %d: %v", off, err)
		}
		var r record
		if err := parseRecord(typ, payload, &r); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
		off += n
	}
	if len(got) != 3 || got[0].entry.Index != e.Index || !bytes.Equal(got[0].entry.Data, e.Data) ||
		got[0].entry.Type != e.Type || got[1].hs != hs || got[2].marker != m {
		t.Fatalf("round trip gave %+v", got)
	}
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add(mustEntryRecord(f, raftpb.Entry{Term: 1, Index: 1, Data: []byte("x")}))
	f.Add(appendMarkerRecord(nil, SnapshotMarker{Index: 1, Term: 1}))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		typ, payload, n, err := decodeRecord(b)
		if err != nil {
			return
		}
		if n > len(b) || n != recordHeaderLen+len(payload) {
			t.Fatalf("decoded length %d of %d bytes with payload %d", n, len(b), len(payload))
		}
		var r record
		_ = parseRecord(typ, payload, &r) // must not panic
		data := append(encodeSegmentHeader(0, 1), b...)
		if _, bad, err := walkSegment(segment{path: "fuzz"}, data, func(int, *record) error { return nil }); err == nil && bad != nil {
			_ = tailDamage("fuzz", data, bad) // must not panic
		}
	})
}

func TestValidRecordAfter(t *testing.T) {
	rec := mustEntryRecord(t, raftpb.Entry{Term: 1, Index: 3, Data: []byte("payload")})
	garbage := bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef, 0x01}, 50)
	tests := []struct {
		name      string
		data      []byte
		from      int
		wantFound bool
		wantAt    int
	}{
		{"zeros", make([]byte, 1000), 0, false, 0},
		{"garbage", garbage, 0, false, 0},
		{"record after garbage", append(bytes.Clone(garbage), rec...), 1, true, len(garbage)},
		{"record after zeros", append(make([]byte, 17), rec...), 0, true, 17},
		{"cut record", append(make([]byte, 17), rec[:len(rec)-1]...), 0, false, 0},
		{"record before from", append(bytes.Clone(rec), make([]byte, 40)...), 1, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			budget := scanBudget
			at, found, exhausted := validRecordAfter(tt.data, tt.from, &budget)
			if found != tt.wantFound || (found && at != tt.wantAt) || exhausted {
				t.Fatalf("got at=%d found=%v exhausted=%v, want at=%d found=%v", at, found, exhausted, tt.wantAt, tt.wantFound)
			}
		})
	}
}

// FuzzTailDamage checks that judging the bad record of a last segment
// never panics, whatever the segment holds after its header.
func FuzzTailDamage(f *testing.F) {
	rec := mustEntryRecord(f, raftpb.Entry{Term: 1, Index: 1, Data: []byte("payload")})
	f.Add(append(bytes.Clone(rec), rec[:len(rec)-2]...))
	f.Add(append(append(bytes.Clone(rec[:12]), make([]byte, 600)...), rec...))
	f.Add(append([]byte{0, 0, 0, 0xff, 1, 2, 3, 4, 1}, rec...))
	f.Fuzz(func(t *testing.T, b []byte) {
		data := append(encodeSegmentHeader(0, 1), b...)
		_, bad, err := walkSegment(segment{path: "fuzz"}, data, func(int, *record) error { return nil })
		if err != nil || bad == nil {
			return
		}
		if err := tailDamage("fuzz", data, bad); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("tailDamage = %v, want nil or corruption", err)
		}
	})
}
