package proto

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// testMultiOps has one op of every write type, with only the fields each
// op's record carries, so it round-trips exactly.
func testMultiOps() []MultiOp {
	acl := sampleACL()
	return []MultiOp{
		{Op: OpCreate, Path: "/m/a", Data: []byte("a"), ACL: acl, Flags: FlagPersistentSequential},
		{Op: OpCreate2, Path: "/m/b", Data: []byte{}, ACL: acl[:1], Flags: FlagEphemeral},
		{Op: OpCreateContainer, Path: "/m/c", ACL: acl, Flags: FlagContainer},
		{Op: OpCreateTTL, Path: "/m/t", Data: []byte("t"), ACL: acl, Flags: FlagPersistentWithTTL, TTL: 5000},
		{Op: OpSetData, Path: "/m/a", Data: []byte("x"), Version: 2},
		{Op: OpCheck, Path: "/m/a", Version: 3},
		{Op: OpDelete, Path: "/m/a", Version: -1},
	}
}

// testMultiResults has one result of every type in canonical form.
func testMultiResults() []MultiResult {
	st := sampleStat()
	st2 := st
	st2.Version = 9
	return []MultiResult{
		{Op: OpCreate, Path: "/m/a0000000001"},
		{Op: OpCreate2, Path: "/m/b", Stat: &st},
		{Op: OpSetData, Stat: &st2},
		{Op: OpCheck},
		{Op: OpDelete},
		{Op: OpGetData, Data: []byte("d"), Stat: &st},
		{Op: OpGetChildren, Children: []string{"x", "y"}},
		{Op: OpError, Err: ErrNoNode},
		{Op: OpError, Err: ErrOK},
	}
}

func TestMultiRequestEncoding(t *testing.T) {
	req := MultiRequest{Ops: []MultiOp{{Op: OpDelete, Path: "/a", Version: 5}}}
	want := []byte{
		0, 0, 0, 2, 0, 0xff, 0xff, 0xff, 0xff, // header {delete, false, -1}
		0, 0, 0, 2, '/', 'a', 0, 0, 0, 5, // DeleteRequest
		0xff, 0xff, 0xff, 0xff, 1, 0xff, 0xff, 0xff, 0xff, // end {-1, true, -1}
	}
	if got := req.Append(nil); !bytes.Equal(got, want) {
		t.Fatalf("got % x\nwant % x", got, want)
	}
	// Read ops carry watch=false; the flag is ignored when decoding.
	read := MultiRequest{Ops: []MultiOp{{Op: OpGetData, Path: "/r"}}}
	enc := read.Append(nil)
	if enc[MultiHeaderSize+4+2] != 0 {
		t.Errorf("watch byte = %d, want 0", enc[MultiHeaderSize+4+2])
	}
	enc[MultiHeaderSize+4+2] = 1
	var got MultiRequest
	if err := Unmarshal(enc, &got); err != nil || !reflect.DeepEqual(got, read) {
		t.Errorf("watch=true decoded as %+v, %v", got, err)
	}
}

