package transport

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"go.etcd.io/raft/v3/raftpb"
)

// The wire format; see the package documentation.
const (
	magic   = "PDKPEER\n"
	version = 1

	// maxClusterIDLen bounds the cluster id in a hello.
	maxClusterIDLen = 1024
	// maxFrameLen bounds every frame's payload, whatever its type: the
	// wire format's limit. A raft message (on a message stream or a
	// snapshot stream) is held to Config.MaxRaftMessageBytes, which is
	// at most this.
	maxFrameLen = 64 << 20
	// eagerAlloc is the largest payload allocated in one go from its
	// announced length; bigger ones grow as their bytes arrive.
	eagerAlloc = 1 << 20

	frameHeaderLen = 5 // type, uint32 length
)

// streamKind says what a connection carries after its hello.
type streamKind uint8

const (
	kindMessages streamKind = 1 // frames of raft and application messages
	kindSnapshot streamKind = 2 // one MsgSnap and its body
)

// frameType is the first byte of a frame on a message stream.
type frameType uint8

const (
	frameRaft      frameType = 1 // a raftpb.Message
	frameApp       frameType = 2 // an application message
	frameKeepAlive frameType = 3 // no payload; keeps an idle stream alive
)

// helloCode is the acceptor's one-byte answer to a hello.
type helloCode uint8

const (
	helloOK           helloCode = 0
	helloBadVersion   helloCode = 1
	helloBadKind      helloCode = 2
	helloWrongCluster helloCode = 3
	helloWrongMember  helloCode = 4 // the hello's "to" is not the acceptor
	helloUnknownPeer  helloCode = 5 // the hello's "from" is not a configured peer
)

func (c helloCode) String() string {
	switch c {
	case helloOK:
		return "accepted"
	case helloBadVersion:
		return "unsupported protocol version"
	case helloBadKind:
		return "unknown stream kind"
	case helloWrongCluster:
		return "cluster id mismatch"
	case helloWrongMember:
		return "the peer at this address has another member id"
	case helloUnknownPeer:
		return "this member is not among the peer's configured members"
	default:
		return fmt.Sprintf("unknown refusal %d", uint8(c))
	}
}

// Snapshot stream verdicts, the receiver's last byte.
const (
	snapshotOK     = 0
	snapshotFailed = 1
)

// Decoding errors. A stream that yields one is closed.
var (
	errBadMagic        = errors.New("transport: not a Paddock peer connection (bad magic)")
	errBadVersion      = errors.New("transport: unsupported protocol version")
	errClusterIDLen    = errors.New("transport: cluster id too long")
	errBadFrameType    = errors.New("transport: unknown frame type")
	errFrameTooLarge   = errors.New("transport: frame too large")
	errBadKeepAlive    = errors.New("transport: keepalive frame with a payload")
	errBadSnapshotSize = errors.New("transport: negative snapshot size")
	errMalformedRaft   = errors.New("transport: malformed raft message")
	errRaftResponses   = errors.New("transport: raft message with responses")
	errSnapshotData    = errors.New("transport: MsgSnap carries its snapshot's data")
)

// hello opens every connection; the dialer sends it.
type hello struct {
	version uint32
	kind    streamKind
	from    uint64
	to      uint64
	cluster string
}

// appendHello appends h's encoding to b. The cluster id must be at most
// maxClusterIDLen bytes (Config.Validate checks it).
func appendHello(b []byte, h hello) []byte {
	b = append(b, magic...)
	b = binary.BigEndian.AppendUint32(b, h.version)
	b = append(b, byte(h.kind))
	b = binary.BigEndian.AppendUint64(b, h.from)
	b = binary.BigEndian.AppendUint64(b, h.to)
	b = binary.BigEndian.AppendUint16(b, uint16(len(h.cluster)))
	return append(b, h.cluster...)
}

// readHello reads one hello. A version other than 1 stops the decoding
// after the version field with errBadVersion (and h.version set): the rest
// of another version's hello may have another layout. The kind is not
// checked here.
func readHello(r io.Reader) (h hello, err error) {
	var fixed [len(magic) + 4 + 1 + 8 + 8 + 2]byte
	head := fixed[:len(magic)+4]
	if _, err := io.ReadFull(r, head); err != nil {
		return h, fmt.Errorf("transport: reading hello: %w", unexpected(err))
	}
	if string(head[:len(magic)]) != magic {
		return h, errBadMagic
	}
	h.version = binary.BigEndian.Uint32(head[len(magic):])
	if h.version != version {
		return h, fmt.Errorf("%w %d", errBadVersion, h.version)
	}
	rest := fixed[len(head):]
	if _, err := io.ReadFull(r, rest); err != nil {
		return h, fmt.Errorf("transport: reading hello: %w", unexpected(err))
	}
	h.kind = streamKind(rest[0])
	h.from = binary.BigEndian.Uint64(rest[1:])
	h.to = binary.BigEndian.Uint64(rest[9:])
	n := int(binary.BigEndian.Uint16(rest[17:]))
	if n > maxClusterIDLen {
		return h, fmt.Errorf("%w: %d bytes", errClusterIDLen, n)
	}
	cluster := make([]byte, n)
	if _, err := io.ReadFull(r, cluster); err != nil {
		return h, fmt.Errorf("transport: reading hello cluster id: %w", unexpected(err))
	}
	h.cluster = string(cluster)
	return h, nil
}

