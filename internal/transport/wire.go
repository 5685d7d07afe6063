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
	// maxFrameLen bounds a frame's payload and a snapshot stream's message.
	// raft's messages are about MaxSizePerMsg (1 MiB) but one entry may be
	// larger; 64 MiB leaves room without letting a peer claim gigabytes.
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
	r   io.Reader
	hdr [frameHeaderLen]byte
	buf []byte // reused for payloads up to eagerAlloc bytes
}

// next reads one frame. The payload is valid until the next call. A
// truncated frame, an unknown type or a length beyond maxFrameLen is an
// error; io.EOF means the stream ended cleanly between frames.
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

// decodeRaft decodes a raft message and checks that it is addressed to this
// member and comes from the stream's peer. Proposals and read-index
// requests are the exception: raft forwards them to the leader with the
// original sender's From (a member that was the leader passes on those it
// received before it lost the leadership).
func decodeRaft(p []byte, from, to uint64) (raftpb.Message, error) {
	var m raftpb.Message
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

// appendSnapshotHeader appends what precedes a snapshot body: the
// marshalled MsgSnap (its Snapshot.Data empty), length-prefixed, then the
// body size.
func appendSnapshotHeader(b, msg []byte, size int64) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(msg)))
	b = append(b, msg...)
	return binary.BigEndian.AppendUint64(b, uint64(size))
}

// readSnapshotHeader reads what appendSnapshotHeader wrote and checks the
// message as decodeRaft does, and that it is a MsgSnap.
func readSnapshotHeader(r io.Reader, from, to uint64) (raftpb.Message, int64, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return raftpb.Message{}, 0, fmt.Errorf("transport: reading snapshot message length: %w", unexpected(err))
	}
	l := binary.BigEndian.Uint32(n[:])
	if l > maxFrameLen {
		return raftpb.Message{}, 0, fmt.Errorf("%w: snapshot message of %d bytes", errFrameTooLarge, l)
	}
	p, err := readPayload(r, nil, int(l))
	if err != nil {
		return raftpb.Message{}, 0, fmt.Errorf("transport: reading snapshot message: %w", err)
	}
	m, err := decodeRaft(p, from, to)
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