func TestMultiRequestEmpty(t *testing.T) {
	enc := (&MultiRequest{}).Append(nil)
	if len(enc) != MultiHeaderSize {
		t.Fatalf("empty multi is %d bytes, want only the end header", len(enc))
	}
	var got MultiRequest
	if err := Unmarshal(enc, &got); err != nil || len(got.Ops) != 0 {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestMultiRequestStopsAtDone(t *testing.T) {
	// ZooKeeper stops at the first header with done set, whatever its type.
	var b []byte
	h := MultiHeader{Type: OpDelete, Err: -1}
	b = h.Append(b)
	b = (&DeleteRequest{Path: "/a"}).Append(b)
	end := MultiHeader{Type: OpCreate, Done: true, Err: 0}
	b = end.Append(b)
	b = append(b, 0xde, 0xad) // trailing garbage is ignored
	var got MultiRequest
	if err := Unmarshal(b, &got); err != nil || len(got.Ops) != 1 || got.Ops[0].Path != "/a" {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestMultiRequestRejects(t *testing.T) {
	op := func(typ OpCode, body []byte) []byte {
		h := MultiHeader{Type: typ, Err: -1}
		return append(h.Append(nil), body...)
	}
	end := multiEnd.Append(nil)
	path := (&GetDataRequest{Path: "/x"}).Append(nil)
	del := (&DeleteRequest{Path: "/x"}).Append(nil)
	tests := []struct {
		name string
		in   []byte
		want error
		msg  string
	}{
		{"ping op", concat(op(OpPing, nil), end), ErrMalformed, "ping"},
		{"exists op", concat(op(OpExists, path), end), ErrMalformed, "exists"},
		{"nested multi", concat(op(OpMulti, nil), end), ErrMalformed, "multi"},
		{"error type not done", concat(op(OpError, nil), end), ErrMalformed, "error"},
		{"mixing write then read", concat(op(OpDelete, del), op(OpGetData, path), end), ErrMalformed, "mixes"},
		{"mixing read then write", concat(op(OpGetData, path), op(OpDelete, del), end), ErrMalformed, "mixes"},
		{"no end header", op(OpDelete, del), ErrShortBuffer, "offset"},
		{"empty input", nil, ErrShortBuffer, "offset 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got MultiRequest
			err := Unmarshal(tt.in, &got)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want %v mentioning %q", err, tt.want, tt.msg)
			}
			if got.Ops != nil {
				t.Errorf("ops set on failure: %+v", got.Ops)
			}
		})
	}
}

func TestMultiRequestValidate(t *testing.T) {
	tests := []struct {
		name string
		ops  []MultiOp
		ok   bool
	}{
		{"writes", testMultiOps(), true},
		{"reads", []MultiOp{{Op: OpGetData}, {Op: OpGetChildren}}, true},
		{"empty", nil, true},
		{"getChildren2 not allowed", []MultiOp{{Op: OpGetChildren2}}, false},
		{"mixed", []MultiOp{{Op: OpCreate}, {Op: OpGetData}}, false},
	}
	for _, tt := range tests {
		err := (&MultiRequest{Ops: tt.ops}).Validate()
		if (err == nil) != tt.ok {
			t.Errorf("%s: Validate = %v", tt.name, err)
		}
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: error does not wrap ErrMalformed: %v", tt.name, err)
		}
	}
}

func TestMultiResponseEncoding(t *testing.T) {
	// A failed multi as ZooKeeper writes it: error results whose header
	// carries the code too, then the end header.
	resp := MultiResponse{Results: []MultiResult{
		{Op: OpError, Err: ErrOK},
		{Op: OpError, Err: ErrNoNode},
		{Op: OpError, Err: ErrRuntimeInconsistency},
	}}
	want := []byte{
		0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0xff, 0xff, 0xff, 0xff, 0, 0xff, 0xff, 0xff, 0x9b, 0xff, 0xff, 0xff, 0x9b,
		0xff, 0xff, 0xff, 0xff, 0, 0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xff, 0xfe,
		0xff, 0xff, 0xff, 0xff, 1, 0xff, 0xff, 0xff, 0xff,
	}
	if got := resp.Append(nil); !bytes.Equal(got, want) {
		t.Fatalf("got  % x\nwant % x", got, want)
	}
}

func TestMultiResponseCreateKinds(t *testing.T) {
	st := sampleStat()
	for _, op := range []OpCode{OpCreate2, OpCreateContainer, OpCreateTTL} {
		enc := (&MultiResponse{Results: []MultiResult{{Op: op, Path: "/p", Stat: &st}}}).Append(nil)
		var h MultiHeader
		if err := Unmarshal(enc, &h); err != nil || h.Type != OpCreate2 || h.Err != 0 {
			t.Errorf("%v result header = %+v, %v; want type create2", op, h, err)
		}
		var got MultiResponse
		if err := Unmarshal(enc, &got); err != nil {
			t.Fatalf("%v: %v", op, err)
		}
		if r := got.Results[0]; r.Op != OpCreate2 || r.Path != "/p" || r.Stat == nil || *r.Stat != st {
			t.Errorf("%v decoded as %+v", op, r)
		}
	}
	// A nil Stat is written as zeros, so the frame stays decodable.
	enc := (&MultiResponse{Results: []MultiResult{{Op: OpSetData}}}).Append(nil)
	var got MultiResponse
	if err := Unmarshal(enc, &got); err != nil || got.Results[0].Stat == nil || *got.Results[0].Stat != (Stat{}) {
		t.Errorf("nil stat: %+v, %v", got, err)
	}
}

func TestMultiResponseErrorCodeFromBody(t *testing.T) {
	// Java's client takes the code from the ErrorResponse body, not the header.
	h := MultiHeader{Type: OpError, Err: ErrOK}
	b := h.Append(nil)
	b = AppendInt32(b, int32(ErrBadVersion))
	b = multiEnd.Append(b)
	var got MultiResponse
	if err := Unmarshal(b, &got); err != nil || got.Results[0].Err != ErrBadVersion {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestMultiResponseRejects(t *testing.T) {
	h := MultiHeader{Type: OpExists}
	in := concat(h.Append(nil), multiEnd.Append(nil))
	var got MultiResponse
	err := Unmarshal(in, &got)
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("err = %v", err)
	}
	if got.Results != nil {
		t.Errorf("results set on failure")
	}
	bad := MultiResponse{Results: []MultiResult{{Op: OpPing}}}
	if err := bad.Validate(); !errors.Is(err, ErrMalformed) {
		t.Errorf("Validate = %v", err)
	}
	if err := (&MultiResponse{Results: testMultiResults()}).Validate(); err != nil {
		t.Errorf("Validate of valid results = %v", err)
	}
	// What Append makes of an invalid result is rejected by Decode.
	if err := Unmarshal(bad.Append(nil), new(MultiResponse)); !errors.Is(err, ErrMalformed) {
		t.Errorf("decoding an invalid result: %v", err)
	}
}

func TestMultiOpKinds(t *testing.T) {
	for op := OpCode(-20); op < 120; op++ {
		w, r := IsMultiWriteOp(op), IsMultiReadOp(op)
		if w && r {
			t.Errorf("%v is both read and write", op)
		}
		wantW := op == OpCreate || op == OpCreate2 || op == OpCreateContainer || op == OpCreateTTL ||
			op == OpDelete || op == OpSetData || op == OpCheck
		wantR := op == OpGetData || op == OpGetChildren
		if w != wantW || r != wantR {
			t.Errorf("%v: write=%v read=%v", op, w, r)
		}
	}
}

func concat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
