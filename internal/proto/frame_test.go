package proto

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

func TestReadFrame(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		max     int
		want    []byte
		wantErr error
		tooBig  int32
	}{
		{"payload", []byte{0, 0, 0, 3, 'a', 'b', 'c', 'x'}, 10, []byte("abc"), nil, 0},
		{"empty payload", []byte{0, 0, 0, 0}, 10, []byte{}, nil, 0},
		{"at max", []byte{0, 0, 0, 2, 1, 2}, 2, []byte{1, 2}, nil, 0},
		{"over max", []byte{0, 0, 0, 3, 1, 2, 3}, 2, nil, nil, 3},
		{"negative", []byte{0xff, 0xff, 0xff, 0xff}, 10, nil, nil, -1},
		{"huge", []byte{0x7f, 0xff, 0xff, 0xff}, DefaultMaxBuffer, nil, nil, 0x7fffffff},
		{"eof before length", nil, 10, nil, io.EOF, 0},
		{"eof inside length", []byte{0, 0}, 10, nil, io.ErrUnexpectedEOF, 0},
		{"eof before payload", []byte{0, 0, 0, 2}, 10, nil, io.ErrUnexpectedEOF, 0},
		{"eof inside payload", []byte{0, 0, 0, 2, 1}, 10, nil, io.ErrUnexpectedEOF, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadFrame(bytes.NewReader(tt.in), nil, tt.max)
			if tt.tooBig != 0 {
				var fe *FrameSizeError
				if !errors.As(err, &fe) || fe.Len != tt.tooBig || fe.Max != tt.max {
					t.Fatalf("err = %v, want FrameSizeError{%d, %d}", err, tt.tooBig, tt.max)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if !bytes.Equal(got, tt.want) || (tt.want != nil && got == nil) {
				t.Fatalf("payload = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestReadFrameReusesBuffer(t *testing.T) {
	buf := make([]byte, 0, 16)
	got, err := ReadFrame(bytes.NewReader([]byte{0, 0, 0, 2, 7, 8}), buf, 100)
	if err != nil {
		t.Fatal(err)
	}
	if &got[0] != &buf[:1][0] {
		t.Error("payload not read into the given buffer")
	}
	// One byte at a time still assembles the frame.
	got, err = ReadFrame(iotest.OneByteReader(bytes.NewReader([]byte{0, 0, 0, 2, 7, 8})), nil, 100)
	if err != nil || !bytes.Equal(got, []byte{7, 8}) {
		t.Fatalf("one-byte reader: %v, %v", got, err)
	}
}

func TestReadFrameStream(t *testing.T) {
	var stream []byte
	stream = AppendRequestFrame(stream, 1, OpGetData, &GetDataRequest{Path: "/a", Watch: true})
	stream = AppendRequestFrame(stream, XidPing, OpPing, nil)
	stream = AppendReplyFrame(stream, ReplyHeader{Xid: 1, Zxid: 2, Err: ErrNoNode}, &GetDataResponse{Data: []byte("ignored")})
	stream = AppendRecordFrame(stream, &ConnectResponse{TimeOut: 1, Passwd: make([]byte, 16)})
	r := bytes.NewReader(stream)

	p, err := ReadFrame(r, nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	d := NewDecoder(p)
	var h RequestHeader
	var req GetDataRequest
	h.Decode(d)
	req.Decode(d)
	if d.Err() != nil || h != (RequestHeader{Xid: 1, Op: OpGetData}) || req != (GetDataRequest{Path: "/a", Watch: true}) {
		t.Fatalf("first frame: %+v %+v %v", h, req, d.Err())
	}
	if p, err = ReadFrame(r, nil, 100); err != nil || len(p) != RequestHeaderSize {
		t.Fatalf("ping frame: %d bytes, %v", len(p), err)
	}
	// An error reply carries only the header, whatever response is given.
	if p, err = ReadFrame(r, nil, 100); err != nil || len(p) != ReplyHeaderSize {
		t.Fatalf("error reply: %d bytes, %v", len(p), err)
	}
	if p, err = ReadFrame(r, nil, 100); err != nil || len(p) != ConnectResponseSize {
		t.Fatalf("connect response: %d bytes, %v", len(p), err)
	}
	if _, err = ReadFrame(r, nil, 100); err != io.EOF {
		t.Fatalf("end of stream: %v, want io.EOF", err)
	}
}

func TestReadFramePayloadAfterFourLetterCheck(t *testing.T) {
	in := bytes.NewReader([]byte{0, 0, 0, 4, 1, 0, 0, 0, 'r', 'u', 'o', 'k'})
	var hdr [4]byte
	if _, err := io.ReadFull(in, hdr[:]); err != nil {
		t.Fatal(err)
	}
	if _, ok := IsFourLetterWord(hdr); ok {
		t.Fatal("length read as a four-letter word")
	}
	p, err := ReadFramePayload(in, hdr, nil, 100)
	if err != nil || !bytes.Equal(p, []byte{1, 0, 0, 0}) {
		t.Fatalf("payload %v, %v", p, err)
	}
	if _, err := io.ReadFull(in, hdr[:]); err != nil {
		t.Fatal(err)
	}
	if w, ok := IsFourLetterWord(hdr); !ok || w != "ruok" {
		t.Fatalf("IsFourLetterWord = %q, %v", w, ok)
	}
}

func TestStartFinishFrame(t *testing.T) {
	b := []byte("xy")
	b, start := StartFrame(b)
	b = append(b, "hello"...)
	if err := FinishFrame(b, start); err != nil {
		t.Fatal(err)
	}
	want := []byte{'x', 'y', 0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o'}
	if !bytes.Equal(b, want) {
		t.Fatalf("got % x, want % x", b, want)
	}
	for _, bad := range []int{-1, len(b) - 3, len(b) + 1} {
		if err := FinishFrame(b, bad); err == nil {
			t.Errorf("FinishFrame(start=%d) accepted", bad)
		}
	}
}

func TestIsFourLetterWord(t *testing.T) {
	known := []string{"ruok", "srvr", "stat", "conf", "cons", "envi", "mntr", "wchs", "wchc", "wchp",
		"dump", "isro", "crst", "srst", "dirs", "gtmk", "stmk", "hash"}
	for _, w := range known {
		var b [4]byte
		copy(b[:], w)
		if got, ok := IsFourLetterWord(b); !ok || got != w {
			t.Errorf("%q: got %q, %v", w, got, ok)
		}
	}
	for _, w := range []string{"RUOK", "ruo\x00", "abcd", "\x00\x00\x00\x2d", "\xff\xf4\xff\xfd", "kill", "srvR"} {
		var b [4]byte
		copy(b[:], w)
		if got, ok := IsFourLetterWord(b); ok {
			t.Errorf("%q recognised as %q", w, got)
		}
	}
}
