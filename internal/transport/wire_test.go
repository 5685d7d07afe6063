package transport

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
)

func TestHelloRoundTrip(t *testing.T) {
	for _, h := range []hello{
		validHello(),
		{version: version, kind: kindSnapshot, from: 1<<64 - 1, to: 7, cluster: ""},
		{version: version, kind: kindMessages, from: 3, to: 4, cluster: string(bytes.Repeat([]byte{'x'}, maxClusterIDLen))},
	} {
		b := appendHello(nil, h)
		got, err := readHello(bytes.NewReader(b))
		if err != nil || got != h {
			t.Errorf("readHello(appendHello(%+v)) = %+v, %v", h, got, err)
		}
	}
}

// TestHelloBytes pins the encoding of version 1.
func TestHelloBytes(t *testing.T) {
	got := appendHello(nil, hello{version: 1, kind: kindMessages, from: 2, to: 1, cluster: "ab"})
	want := []byte("PDKPEER\n" +
		"\x00\x00\x00\x01" + "\x01" +
		"\x00\x00\x00\x00\x00\x00\x00\x02" + "\x00\x00\x00\x00\x00\x00\x00\x01" +
		"\x00\x02ab")
	if !bytes.Equal(got, want) {
		t.Errorf("hello bytes\n%q\nwant\n%q", got, want)
	}
}

func TestReadHelloErrors(t *testing.T) {
	full := appendHello(nil, validHello())
	v2 := appendHello(nil, hello{version: 2, kind: kindMessages, from: 2, to: 1})
	long := appendHello(nil, hello{version: 1, kind: kindMessages, from: 2, to: 1})
	long = binary.BigEndian.AppendUint16(long[:len(long)-2], maxClusterIDLen+1)
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, io.ErrUnexpectedEOF},
		{"bad magic", []byte("PDKPEEr\n\x00\x00\x00\x01"), errBadMagic},
		{"version 2", v2[:12], errBadVersion},
		{"cut in the magic", full[:5], io.ErrUnexpectedEOF},
		{"cut after the version", full[:12], io.ErrUnexpectedEOF},
		{"cut in the ids", full[:20], io.ErrUnexpectedEOF},
		{"cut in the cluster id", full[:len(full)-1], io.ErrUnexpectedEOF},
		{"cluster id too long", long, errClusterIDLen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := readHello(bytes.NewReader(tt.b))
			if !errors.Is(err, tt.want) {
				t.Errorf("readHello = %+v, %v; want %v", h, err, tt.want)
			}
		})
	}
}

