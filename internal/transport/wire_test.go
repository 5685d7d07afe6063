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
	fr := frameReader{r: bytes.NewReader(b)}
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
		{"keepalive payload", append(appendFrameHeader(nil, frameKeepAlive, 1), 0), errBadKeepAlive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fr := frameReader{r: bytes.NewReader(tt.b)}
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
	got, size, err := readSnapshotHeader(r, 2, 1)
	if err != nil || size != 12345 || got.Type != raftpb.MsgSnap || got.Snapshot.Metadata.Index != 9 {
		t.Fatalf("readSnapshotHeader = %+v, %d, %v", got, size, err)
	}
	if rest, _ := io.ReadAll(r); string(rest) != "body" {
		t.Errorf("read into the body: left %q", rest)
	}
	if _, _, err := readSnapshotHeader(bytes.NewReader(b), 3, 1); err == nil {
		t.Error("accepted a MsgSnap from another member than the stream's")
	}
	neg := appendSnapshotHeader(nil, p, -5)
	if _, _, err := readSnapshotHeader(bytes.NewReader(neg), 2, 1); !errors.Is(err, errBadSnapshotSize) {
		t.Errorf("negative size: %v", err)
	}
	for n := 0; n < len(b)-len("body"); n++ {
		if _, _, err := readSnapshotHeader(bytes.NewReader(b[:n]), 2, 1); err == nil {
			t.Fatalf("accepted a header cut at %d bytes", n)
		}
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
// messages, a snapshot stream's header) never panic and stop at bad input.
func FuzzFrames(f *testing.F) {
	m := raftMsg(2, 1, 3)
	p, _ := m.Marshal()
	var seed []byte
	seed = append(appendFrameHeader(seed, frameRaft, len(p)), p...)
	seed = appendFrameHeader(seed, frameKeepAlive, 0)
	seed = append(appendFrameHeader(seed, frameApp, 2), 'h', 'i')
	f.Add(seed)
	f.Add(appendFrameHeader(nil, frameRaft, maxFrameLen+1))
	s := snapMsg(2, 1, 4)
	sp, _ := s.Marshal()
	f.Add(appendSnapshotHeader(nil, sp, 10))
	f.Fuzz(func(t *testing.T, b []byte) {
		fr := frameReader{r: bytes.NewReader(b)}
		for {
			typ, p, err := fr.next()
			if err != nil {
				break
			}
			if len(p) > maxFrameLen || (typ == frameKeepAlive && len(p) != 0) {
				t.Fatalf("accepted a %v frame of %d bytes", typ, len(p))
			}
			if typ == frameRaft {
				if m, err := decodeRaft(p, 2, 1); err == nil && ((m.From != 2 && m.Type != raftpb.MsgProp && m.Type != raftpb.MsgReadIndex) || m.To != 1) {
					t.Fatalf("decodeRaft accepted %+v", m)
				}
			}
		}
		if m, size, err := readSnapshotHeader(bytes.NewReader(b), 2, 1); err == nil &&
			(m.Type != raftpb.MsgSnap || size < 0) {
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
