package proto

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// FrameSizeError reports a frame length prefix that is negative or larger
// than the reader's limit (ZooKeeper's "Len error").
type FrameSizeError struct {
	Len int32 // the length prefix as read
	Max int   // the limit it was checked against
}

func (e *FrameSizeError) Error() string {
	return fmt.Sprintf("proto: frame length %d outside [0, %d]", e.Len, e.Max)
}

// CheckFrameLen returns a *FrameSizeError if n is negative or above max.
func CheckFrameLen(n int32, max int) error {
	if n < 0 || int64(n) > int64(max) {
		return &FrameSizeError{Len: n, Max: max}
	}
	return nil
}

// ReadFrame reads one frame: an int32 big-endian length and that many
// payload bytes. The payload is read into buf when it fits its capacity,
// else into a new slice. A length that is negative or above max fails
// with *FrameSizeError before anything is allocated. A clean end of
// stream before the first length byte returns io.EOF; an end anywhere
// later returns io.ErrUnexpectedEOF.
func ReadFrame(r io.Reader, buf []byte, max int) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	return ReadFramePayload(r, hdr, buf, max)
}

// ReadFramePayload reads the payload of a frame whose 4-byte length
// prefix hdr was already read, for a server that first checks the prefix
// with IsFourLetterWord. It behaves as ReadFrame after the prefix; an end
// of stream before the whole payload is io.ErrUnexpectedEOF.
func ReadFramePayload(r io.Reader, hdr [4]byte, buf []byte, max int) ([]byte, error) {
	n := int32(binary.BigEndian.Uint32(hdr[:]))
	if err := CheckFrameLen(n, max); err != nil {
		return nil, err
	}
	if buf != nil && cap(buf) >= int(n) {
		buf = buf[:n]
	} else {
		buf = make([]byte, n)
	}
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("proto: reading %d-byte frame payload: %w", n, err)
	}
	return buf, nil
}

// StartFrame appends a 4-byte length placeholder to b and returns the
// extended slice and the placeholder's offset, to pass to FinishFrame
// once the payload has been appended.
func StartFrame(b []byte) ([]byte, int) {
	return append(b, 0, 0, 0, 0), len(b)
}

// FinishFrame writes the length of the payload that follows the
// placeholder at start. It fails if start does not leave room for the
// placeholder or the payload is longer than an int32 can say.
func FinishFrame(b []byte, start int) error {
	if start < 0 || start+4 > len(b) {
		return fmt.Errorf("proto: frame start %d outside a %d-byte buffer", start, len(b))
	}
	n := len(b) - start - 4
	if n > math.MaxInt32 {
		return fmt.Errorf("proto: frame payload of %d bytes exceeds the int32 length prefix", n)
	}
	binary.BigEndian.PutUint32(b[start:], uint32(n))
	return nil
}

// AppendRequestFrame appends a whole request frame: length prefix,
// RequestHeader{xid, op} and req (nil for no body).
func AppendRequestFrame(b []byte, xid int32, op OpCode, req Request) []byte {
	b, start := StartFrame(b)
	h := RequestHeader{Xid: xid, Op: op}
	b = h.Append(b)
	if req != nil {
		b = req.Append(b)
	}
	_ = FinishFrame(b, start) // start is valid by construction
	return b
}

// AppendReplyFrame appends a whole reply frame: length prefix, hdr and
// resp. resp is omitted when hdr.Err is not ErrOK (error replies carry
// only the header) or when it is nil.
func AppendReplyFrame(b []byte, hdr ReplyHeader, resp Response) []byte {
	b, start := StartFrame(b)
	b = hdr.Append(b)
	if resp != nil && hdr.Err == ErrOK {
		b = resp.Append(b)
	}
	_ = FinishFrame(b, start) // start is valid by construction
	return b
}

// AppendRecordFrame appends a frame holding one record with no header,
// as the connect handshake frames are.
func AppendRecordFrame(b []byte, r Record) []byte {
	b, start := StartFrame(b)
	b = r.Append(b)
	_ = FinishFrame(b, start) // start is valid by construction
	return b
}

// IsFourLetterWord reports whether the first four bytes of a connection,
// read where the first frame's length would be, are a four-letter-word
// command, and returns it. ZooKeeper compares the int32 value, so the
// match is exact and case-sensitive. The telnet close code 0xfff4fffd,
// which ZooKeeper also registers, is not reported: as a length it is
// negative and ReadFramePayload rejects it.
func IsFourLetterWord(first4 [4]byte) (string, bool) {
	switch w := string(first4[:]); w {
	case "ruok", "srvr", "stat", "conf", "cons", "envi", "mntr", "wchs", "wchc", "wchp",
		"dump", "isro", "crst", "srst", "dirs", "gtmk", "stmk", "hash":
		return w, true
	}
	return "", false
}
