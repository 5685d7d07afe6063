package fsm

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/paddockhq/paddock/internal/proto"
)

// EntryFormat is the version of the log entry encoding, the first byte of
// every entry. Bump it, and keep decoding the old one, when the layout changes.
//
//	1: initial layout (this file).
//	2: layout 1 followed by long term: the raft term the proposer saw, so
//	   that a write forwarded late to a later leader is not applied after
//	   the session's later writes (see Entry.Term). Written for entries
//	   with a Term and no Origin.
//	3: layout 1 followed by long term (0 when none) and long origin: the
//	   ensemble member whose client made the request, so that a request
//	   from a member the session has moved away from is refused (see
//	   Entry.Origin, EntryMoveSession). Written for entries with an Origin.
//	   Entries with neither keep layout 1.
//	4: layout 1 followed by long term, long origin (each 0 when none),
//	   long conn and long seq: the connection's order of a client's write
//	   (see Entry.Conn). Written for entries with a Conn.
//	5: layout 4 (conn and seq 0 when none) followed by long flags (see
//	   Entry.Flags). Written for entries with Flags.
const (
	EntryFormat       = 1
	EntryFormatTerm   = 2
	EntryFormatOrigin = 3
	EntryFormatConn   = 4
	EntryFormatFlags  = 5
)

// maxOps bounds the op count a decoder will accept in one entry.
const maxOps = 1 << 20

// minOpSize is the smallest encoded op: an opcode and an empty path.
const minOpSize = 8

// Encode appends the binary form of e to b. Layout (jute primitives):
//
//	byte format, byte type, long reqID, long time, long session, then
//	createSession: int timeout, buffer passwd
//	closeSession:  nothing
//	txn:           vector<Id> auth, boolean multi, int n, n ops
//	op:            int opcode, ustring path, then by opcode:
//	               create/create2/createContainer: buffer data, vector<ACL>, int flags
//	               createTTL: the same plus long ttl
//	               delete/check: int version
//	               setData: buffer data, int version
//	               setACL: vector<ACL>, int version
//	               deleteContainer: nothing
func (e *Entry) Encode(b []byte) []byte {
	format := byte(EntryFormat)
	switch {
	case e.Flags != 0:
		format = EntryFormatFlags
	case e.Conn != 0:
		format = EntryFormatConn
	case e.Origin != 0:
		format = EntryFormatOrigin
	case e.Term != 0:
		format = EntryFormatTerm
	}
	b = append(b, format, byte(e.Type))
	b = proto.AppendInt64(b, int64(e.ReqID))
	b = proto.AppendInt64(b, e.Time)
	b = proto.AppendInt64(b, e.Session)
	switch e.Type {
	case EntryCreateSession:
		b = proto.AppendInt32(b, e.Timeout)
		b = proto.AppendBuffer(b, e.Passwd)
	case EntryTxn:
		b = proto.AppendVectorLen(b, len(e.Auth), false)
		for i := range e.Auth {
			b = e.Auth[i].Append(b)
		}
		b = proto.AppendBool(b, e.Multi)
		b = proto.AppendInt32(b, int32(len(e.Ops)))
		for i := range e.Ops {
			b = e.Ops[i].encode(b)
		}
	}
	switch format {
	case EntryFormatTerm:
		b = proto.AppendInt64(b, int64(e.Term))
	case EntryFormatOrigin:
		b = proto.AppendInt64(b, int64(e.Term))
		b = proto.AppendInt64(b, int64(e.Origin))
	case EntryFormatConn, EntryFormatFlags:
		b = proto.AppendInt64(b, int64(e.Term))
		b = proto.AppendInt64(b, int64(e.Origin))
		b = proto.AppendInt64(b, int64(e.Conn))
		b = proto.AppendInt64(b, int64(e.Seq))
		if format == EntryFormatFlags {
			b = proto.AppendInt64(b, int64(e.Flags))
		}
	}
	return b
}

func (op *Op) encode(b []byte) []byte {
	b = proto.AppendInt32(b, int32(op.Op))
	b = proto.AppendString(b, op.Path)
	switch op.Op {
	case proto.OpCreate, proto.OpCreate2, proto.OpCreateContainer, proto.OpCreateTTL:
		b = proto.AppendBuffer(b, op.Data)
		b = proto.AppendACLs(b, op.ACL)
		b = proto.AppendInt32(b, op.Flags)
		if op.Op == proto.OpCreateTTL {
			b = proto.AppendInt64(b, op.TTL)
		}
	case proto.OpDelete, proto.OpCheck:
		b = proto.AppendInt32(b, op.Version)
	case proto.OpSetData:
		b = proto.AppendBuffer(b, op.Data)
		b = proto.AppendInt32(b, op.Version)
	case proto.OpSetACL:
		b = proto.AppendACLs(b, op.ACL)
		b = proto.AppendInt32(b, op.Version)
	}
	return b
}