// appendFrameHeader appends the header of a frame of type t with an n-byte
// payload.
func appendFrameHeader(b []byte, t frameType, n int) []byte {
	b = append(b, byte(t))
	return binary.BigEndian.AppendUint32(b, uint32(n))
}

// frameReader reads the frames of a message stream.
type frameReader struct {
	r       io.Reader
	maxRaft int // bounds a raft frame's payload; at most maxFrameLen
	hdr     [frameHeaderLen]byte
	buf     []byte // reused for payloads up to eagerAlloc bytes
}

// next reads one frame. The payload is valid until the next call. A
// truncated frame, an unknown type, or a length beyond maxFrameLen (beyond
// maxRaft for a raft frame) is an error, found before the payload is read;
// io.EOF means the stream ended cleanly between frames.
func (fr *frameReader) next() (frameType, []byte, error) {
	if _, err := io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, nil, fmt.Errorf("transport: reading frame header: %w", err)
		}
		return 0, nil, err
	}
	t := frameType(fr.hdr[0])
	n := binary.BigEndian.Uint32(fr.hdr[1:])
	switch {
	case t != frameRaft && t != frameApp && t != frameKeepAlive:
		return 0, nil, fmt.Errorf("%w %d", errBadFrameType, t)
	case n > maxFrameLen:
		return 0, nil, fmt.Errorf("%w: %d bytes, the limit is %d", errFrameTooLarge, n, maxFrameLen)
	case t == frameRaft && int64(n) > int64(fr.maxRaft):
		return 0, nil, fmt.Errorf("%w: raft message of %d bytes, the limit is %d", errFrameTooLarge, n, fr.maxRaft)
	case t == frameKeepAlive && n != 0:
		return 0, nil, errBadKeepAlive
	}
	p, err := readPayload(fr.r, fr.buf, int(n))
	if err != nil {
		return 0, nil, fmt.Errorf("transport: reading %d-byte frame: %w", n, err)
	}
	if cap(p) <= eagerAlloc {
		fr.buf = p[:0]
	}
	return t, p, nil
}

// readPayload reads n bytes into buf if it has room, else into new memory
// that grows only as the bytes arrive once n is beyond eagerAlloc.
func readPayload(r io.Reader, buf []byte, n int) ([]byte, error) {
	if n <= cap(buf) || n <= eagerAlloc {
		if n > cap(buf) {
			buf = make([]byte, n)
		}
		p := buf[:n]
		_, err := io.ReadFull(r, p)
		return p, unexpected(err)
	}
	var bb bytes.Buffer
	bb.Grow(eagerAlloc)
	if _, err := io.CopyN(&bb, r, int64(n)); err != nil {
		return nil, unexpected(err)
	}
	return bb.Bytes(), nil
}

// decodeRaft decodes a raft message from a message stream (see
// checkRaftFields) and checks that it is addressed to this member and comes
// from the stream's peer. Proposals and read-index requests are the
// exception: raft forwards them to the leader with the original sender's
// From (a member that was the leader passes on those it received before it
// lost the leadership).
func decodeRaft(p []byte, from, to uint64) (raftpb.Message, error) {
	return decodeMessage(p, from, to, false)
}

// decodeMessage is decodeRaft; snapshotHeader says p is a snapshot
// stream's MsgSnap.
func decodeMessage(p []byte, from, to uint64, snapshotHeader bool) (raftpb.Message, error) {
	var m raftpb.Message
	if err := checkRaftFields(p, snapshotHeader); err != nil {
		return m, err
	}
	if err := m.Unmarshal(p); err != nil {
		return m, fmt.Errorf("transport: decoding raft message: %w", err)
	}
	forwarded := m.Type == raftpb.MsgProp || m.Type == raftpb.MsgReadIndex
	if (m.From != from && !forwarded) || m.To != to {
		return m, fmt.Errorf("transport: raft message from %d to %d on the stream from %d to %d",
			m.From, m.To, from, to)
	}
	return m, nil
}

