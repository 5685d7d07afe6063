package proto

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Sentinel errors of the decoder. Errors returned by this package wrap one
// of them with the offset and the kind of value being read; test them with
// errors.Is.
var (
	// ErrShortBuffer means the input ended before a value, or a length or
	// element count claims more bytes than remain.
	ErrShortBuffer = errors.New("proto: short buffer")
	// ErrMalformed means the input is well-sized but invalid: a string or
	// buffer length below -1, an op type not allowed in a multi, ...
	ErrMalformed = errors.New("proto: malformed input")
)

// AppendInt32 appends v as 4 bytes big-endian (jute int).
func AppendInt32(b []byte, v int32) []byte {
	return binary.BigEndian.AppendUint32(b, uint32(v))
}

// AppendInt64 appends v as 8 bytes big-endian (jute long).
func AppendInt64(b []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(b, uint64(v))
}

// AppendBool appends v as one byte, 1 or 0 (jute boolean).
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// AppendString appends s as an int32 byte length and the bytes (jute
// ustring). Go strings cannot be null, so the length is never -1.
func AppendString(b []byte, s string) []byte {
	b = AppendInt32(b, int32(len(s)))
	return append(b, s...)
}

// AppendBuffer appends p as an int32 length and the bytes (jute buffer); a
// nil p is encoded as length -1 (null), an empty non-nil p as length 0.
func AppendBuffer(b []byte, p []byte) []byte {
	if p == nil {
		return AppendInt32(b, -1)
	}
	b = AppendInt32(b, int32(len(p)))
	return append(b, p...)
}

// AppendStrings appends ss as a jute vector<ustring>: an int32 count (-1
// for a nil slice) followed by each string.
func AppendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return AppendInt32(b, -1)
	}
	b = AppendInt32(b, int32(len(ss)))
	for _, s := range ss {
		b = AppendString(b, s)
	}
	return b
}

// AppendVectorLen appends the count of a jute vector: -1 when null is
// true, n otherwise. Elements follow, appended by the caller.
func AppendVectorLen(b []byte, n int, null bool) []byte {
	if null {
		return AppendInt32(b, -1)
	}
	return AppendInt32(b, int32(n))
}

// Decoder reads jute values from a byte slice. The first failure is kept
// (sticky): after it every read returns a zero value and Err reports it.
// A Decoder never panics and never allocates more than the remaining
// input could justify.
type Decoder struct {
	buf []byte
	off int
	err error
}

// NewDecoder returns a Decoder reading b from its start. The Decoder does
// not retain b beyond its own lifetime: Buffer copies and String converts.
func NewDecoder(b []byte) *Decoder {
	return &Decoder{buf: b}
}

// Reset makes d read b from its start, with no error recorded, so that a
// Decoder can live on the caller's stack instead of being allocated.
func (d *Decoder) Reset(b []byte) { *d = Decoder{buf: b} }

// Remaining returns the number of bytes not consumed yet (0 after a
// failure).
func (d *Decoder) Remaining() int {
	if d.err != nil {
		return 0
	}
	return len(d.buf) - d.off
}

// Offset returns the number of bytes consumed so far.
func (d *Decoder) Offset() int { return d.off }

// Err returns the first error met, or nil.
func (d *Decoder) Err() error { return d.err }

// Done returns the first error met, or nil. Trailing unread bytes are not
// an error: ZooKeeper ignores bytes after a record, and so do we.
func (d *Decoder) Done() error { return d.err }

// Fail records err as the decoder's error unless one is already recorded.
// Record decoders use it to reject values that are well-formed jute but
// invalid for the record; err should wrap ErrMalformed or ErrShortBuffer.
func (d *Decoder) Fail(err error) {
	if d.err == nil && err != nil {
		d.err = err
	}
}

func (d *Decoder) failf(sentinel error, format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))
	}
}

// take consumes n bytes, n >= 0, or fails with ErrShortBuffer naming what.
func (d *Decoder) take(n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	if rem := len(d.buf) - d.off; n > rem {
		d.failf(ErrShortBuffer, "%s at offset %d needs %d bytes, %d remain", what, d.off, n, rem)
		return nil
	}
	p := d.buf[d.off : d.off+n : d.off+n]
	d.off += n
	return p
}