// EncodedSizeHint returns a capacity that holds e's encoding, so Encode
// appends without growing the buffer.
func (e *Entry) EncodedSizeHint() int {
	n := 96 + len(e.Passwd)
	for _, id := range e.Auth {
		n += 8 + len(id.Scheme) + len(id.ID)
	}
	for i := range e.Ops {
		op := &e.Ops[i]
		n += 32 + len(op.Path) + len(op.Data)
		for _, a := range op.ACL {
			n += 16 + len(a.ID.Scheme) + len(a.ID.ID)
		}
	}
	return n
}

// PeekReqID returns the ReqID of an encoded entry without decoding it.
func PeekReqID(data []byte) (uint64, bool) {
	if len(data) < 10 || data[0] < EntryFormat || data[0] > EntryFormatFlags {
		return 0, false
	}
	return binary.BigEndian.Uint64(data[2:10]), true
}

// PeekTerm returns the Term of an encoded entry (0 when it has none)
// without decoding it.
func PeekTerm(data []byte) uint64 {
	switch {
	case len(data) >= 18 && data[0] == EntryFormatTerm:
		return binary.BigEndian.Uint64(data[len(data)-8:])
	case len(data) >= 26 && data[0] == EntryFormatOrigin:
		return binary.BigEndian.Uint64(data[len(data)-16:])
	case len(data) >= 42 && data[0] == EntryFormatConn:
		return binary.BigEndian.Uint64(data[len(data)-32:])
	case len(data) >= 50 && data[0] == EntryFormatFlags:
		return binary.BigEndian.Uint64(data[len(data)-40:])
	}
	return 0
}

var errEntry = errors.New("fsm: bad log entry")

// DecodeEntry parses an entry written by Encode.
func DecodeEntry(data []byte) (*Entry, error) {
	e := new(Entry)
	if err := decodeEntry(data, e, nil); err != nil {
		return nil, err
	}
	return e, nil
}

// decodeRoom is what decodeEntry may reuse from one entry to the next: the
// arrays of the last entry's ops and identities, and the identities seen
// (most entries carry the same few).
type decodeRoom struct {
	ops  []Op
	auth []proto.ID
	ids  idCache
}

// keep takes e's arrays back for the next entry, dropping what they
// referred to.
func (r *decodeRoom) keep(e *Entry) {
	if cap(e.Ops) > 0 {
		clear(e.Ops)
		r.ops = e.Ops[:0]
	}
	if cap(e.Auth) > 0 {
		clear(e.Auth)
		r.auth = e.Auth[:0]
	}
	*e = Entry{}
}

