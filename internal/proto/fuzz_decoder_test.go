package proto

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecoder drives the Decoder's primitive reads (the ones no record
// fuzz target reaches alone, StringBytes and VectorLen among them) in an
// order chosen by the input. Two decoders read the same bytes in lockstep,
// one with String and one with StringBytes, and must agree. Every read
// stays within the input, a failure is sticky and wraps a sentinel, and a
// vector count is never larger than the remaining input can hold.
func FuzzDecoder(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7}, AppendString(AppendInt32(nil, 7), "/a/b"))
	f.Add([]byte{3, 3, 6}, AppendStrings(AppendBuffer(nil, nil), []string{"x", ""}))
	f.Add([]byte{5, 7}, AppendInt32(AppendInt32(nil, -1), 0x7fffffff))
	f.Add([]byte{4}, AppendInt32(nil, -2))
	f.Fuzz(func(t *testing.T, script, in []byte) {
		if len(script) > 64 {
			script = script[:64]
		}
		a, b := NewDecoder(in), NewDecoder(in)
		for _, step := range script {
			failed := a.Err() != nil
			switch step % 8 {
			case 0:
				if x, y := a.Int32(), b.Int32(); x != y || (failed && x != 0) {
					t.Fatalf("Int32 %d vs %d", x, y)
				}
			case 1:
				if x, y := a.Int64(), b.Int64(); x != y || (failed && x != 0) {
					t.Fatalf("Int64 %d vs %d", x, y)
				}
			case 2:
				if x, y := a.Bool(), b.Bool(); x != y || (failed && x) {
					t.Fatalf("Bool %v vs %v", x, y)
				}
			case 3:
				s, p := a.String(), b.StringBytes()
				if s != string(p) || (failed && s != "") {
					t.Fatalf("String %q vs StringBytes %q", s, p)
				}
				if len(p) == 0 && p != nil {
					t.Fatal("StringBytes returned an empty non-nil slice")
				}
			case 4:
				x, y := a.Buffer(), b.Buffer()
				if !bytes.Equal(x, y) || (x == nil) != (y == nil) || (failed && x != nil) {
					t.Fatalf("Buffer %q vs %q", x, y)
				}
			case 5:
				x, y := a.Strings(), b.Strings()
				if len(x) != len(y) || (x == nil) != (y == nil) || (failed && x != nil) {
					t.Fatalf("Strings %q vs %q", x, y)
				}
			case 6, 7:
				minElem := int(step/8)%16 + 1
				rem := a.Remaining()
				n, m := a.VectorLen(minElem), b.VectorLen(minElem)
				if n != m || n < -1 || (failed && n != 0) {
					t.Fatalf("VectorLen(%d) %d vs %d", minElem, n, m)
				}
				if a.Err() == nil && n > 0 && int64(n)*int64(minElem) > int64(rem-4) {
					t.Fatalf("VectorLen(%d) = %d with %d bytes left", minElem, n, rem-4)
				}
			}
			if (a.Err() == nil) != (b.Err() == nil) || a.Offset() != b.Offset() {
				t.Fatalf("decoders diverged: %v at %d vs %v at %d", a.Err(), a.Offset(), b.Err(), b.Offset())
			}
			if a.Offset() < 0 || a.Offset() > len(in) {
				t.Fatalf("offset %d outside a %d-byte input", a.Offset(), len(in))
			}
			if err := a.Err(); err != nil {
				if a.Remaining() != 0 {
					t.Fatal("Remaining is not 0 after a failure")
				}
				if !errors.Is(err, ErrShortBuffer) && !errors.Is(err, ErrMalformed) {
					t.Fatalf("error wraps no sentinel: %v", err)
				}
			} else if a.Remaining() != len(in)-a.Offset() {
				t.Fatalf("Remaining %d, offset %d of %d", a.Remaining(), a.Offset(), len(in))
			}
		}
	})
}
