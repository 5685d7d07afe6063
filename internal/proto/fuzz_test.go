package proto

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Every decoder has a fuzz target. Each checks that decoding never panics
// and that whatever decodes is stable: re-encoding it and decoding again
// gives the same value.

// allOpcodes lists every named opcode plus a few unnamed ones.
func allOpcodes() []OpCode {
	ops := []OpCode{10, 23, 99, 108, -12, 1 << 20}
	for op := range opNames {
		ops = append(ops, op)
	}
	return ops
}

// goldenBodies returns the captured frames by file name, for seeding.
func goldenBodies(f *testing.F) map[string][]byte {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.bin"))
	if err != nil {
		f.Fatal(err)
	}
	out := make(map[string][]byte, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(p), ".bin")] = b
	}
	return out
}

func FuzzDecodeRequest(f *testing.F) {
	for _, tc := range recordCases() {
		if _, ok := tc.value.(Request); !ok {
			continue
		}
		for _, op := range allOpcodes() {
			f.Add(int32(op), tc.value.Append(nil))
		}
	}
	f.Add(int32(OpMulti), []byte{0x7f, 0xff, 0xff, 0xff})
	for name, frame := range goldenBodies(f) {
		if strings.HasPrefix(name, "java_") && len(frame) >= 4+RequestHeaderSize {
			var h RequestHeader
			if err := Unmarshal(frame[4:], &h); err == nil {
				f.Add(int32(h.Op), frame[4+RequestHeaderSize:])
			}
		}
	}
	f.Fuzz(func(t *testing.T, op int32, body []byte) {
		req, err := DecodeRequest(OpCode(op), body)
		if err != nil {
			if req != nil {
				t.Fatal("request returned with an error")
			}
			if !errors.Is(err, ErrShortBuffer) && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnknownOpcode) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		again, err := DecodeRequest(OpCode(op), req.Append(nil))
		if err != nil {
			t.Fatalf("re-encoded %v request does not decode: %v", OpCode(op), err)
		}
		if !reflect.DeepEqual(req, again) {
			t.Fatalf("unstable: %#v vs %#v", req, again)
		}
	})
}

func FuzzDecodeResponse(f *testing.F) {
	for name, frame := range goldenBodies(f) {
		if strings.HasPrefix(name, "connect") || strings.HasPrefix(name, "java_") || len(frame) < 4+ReplyHeaderSize {
			continue
		}
		for _, op := range allOpcodes() {
			f.Add(int32(op), frame[4+ReplyHeaderSize:])
		}
	}
	f.Fuzz(func(t *testing.T, op int32, body []byte) {
		resp, err := DecodeResponse(OpCode(op), body)
		if err != nil {
			return
		}
		again, err := DecodeResponse(OpCode(op), resp.Append(nil))
		if err != nil || !reflect.DeepEqual(resp, again) {
			t.Fatalf("unstable %v response: %#v vs %#v (%v)", OpCode(op), resp, again, err)
		}
	})
}

// fuzzRecord is the body of the single-record fuzz targets.
func fuzzRecord(t *testing.T, in []byte, empty func() Record) {
	r := empty()
	if err := Unmarshal(in, r); err != nil {
		if !errors.Is(err, ErrShortBuffer) && !errors.Is(err, ErrMalformed) {
			t.Fatalf("error wraps no sentinel: %v", err)
		}
		return
	}
	enc := r.Append(nil)
	again := empty()
	if err := Unmarshal(enc, again); err != nil || !reflect.DeepEqual(r, again) {
		t.Fatalf("unstable: %#v vs %#v (%v)", r, again, err)
	}
	if !bytes.Equal(again.Append(nil), enc) {
		t.Fatal("second encoding differs from the first")
	}
}

func FuzzConnectRequest(f *testing.F) {
	f.Add((&ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16)}).Append(nil))
	f.Add((&ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16), OmitReadOnly: true}).Append(nil))
	f.Add((&ConnectRequest{}).Append(nil))
	if frame, ok := goldenBodies(f)["java_connect"]; ok {
		f.Add(frame[4:])
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzRecord(t, in, func() Record { return new(ConnectRequest) })
	})
}

func FuzzConnectResponse(f *testing.F) {
	for name, frame := range goldenBodies(f) {
		if strings.HasPrefix(name, "connect") {
			f.Add(frame[4:])
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzRecord(t, in, func() Record { return new(ConnectResponse) })
	})
}

func FuzzMultiRequest(f *testing.F) {
	f.Add((&MultiRequest{Ops: testMultiOps()}).Append(nil))
	f.Add((&MultiRequest{Ops: []MultiOp{{Op: OpGetData, Path: "/"}, {Op: OpGetChildren, Path: "/a"}}}).Append(nil))
	f.Add((&MultiRequest{}).Append(nil))
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzRecord(t, in, func() Record { return new(MultiRequest) })
	})
}

func FuzzMultiResponse(f *testing.F) {
	f.Add((&MultiResponse{Results: testMultiResults()}).Append(nil))
	for name, frame := range goldenBodies(f) {
		if strings.HasPrefix(name, "multi") {
			f.Add(frame[4+ReplyHeaderSize:])
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzRecord(t, in, func() Record { return new(MultiResponse) })
	})
}

// FuzzRecords runs every record type of recordCases over the same input,
// selected by the first byte.
func FuzzRecords(f *testing.F) {
	cases := recordCases()
	for i, tc := range cases {
		f.Add(append([]byte{byte(i)}, tc.value.Append(nil)...))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		fuzzRecord(t, in[1:], cases[int(in[0])%len(cases)].empty)
	})
}

func FuzzReadFrame(f *testing.F) {
	for _, frame := range goldenBodies(f) {
		f.Add(frame, 64)
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, 10)
	f.Add([]byte{0, 0, 0, 5, 1}, 10)
	f.Add([]byte("ruok"), DefaultMaxBuffer)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max < 0 || max > 1<<20 {
			return
		}
		r := bytes.NewReader(in)
		for i := 0; i <= len(in); i++ { // each frame consumes at least 4 bytes
			p, err := ReadFrame(r, nil, max)
			var fe *FrameSizeError
			switch {
			case err == nil:
				if len(p) > max {
					t.Fatalf("payload of %d bytes over max %d", len(p), max)
				}
				continue
			case err == io.EOF, errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &fe):
				return
			default:
				t.Fatalf("unexpected error %v", err)
			}
		}
		t.Fatal("ReadFrame looped without consuming input")
	})
}
