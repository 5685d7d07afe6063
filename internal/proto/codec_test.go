package proto

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"testing"
)

func TestAppendPrimitives(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want []byte
	}{
		{"int32 1", AppendInt32(nil, 1), []byte{0, 0, 0, 1}},
		{"int32 -1", AppendInt32(nil, -1), []byte{0xff, 0xff, 0xff, 0xff}},
		{"int32 min", AppendInt32(nil, math.MinInt32), []byte{0x80, 0, 0, 0}},
		{"int64", AppendInt64(nil, 0x0102030405060708), []byte{1, 2, 3, 4, 5, 6, 7, 8}},
		{"int64 -2", AppendInt64(nil, -2), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}},
		{"bool true", AppendBool(nil, true), []byte{1}},
		{"bool false", AppendBool(nil, false), []byte{0}},
		{"string", AppendString(nil, "/a"), []byte{0, 0, 0, 2, '/', 'a'}},
		{"empty string", AppendString(nil, ""), []byte{0, 0, 0, 0}},
		{"buffer", AppendBuffer(nil, []byte{9}), []byte{0, 0, 0, 1, 9}},
		{"nil buffer", AppendBuffer(nil, nil), []byte{0xff, 0xff, 0xff, 0xff}},
		{"empty buffer", AppendBuffer(nil, []byte{}), []byte{0, 0, 0, 0}},
		{"strings", AppendStrings(nil, []string{"a", ""}), []byte{0, 0, 0, 2, 0, 0, 0, 1, 'a', 0, 0, 0, 0}},
		{"nil strings", AppendStrings(nil, nil), []byte{0xff, 0xff, 0xff, 0xff}},
		{"empty strings", AppendStrings(nil, []string{}), []byte{0, 0, 0, 0}},
		{"appends", AppendInt32([]byte{7}, 2), []byte{7, 0, 0, 0, 2}},
	}
	for _, tt := range tests {
		if !bytes.Equal(tt.got, tt.want) {
			t.Errorf("%s: got % x, want % x", tt.name, tt.got, tt.want)
		}
	}
}

func TestDecoderReadsPrimitives(t *testing.T) {
	var b []byte
	b = AppendInt32(b, -7)
	b = AppendInt64(b, math.MaxInt64)
	b = AppendBool(b, true)
	b = append(b, 2) // any non-zero byte is true, as in Java
	b = AppendBool(b, false)
	b = AppendString(b, "zk")
	b = AppendInt32(b, -1) // null string
	b = AppendBuffer(b, []byte{1, 2})
	b = AppendBuffer(b, nil)
	b = AppendBuffer(b, []byte{})
	b = AppendStrings(b, []string{"x", "yz"})
	b = AppendStrings(b, nil)
	b = AppendStrings(b, []string{})
	b = append(b, 0xAA) // trailing byte

	d := NewDecoder(b)
	if got := d.Int32(); got != -7 {
		t.Errorf("Int32 = %d", got)
	}
	if got := d.Int64(); got != math.MaxInt64 {
		t.Errorf("Int64 = %d", got)
	}
	if !d.Bool() || !d.Bool() || d.Bool() {
		t.Errorf("Bool sequence wrong")
	}
	if got := d.String(); got != "zk" {
		t.Errorf("String = %q", got)
	}
	if got := d.String(); got != "" {
		t.Errorf("null String = %q", got)
	}
	if got := d.Buffer(); !bytes.Equal(got, []byte{1, 2}) {
		t.Errorf("Buffer = %v", got)
	}
	if got := d.Buffer(); got != nil {
		t.Errorf("null Buffer = %v, want nil", got)
	}
	if got := d.Buffer(); got == nil || len(got) != 0 {
		t.Errorf("empty Buffer = %#v, want non-nil empty", got)
	}
	if got := d.Strings(); !reflect.DeepEqual(got, []string{"x", "yz"}) {
		t.Errorf("Strings = %q", got)
	}
	if got := d.Strings(); got != nil {
		t.Errorf("null Strings = %q, want nil", got)
	}
	if got := d.Strings(); got == nil || len(got) != 0 {
		t.Errorf("empty Strings = %#v, want non-nil empty", got)
	}
	if d.Remaining() != 1 {
		t.Errorf("Remaining = %d, want 1", d.Remaining())
	}
	if err := d.Done(); err != nil {
		t.Errorf("Done = %v; trailing bytes must be allowed", err)
	}
}

func TestDecoderBufferCopies(t *testing.T) {
	b := AppendBuffer(nil, []byte{1, 2, 3})
	got := NewDecoder(b).Buffer()
	b[4] = 99
	if got[0] != 1 {
		t.Fatalf("Buffer aliases the input: %v", got)
	}
}