func TestFrameReader(t *testing.T) {
	big := bytes.Repeat([]byte{7}, 3*eagerAlloc+5) // grows as it arrives
	var b []byte
	b = append(appendFrameHeader(b, frameApp, 3), "abc"...)
	b = appendFrameHeader(b, frameKeepAlive, 0)
	b = append(appendFrameHeader(b, frameRaft, len(big)), big...)
	b = appendFrameHeader(b, frameApp, 0)
	fr := frameReader{r: bytes.NewReader(b), maxRaft: maxFrameLen}
	want := []struct {
		typ frameType
		p   []byte
	}{{frameApp, []byte("abc")}, {frameKeepAlive, nil}, {frameRaft, big}, {frameApp, nil}}
	for i, w := range want {
		typ, p, err := fr.next()
		if err != nil || typ != w.typ || !bytes.Equal(p, w.p) {
			t.Fatalf("frame %d: %v, %d bytes, %v; want %v, %d bytes", i, typ, len(p), err, w.typ, len(w.p))
		}
	}
	if _, _, err := fr.next(); err != io.EOF {
		t.Errorf("after the last frame: %v, want io.EOF", err)
	}
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"cut header", []byte{1, 0, 0}, io.ErrUnexpectedEOF},
		{"cut payload", append(appendFrameHeader(nil, frameApp, 4), 1, 2), io.ErrUnexpectedEOF},
		{"cut big payload", append(appendFrameHeader(nil, frameApp, 2*eagerAlloc), 1, 2), io.ErrUnexpectedEOF},
		{"bad type", appendFrameHeader(nil, 4, 0), errBadFrameType},
		{"too large", appendFrameHeader(nil, frameRaft, maxFrameLen+1), errFrameTooLarge},
		{"raft frame over its bound", appendFrameHeader(nil, frameRaft, 1<<20+1), errFrameTooLarge},
		{"keepalive payload", append(appendFrameHeader(nil, frameKeepAlive, 1), 0), errBadKeepAlive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fr := frameReader{r: bytes.NewReader(tt.b), maxRaft: 1 << 20}
			if _, _, err := fr.next(); !errors.Is(err, tt.want) {
				t.Errorf("next = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestSnapshotHeader(t *testing.T) {
	m := snapMsg(2, 1, 9)
	m.Snapshot.Data = nil
	p, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	b := append(appendSnapshotHeader(nil, p, 12345), "body"...)
	r := bytes.NewReader(b)
	got, size, err := readSnapshotHeader(r, 2, 1, DefaultMaxRaftMessageBytes)
	if err != nil || size != 12345 || got.Type != raftpb.MsgSnap || got.Snapshot.Metadata.Index != 9 {
		t.Fatalf("readSnapshotHeader = %+v, %d, %v", got, size, err)
	}
	if rest, _ := io.ReadAll(r); string(rest) != "body" {
		t.Errorf("read into the body: left %q", rest)
	}
	if _, _, err := readSnapshotHeader(bytes.NewReader(b), 3, 1, DefaultMaxRaftMessageBytes); err == nil {
		t.Error("accepted a MsgSnap from another member than the stream's")
	}
	neg := appendSnapshotHeader(nil, p, -5)
	if _, _, err := readSnapshotHeader(bytes.NewReader(neg), 2, 1, DefaultMaxRaftMessageBytes); !errors.Is(err, errBadSnapshotSize) {
		t.Errorf("negative size: %v", err)
	}
	for n := 0; n < len(b)-len("body"); n++ {
		if _, _, err := readSnapshotHeader(bytes.NewReader(b[:n]), 2, 1, DefaultMaxRaftMessageBytes); err == nil {
			t.Fatalf("accepted a header cut at %d bytes", n)
		}
	}
	if _, _, err := readSnapshotHeader(bytes.NewReader(b), 2, 1, len(p)-1); !errors.Is(err, errFrameTooLarge) {
		t.Errorf("message over the bound: %v", err)
	}
	full := snapMsg(2, 1, 9)
	withData, err := full.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := readSnapshotHeader(bytes.NewReader(appendSnapshotHeader(nil, withData, 0)), 2, 1, DefaultMaxRaftMessageBytes); !errors.Is(err, errSnapshotData) {
		t.Errorf("MsgSnap carrying its data: %v", err)
	}
}

// FuzzHello checks that readHello never panics and that what it accepts
// re-encodes to the bytes it read.
func FuzzHello(f *testing.F) {
	f.Add(appendHello(nil, validHello()))
	f.Add(appendHello(nil, hello{version: 2}))
	f.Add(appendHello(nil, hello{version: 1, kind: kindSnapshot, from: 1, to: 2, cluster: "x"}))
	f.Add([]byte("PDKPEER\n\x00\x00\x00\x01\x01"))
	f.Add([]byte("GET / HTTP/1.1\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		h, err := readHello(r)
		if err != nil {
			return
		}
		n := len(b) - r.Len()
		if again := appendHello(nil, h); !bytes.Equal(again, b[:n]) {
			t.Fatalf("re-encoded %q, read %q", again, b[:n])
		}
	})
}

// FuzzFrames checks that the decoders of a stream's contents (frames, raft
// messages, a snapshot stream's header) never panic, stop at bad input and
// never accept responses or a snapshot header's data.
func FuzzFrames(f *testing.F) {
	const maxRaft = 1 << 16
	m := raftMsg(2, 1, 3)
	p, _ := m.Marshal()
	var seed []byte
	seed = append(appendFrameHeader(seed, frameRaft, len(p)), p...)
	seed = appendFrameHeader(seed, frameKeepAlive, 0)
	seed = append(appendFrameHeader(seed, frameApp, 2), 'h', 'i')
	f.Add(seed)
	f.Add(appendFrameHeader(nil, frameRaft, maxFrameLen+1))
	f.Add(appendFrameHeader(nil, frameRaft, maxRaft+1))
	nested := nestedResponses(raftMsg(2, 1, 3), 64)
	f.Add(append(appendFrameHeader(nil, frameRaft, len(nested)), nested...))
	empty := emptyEntries(raftMsg(2, 1, 3), 16)
	f.Add(append(appendFrameHeader(nil, frameRaft, len(empty)), empty...))
	s := snapMsg(2, 1, 4)
	sp, _ := s.Marshal()
	f.Add(appendSnapshotHeader(nil, sp, 10))
	s.Snapshot.Data = nil
	sp, _ = s.Marshal()
	f.Add(appendSnapshotHeader(nil, sp, 10))
	f.Fuzz(func(t *testing.T, b []byte) {
		fr := frameReader{r: bytes.NewReader(b), maxRaft: maxRaft}
		for {
			typ, p, err := fr.next()
			if err != nil {
				break
			}
			if len(p) > maxFrameLen || (typ == frameRaft && len(p) > maxRaft) || (typ == frameKeepAlive && len(p) != 0) {
				t.Fatalf("accepted a %v frame of %d bytes", typ, len(p))
			}
			if typ == frameRaft {
				if m, err := decodeRaft(p, 2, 1); err == nil && ((m.From != 2 && m.Type != raftpb.MsgProp && m.Type != raftpb.MsgReadIndex) || m.To != 1 || m.Responses != nil) {
					t.Fatalf("decodeRaft accepted %+v", m)
				}
			}
		}
		if m, size, err := readSnapshotHeader(bytes.NewReader(b), 2, 1, maxRaft); err == nil &&
			(m.Type != raftpb.MsgSnap || size < 0 || len(m.Snapshot.Data) != 0 || m.Responses != nil) {
			t.Fatalf("readSnapshotHeader accepted %+v, size %d", m, size)
		}
	})
}

// TestDecodeRaftForwarded: raft forwards proposals and read-index requests
// with their original sender, so those may come from another member than
// the stream's; every other message must come from the stream's peer.
func TestDecodeRaftForwarded(t *testing.T) {
	for _, tc := range []struct {
		typ  raftpb.MessageType
		from uint64
		ok   bool
	}{
		{raftpb.MsgProp, 3, true},
		{raftpb.MsgReadIndex, 3, true},
		{raftpb.MsgApp, 3, false},
		{raftpb.MsgHeartbeat, 3, false},
		{raftpb.MsgApp, 2, true},
	} {
		m := raftpb.Message{Type: tc.typ, From: tc.from, To: 1}
		p, err := m.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		_, err = decodeRaft(p, 2, 1)
		if (err == nil) != tc.ok {
			t.Errorf("%v from %d on the stream from 2: err %v, want ok=%v", tc.typ, tc.from, err, tc.ok)
		}
	}
}

// nestedResponses returns base's encoding followed by a Responses field
// (14) holding a message that holds one in turn, and so on, as deep as fits
// in about size more bytes: what raftpb's decoder would recurse into once
// per level.
func nestedResponses(base raftpb.Message, size int) []byte {
	p, err := base.Marshal()
	if err != nil {
		panic(err)
	}
	// lens[k] is the length of the encoding of k nested Responses fields.
	lens := []int{0}
	for n := 0; n < size; {
		n += 1 + len(binary.AppendUvarint(nil, uint64(n)))
		lens = append(lens, n)
	}
	for k := len(lens) - 1; k > 0; k-- {
		p = append(p, fieldMessageResponses<<3|wireBytes)
		p = binary.AppendUvarint(p, uint64(lens[k-1]))
	}
	return p
}

// emptyEntries returns base's encoding followed by n empty Entries (field
// 7), two bytes each.
func emptyEntries(base raftpb.Message, n int) []byte {
	p, err := base.Marshal()
	if err != nil {
		panic(err)
	}
	for range n {
		p = append(p, 7<<3|wireBytes, 0)
	}
	return p
}

func TestNestedResponsesHelper(t *testing.T) {
	p := nestedResponses(raftMsg(2, 1, 3), 200)
	var m raftpb.Message
	if err := m.Unmarshal(p); err != nil {
		t.Fatal(err)
	}
	depth := 0
	for r := m.Responses; len(r) == 1; r = r[0].Responses {
		depth++
	}
	if m.Index != 3 || depth < 50 {
		t.Errorf("decoded index %d with %d nested responses", m.Index, depth)
	}
}

func TestCheckRaftFields(t *testing.T) {
	marshal := func(m raftpb.Message) []byte {
		p, err := m.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	prop := raftpb.Message{Type: raftpb.MsgProp, From: 3, To: 1}
	for i := range 100 {
		prop.Entries = append(prop.Entries, raftpb.Entry{Data: []byte{byte(i)}})
	}
	full := raftMsg(2, 1, 7)
	full.LogTerm, full.Commit, full.Reject, full.RejectHint, full.Vote = 1, 5, true, 4, 2
	full.Context = []byte("read ctx")
	header := snapMsg(2, 1, 9)
	header.Snapshot.Data = nil
	local := raftpb.Message{Type: raftpb.MsgStorageAppend, From: 2, To: 1,
		Responses: []raftpb.Message{{Type: raftpb.MsgStorageAppendResp, From: 1, To: 2}}}
	tests := []struct {
		name   string
		p      []byte
		header bool // a snapshot stream's MsgSnap
		want   error
	}{
		{"MsgApp", marshal(raftMsg(2, 1, 3)), false, nil},
		{"every scalar field", marshal(full), false, nil},
		{"MsgProp of many entries", marshal(prop), false, nil},
		{"empty", nil, false, nil},
		{"unknown field", binary.AppendUvarint(binary.AppendUvarint(marshal(raftMsg(2, 1, 3)), 100<<3|wireVarint), 1), false, nil},
		{"snapshot header", marshal(header), true, nil},
		{"MsgSnap with data on a message stream", marshal(snapMsg(2, 1, 9)), false, nil},
		{"snapshot header with data", marshal(snapMsg(2, 1, 9)), true, errSnapshotData},
		{"responses", marshal(local), false, errRaftResponses},
		{"responses in a snapshot header", append(marshal(header), nestedResponses(raftpb.Message{}, 10)...), true, errRaftResponses},
		{"deeply nested responses", nestedResponses(raftMsg(2, 1, 3), 3<<20), false, errRaftResponses},
		{"cut key", []byte{0x80}, false, errMalformedRaft},
		{"field 0", []byte{0x00, 0x01}, false, errMalformedRaft},
		{"cut varint", []byte{1<<3 | wireVarint, 0x80}, false, errMalformedRaft},
		{"varint over 64 bits", append([]byte{1<<3 | wireVarint}, bytes.Repeat([]byte{0xff}, 10)...), false, errMalformedRaft},
		{"cut fixed64", []byte{1<<3 | wireFixed64, 1, 2, 3}, false, errMalformedRaft},
		{"cut fixed32", []byte{1<<3 | wireFixed32, 1}, false, errMalformedRaft},
		{"length past the end", []byte{12<<3 | wireBytes, 5, 'a'}, false, errMalformedRaft},
		{"huge length", append([]byte{12<<3 | wireBytes}, binary.AppendUvarint(nil, 1<<63)...), false, errMalformedRaft},
		{"group", []byte{1<<3 | 3}, false, errMalformedRaft},
		{"malformed snapshot in a header", append(marshal(raftpb.Message{Type: raftpb.MsgSnap}), fieldMessageSnapshot<<3|wireBytes, 2, 0x80, 0x80), true, errMalformedRaft},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkRaftFields(tt.p, tt.header)
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("checkRaftFields = %v, want %v", err, tt.want)
			}
			if err == nil {
				// What passes is left to raftpb's decoder, which takes it.
				var m raftpb.Message
				if err := m.Unmarshal(tt.p); err != nil {
					t.Errorf("raftpb refuses what passed: %v", err)
				}
			}
		})
	}
}