// decodeEntry parses data into e as DecodeEntry does; room, when not nil,
// lends e the arrays of an earlier entry and interns its identities.
func decodeEntry(data []byte, e *Entry, room *decodeRoom) error {
	if len(data) < 2 {
		return fmt.Errorf("%w: %d bytes", errEntry, len(data))
	}
	if data[0] < EntryFormat || data[0] > EntryFormatFlags {
		return fmt.Errorf("%w: format %d, want %d to %d", errEntry, data[0], EntryFormat, EntryFormatFlags)
	}
	*e = Entry{Type: EntryType(data[1])}
	var dec proto.Decoder
	d := &dec
	d.Reset(data[2:])
	e.ReqID = uint64(d.Int64())
	e.Time = d.Int64()
	e.Session = d.Int64()
	switch e.Type {
	case EntryCreateSession:
		e.Timeout = d.Int32()
		e.Passwd = d.Buffer()
	case EntryCloseSession, EntryMoveSession:
	case EntryTxn:
		n := d.VectorLen(4)
		if n > 0 && room != nil {
			e.Auth = room.auth[:0]
		}
		for i := 0; i < n && d.Err() == nil; i++ {
			var id proto.ID
			if room != nil {
				id = room.ids.decode(d, data[2:])
			} else {
				id.Decode(d)
			}
			e.Auth = append(e.Auth, id)
		}
		e.Multi = d.Bool()
		nops := d.Int32()
		if nops < 0 || nops > maxOps || int(nops) > d.Remaining()/minOpSize {
			return fmt.Errorf("%w: %d ops", errEntry, nops)
		}
		if !e.Multi && nops != 1 {
			return fmt.Errorf("%w: single txn with %d ops", errEntry, nops)
		}
		if room != nil && cap(room.ops) >= int(nops) {
			e.Ops = room.ops[:nops]
		} else {
			e.Ops = make([]Op, nops)
		}
		for i := range e.Ops {
			e.Ops[i] = Op{} // a lent array may hold an earlier entry's op
			e.Ops[i].decode(d)
		}
	default:
		return fmt.Errorf("%w: unknown type %d", errEntry, e.Type)
	}
	switch data[0] {
	case EntryFormatTerm:
		e.Term = uint64(d.Int64())
		if e.Term == 0 && d.Err() == nil {
			return fmt.Errorf("%w: format %d with term 0", errEntry, EntryFormatTerm)
		}
	case EntryFormatOrigin:
		e.Term = uint64(d.Int64())
		e.Origin = uint64(d.Int64())
		if e.Origin == 0 && d.Err() == nil {
			return fmt.Errorf("%w: format %d with origin 0", errEntry, EntryFormatOrigin)
		}
	case EntryFormatConn:
		e.Term = uint64(d.Int64())
		e.Origin = uint64(d.Int64())
		e.Conn = uint64(d.Int64())
		e.Seq = uint64(d.Int64())
		if (e.Conn == 0 || e.Seq == 0) && d.Err() == nil {
			return fmt.Errorf("%w: format %d with conn %d, seq %d", errEntry, EntryFormatConn, e.Conn, e.Seq)
		}
	case EntryFormatFlags:
		e.Term = uint64(d.Int64())
		e.Origin = uint64(d.Int64())
		e.Conn = uint64(d.Int64())
		e.Seq = uint64(d.Int64())
		e.Flags = uint64(d.Int64())
		if e.Flags == 0 && d.Err() == nil {
			return fmt.Errorf("%w: format %d with flags 0", errEntry, EntryFormatFlags)
		}
		if (e.Conn == 0) != (e.Seq == 0) && d.Err() == nil {
			return fmt.Errorf("%w: format %d with conn %d, seq %d", errEntry, EntryFormatFlags, e.Conn, e.Seq)
		}
	}
	if err := d.Err(); err != nil {
		return fmt.Errorf("%w: %v", errEntry, err)
	}
	return nil
}

// idCache interns the identities decoded from entries: a member applies
// thousands of writes a second that carry the same few identities, each
// of which would otherwise cost two strings.
type idCache struct {
	m map[string]proto.ID // by the identity's encoding
}

// maxCachedIDs bounds an idCache; past it the cache starts over.
const maxCachedIDs = 1024

// decode reads an identity from d, whose input is in, as proto.ID.Decode
// does.
func (c *idCache) decode(d *proto.Decoder, in []byte) proto.ID {
	start := d.Offset()
	scheme, id := d.StringBytes(), d.StringBytes()
	if d.Err() != nil {
		return proto.ID{}
	}
	raw := in[start:d.Offset()]
	if v, ok := c.m[string(raw)]; ok { // converting for a lookup does not allocate
		return v
	}
	v := proto.ID{Scheme: string(scheme), ID: string(id)}
	if c.m == nil || len(c.m) >= maxCachedIDs {
		c.m = make(map[string]proto.ID)
	}
	c.m[string(raw)] = v
	return v
}

func (op *Op) decode(d *proto.Decoder) {
	op.Op = proto.OpCode(d.Int32())
	op.Path = d.String()
	switch op.Op {
	case proto.OpCreate, proto.OpCreate2, proto.OpCreateContainer, proto.OpCreateTTL:
		op.Data = d.Buffer()
		op.ACL = proto.DecodeACLs(d)
		op.Flags = d.Int32()
		if op.Op == proto.OpCreateTTL {
			op.TTL = d.Int64()
		}
	case proto.OpDelete, proto.OpCheck:
		op.Version = d.Int32()
	case proto.OpSetData:
		op.Data = d.Buffer()
		op.Version = d.Int32()
	case proto.OpSetACL:
		op.ACL = proto.DecodeACLs(d)
		op.Version = d.Int32()
	case proto.OpDeleteContainer:
	default:
		d.Fail(fmt.Errorf("%w: unknown op %d before offset %d", proto.ErrMalformed, op.Op, d.Offset()))
	}
}