// Protobuf field numbers of raftpb.Message and raftpb.Snapshot, and wire
// types.
const (
	fieldMessageSnapshot  = 9
	fieldMessageResponses = 14
	fieldSnapshotData     = 1

	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// checkRaftFields walks the top-level fields of an encoded raftpb.Message
// before it is decoded, skipping their values, and refuses what a member
// never sends and raftpb's decoder would take at any cost:
//   - malformed input (a bad key or varint, a value past the end, a group,
//     which raftpb does not use);
//   - Responses (field 14): raft puts them only on the messages between a
//     node and its local storage, never on those between members, and
//     their decoder recurses into each without a depth limit, so a few
//     megabytes of nested responses overflow the goroutine's stack;
//   - with snapshotHeader, a Snapshot with Data: its body follows the
//     message on a snapshot stream.
//
// Other fields, known or not, are left to the decoder, whose allocations
// are bounded by p's length.
func checkRaftFields(p []byte, snapshotHeader bool) error {
	for len(p) > 0 {
		num, wire, v, rest, err := nextField(p)
		if err != nil {
			return err
		}
		p = rest
		switch {
		case num == fieldMessageResponses:
			return errRaftResponses
		case num == fieldMessageSnapshot && snapshotHeader && wire == wireBytes:
			for len(v) > 0 {
				num, wire, data, rest, err := nextField(v)
				if err != nil {
					return err
				}
				v = rest
				if num == fieldSnapshotData && (wire != wireBytes || len(data) > 0) {
					return fmt.Errorf("%w (%d bytes)", errSnapshotData, len(data))
				}
			}
		}
	}
	return nil
}

// nextField splits the first field off a protobuf encoding: its number and
// wire type, its value (a varint's or fixed number's bytes, a
// length-delimited value's contents) and the rest.
func nextField(p []byte) (num uint64, wire uint8, value, rest []byte, err error) {
	key, n := binary.Uvarint(p)
	if n <= 0 || key>>3 == 0 {
		return 0, 0, nil, nil, fmt.Errorf("%w: bad field key", errMalformedRaft)
	}
	num, wire, p = key>>3, uint8(key&7), p[n:]
	var size int
	switch wire {
	case wireVarint:
		if _, size = binary.Uvarint(p); size <= 0 {
			return 0, 0, nil, nil, fmt.Errorf("%w: bad varint in field %d", errMalformedRaft, num)
		}
	case wireFixed64:
		size = 8
	case wireFixed32:
		size = 4
	case wireBytes:
		l, n := binary.Uvarint(p)
		if n <= 0 || l > uint64(len(p)-n) {
			return 0, 0, nil, nil, fmt.Errorf("%w: bad length in field %d", errMalformedRaft, num)
		}
		p = p[n:]
		size = int(l)
	default:
		return 0, 0, nil, nil, fmt.Errorf("%w: wire type %d in field %d", errMalformedRaft, wire, num)
	}
	if size > len(p) {
		return 0, 0, nil, nil, fmt.Errorf("%w: field %d cut short", errMalformedRaft, num)
	}
	return num, wire, p[:size], p[size:], nil
}

// appendSnapshotHeader appends what precedes a snapshot body: the
// marshalled MsgSnap (its Snapshot.Data empty), length-prefixed, then the
// body size.
func appendSnapshotHeader(b, msg []byte, size int64) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(msg)))
	b = append(b, msg...)
	return binary.BigEndian.AppendUint64(b, uint64(size))
}

// readSnapshotHeader reads what appendSnapshotHeader wrote and checks the
// message as decodeRaft does, that it is at most maxRaft bytes, is a
// MsgSnap and does not carry its snapshot's data.
func readSnapshotHeader(r io.Reader, from, to uint64, maxRaft int) (raftpb.Message, int64, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return raftpb.Message{}, 0, fmt.Errorf("transport: reading snapshot message length: %w", unexpected(err))
	}
	l := binary.BigEndian.Uint32(n[:])
	if int64(l) > int64(min(maxRaft, maxFrameLen)) {
		return raftpb.Message{}, 0, fmt.Errorf("%w: snapshot message of %d bytes, the limit is %d", errFrameTooLarge, l, min(maxRaft, maxFrameLen))
	}
	p, err := readPayload(r, nil, int(l))
	if err != nil {
		return raftpb.Message{}, 0, fmt.Errorf("transport: reading snapshot message: %w", err)
	}
	m, err := decodeMessage(p, from, to, true)
	if err != nil {
		return m, 0, err
	}
	if m.Type != raftpb.MsgSnap || m.Snapshot == nil {
		return m, 0, fmt.Errorf("transport: snapshot stream carries a %v, not a MsgSnap", m.Type)
	}
	var s [8]byte
	if _, err := io.ReadFull(r, s[:]); err != nil {
		return m, 0, fmt.Errorf("transport: reading snapshot size: %w", unexpected(err))
	}
	size := int64(binary.BigEndian.Uint64(s[:]))
	if size < 0 {
		return m, 0, errBadSnapshotSize
	}
	return m, size, nil
}

// unexpected turns a clean EOF in the middle of a structure into
// io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