func TestDecoderErrors(t *testing.T) {
	tests := []struct {
		name  string
		in    []byte
		read  func(d *Decoder)
		want  error
		inMsg string
	}{
		{"int32 short", []byte{0, 0, 1}, func(d *Decoder) { d.Int32() }, ErrShortBuffer, "int32 at offset 0"},
		{"int64 short", []byte{0, 0, 0, 0, 0, 0, 1}, func(d *Decoder) { d.Int64() }, ErrShortBuffer, "int64 at offset 0"},
		{"bool empty", nil, func(d *Decoder) { d.Bool() }, ErrShortBuffer, "bool"},
		{"string length short", []byte{0, 0}, func(d *Decoder) { _ = d.String() }, ErrShortBuffer, "int32"},
		{"string body short", []byte{0, 0, 0, 3, 'a'}, func(d *Decoder) { _ = d.String() }, ErrShortBuffer, "string length 3 at offset 0"},
		{"string negative", []byte{0xff, 0xff, 0xff, 0xfe}, func(d *Decoder) { _ = d.String() }, ErrMalformed, "length -2"},
		{"string huge", []byte{0x7f, 0xff, 0xff, 0xff, 'a'}, func(d *Decoder) { _ = d.String() }, ErrShortBuffer, "2147483647"},
		{"buffer negative", []byte{0x80, 0, 0, 0}, func(d *Decoder) { d.Buffer() }, ErrMalformed, "negative"},
		{"buffer huge", []byte{0x7f, 0xff, 0xff, 0xff}, func(d *Decoder) { d.Buffer() }, ErrShortBuffer, "buffer length"},
		{"strings huge count", []byte{0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0}, func(d *Decoder) { d.Strings() }, ErrShortBuffer, "vector length"},
		{"strings count over remaining/4", []byte{0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0}, func(d *Decoder) { d.Strings() }, ErrShortBuffer, "vector length 3"},
		{"strings element short", []byte{0, 0, 0, 1, 0, 0, 0, 2, 'a'}, func(d *Decoder) { d.Strings() }, ErrShortBuffer, "offset 4"},
		{"acls huge count", []byte{0x10, 0, 0, 0, 0, 0, 0, 0}, func(d *Decoder) { DecodeACLs(d) }, ErrShortBuffer, "vector"},
		{"acls count over remaining/12", append([]byte{0, 0, 0, 2}, make([]byte, 20)...), func(d *Decoder) { DecodeACLs(d) }, ErrShortBuffer, "vector length 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDecoder(tt.in)
			tt.read(d)
			err := d.Done()
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if !bytes.Contains([]byte(err.Error()), []byte(tt.inMsg)) {
				t.Errorf("err %q does not mention %q", err, tt.inMsg)
			}
		})
	}
}

func TestDecoderErrorIsSticky(t *testing.T) {
	d := NewDecoder([]byte{0, 0, 0, 1, 0, 0})
	if d.Int32() != 1 {
		t.Fatal("first read failed")
	}
	d.Int64() // fails: 2 bytes left
	first := d.Err()
	if first == nil {
		t.Fatal("no error after short read")
	}
	// Later reads return zero values even though 2 bytes would satisfy a
	// bool, and the first error is kept.
	if d.Bool() || d.String() != "" || d.Buffer() != nil || d.Strings() != nil || d.VectorLen(1) != 0 {
		t.Error("reads after failure returned non-zero values")
	}
	if d.Err() != first {
		t.Errorf("error changed from %v to %v", first, d.Err())
	}
	if d.Remaining() != 0 {
		t.Errorf("Remaining after failure = %d, want 0", d.Remaining())
	}
	d.Fail(ErrMalformed)
	if d.Err() != first {
		t.Error("Fail replaced the first error")
	}
}

func TestDecoderVectorLenBound(t *testing.T) {
	// 3 elements of at least 4 bytes fit in 12 bytes, 4 do not.
	in := append(AppendInt32(nil, 3), make([]byte, 12)...)
	if n := NewDecoder(in).VectorLen(4); n != 3 {
		t.Errorf("VectorLen = %d, want 3", n)
	}
	in = append(AppendInt32(nil, 4), make([]byte, 12)...)
	d := NewDecoder(in)
	d.VectorLen(4)
	if !errors.Is(d.Err(), ErrShortBuffer) {
		t.Errorf("err = %v, want ErrShortBuffer", d.Err())
	}
	// minElemSize < 1 is treated as 1.
	d = NewDecoder(AppendInt32(nil, 1))
	d.VectorLen(0)
	if !errors.Is(d.Err(), ErrShortBuffer) {
		t.Errorf("VectorLen(0) with no bytes left: err = %v", d.Err())
	}
}

func TestUnmarshalReportsError(t *testing.T) {
	var s Stat
	err := Unmarshal(make([]byte, StatSize-1), &s)
	if !errors.Is(err, ErrShortBuffer) {
		t.Fatalf("err = %v, want ErrShortBuffer", err)
	}
	if err := Unmarshal(make([]byte, StatSize+3), &s); err != nil {
		t.Fatalf("trailing bytes: %v", err)
	}
}

// TestDecoderStringBytes: StringBytes reads what String reads, without a
// copy; null and empty read as nil; errors are as String's. Reset starts
// over on new input with no error.
func TestDecoderStringBytes(t *testing.T) {
	in := AppendString(AppendString(AppendInt32(nil, -1), ""), "scheme")
	d := NewDecoder(in)
	if got := d.StringBytes(); got != nil {
		t.Errorf("null string: %q, want nil", got)
	}
	if got := d.StringBytes(); got != nil {
		t.Errorf("empty string: %q, want nil", got)
	}
	got := d.StringBytes()
	if string(got) != "scheme" || d.Err() != nil {
		t.Fatalf("StringBytes = %q, %v", got, d.Err())
	}
	in[len(in)-1] = 'X'
	if string(got) != "schemX" {
		t.Errorf("StringBytes copied its input: %q", got)
	}
	if got := d.StringBytes(); got != nil || !errors.Is(d.Err(), ErrShortBuffer) {
		t.Errorf("past the end: %q, %v; want nil, ErrShortBuffer", got, d.Err())
	}
	d.Reset(AppendString(nil, "again"))
	if got := d.StringBytes(); string(got) != "again" || d.Err() != nil {
		t.Errorf("after Reset: %q, %v", got, d.Err())
	}
}