// Int32 reads a jute int.
func (d *Decoder) Int32() int32 {
	p := d.take(4, "int32")
	if p == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(p))
}

// Int64 reads a jute long.
func (d *Decoder) Int64() int64 {
	p := d.take(8, "int64")
	if p == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(p))
}

// Bool reads a jute boolean. Like Java's DataInput.readBoolean, any
// non-zero byte is true.
func (d *Decoder) Bool() bool {
	p := d.take(1, "bool")
	if p == nil {
		return false
	}
	return p[0] != 0
}

// length reads an int32 length prefix and checks it against the remaining
// bytes, each element taking at least minElem bytes. It returns -1 for
// null and 0 on failure. A length below -1 fails with ErrMalformed, or
// reads as 0 when negEmpty is set.
func (d *Decoder) length(what string, minElem int, negEmpty bool) int {
	start := d.off
	n := d.Int32()
	if d.err != nil {
		return 0
	}
	switch {
	case n == -1:
		return -1
	case n < 0 && negEmpty:
		return 0
	case n < 0:
		d.failf(ErrMalformed, "%s length %d at offset %d is negative", what, n, start)
		return 0
	}
	if rem := len(d.buf) - d.off; minElem > 0 && int64(n)*int64(minElem) > int64(rem) {
		d.failf(ErrShortBuffer, "%s length %d at offset %d needs at least %d bytes, %d remain",
			what, n, start, int64(n)*int64(minElem), rem)
		return 0
	}
	return int(n)
}

// String reads a jute ustring; null (length -1) reads as "". The string
// is kept as raw bytes: invalid UTF-8 is not replaced, unlike Java.
//
// Because of this method a *Decoder satisfies fmt.Stringer: formatting
// one with %v or %s reads from it, so never print a Decoder.
func (d *Decoder) String() string {
	n := d.length("string", 1, false)
	if n <= 0 {
		return ""
	}
	return string(d.take(n, "string bytes"))
}

// StringBytes reads a jute ustring as String does but returns its bytes
// without copying them: they alias the Decoder's input and are nil for a
// null or empty string.
func (d *Decoder) StringBytes() []byte {
	n := d.length("string", 1, false)
	if n <= 0 {
		return nil
	}
	return d.take(n, "string bytes")
}

// Buffer reads a jute buffer into a fresh slice; null (length -1) reads
// as nil and an empty buffer as a non-nil empty slice.
func (d *Decoder) Buffer() []byte {
	n := d.length("buffer", 1, false)
	if n < 0 || d.err != nil {
		return nil
	}
	p := d.take(n, "buffer bytes")
	if d.err != nil {
		return nil
	}
	out := make([]byte, n)
	copy(out, p)
	return out
}

// VectorLen reads the element count of a jute vector whose elements take
// at least minElemSize bytes each (minimum 1). It returns -1 for a null
// vector and fails with ErrShortBuffer when the remaining input cannot
// hold that many elements, so the count is safe to allocate from. A count
// below -1 reads as 0, an empty vector: ZooKeeper's BinaryInputArchive
// returns null only for -1 and ends the loop of any other negative count
// at once.
func (d *Decoder) VectorLen(minElemSize int) int {
	return d.length("vector", max(minElemSize, 1), true)
}

// Strings reads a jute vector<ustring>; null reads as nil, an empty
// vector as a non-nil empty slice.
func (d *Decoder) Strings() []string {
	n := d.VectorLen(4)
	if n < 0 || d.err != nil {
		return nil
	}
	out := make([]string, 0, n)
	for range n {
		s := d.String()
		if d.err != nil {
			return nil
		}
		out = append(out, s)
	}
	return out
}

// Record is a jute record: it appends its encoding to a byte slice and
// reads itself from a Decoder (see the package documentation).
type Record interface {
	// Append appends the record's encoding to b and returns the result.
	Append(b []byte) []byte
	// Decode reads the record from d; failures are reported by d.Err.
	Decode(d *Decoder)
}

// Unmarshal decodes r from b and returns the decoder's error. Bytes after
// the record are ignored.
func Unmarshal(b []byte, r Record) error {
	d := NewDecoder(b)
	r.Decode(d)
	return d.Done()
}
