package proto

import "fmt"

// MultiHeader precedes every operation of a MultiRequest and every result
// of a MultiResponse; a header with Done set ends the list.
type MultiHeader struct {
	Type OpCode
	Done bool
	Err  ErrCode
}

// MultiHeaderSize is the encoded size of a MultiHeader.
const MultiHeaderSize = 9

// multiEnd is the header that terminates both multi lists.
var multiEnd = MultiHeader{Type: OpError, Done: true, Err: -1}

// Append appends the jute encoding of the header.
func (h *MultiHeader) Append(b []byte) []byte {
	b = AppendInt32(b, int32(h.Type))
	b = AppendBool(b, h.Done)
	return AppendInt32(b, int32(h.Err))
}

// Decode reads a MultiHeader from d.
func (h *MultiHeader) Decode(d *Decoder) {
	h.Type = OpCode(d.Int32())
	h.Done = d.Bool()
	h.Err = ErrCode(d.Int32())
}

// IsMultiWriteOp reports whether op may appear in a multi (14): create,
// create2, createContainer, createTTL, delete, setData and check.
func IsMultiWriteOp(op OpCode) bool {
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer, OpCreateTTL, OpDelete, OpSetData, OpCheck:
		return true
	}
	return false
}

// IsMultiReadOp reports whether op may appear in a multiRead (22):
// getData and getChildren.
func IsMultiReadOp(op OpCode) bool {
	return op == OpGetData || op == OpGetChildren
}

// MultiOp is one operation of a multi or multiRead, flattened: only the
// fields the op's record carries are encoded.
//
//	create, create2, createContainer: Path, Data, ACL, Flags
//	createTTL:                        Path, Data, ACL, Flags, TTL
//	delete, check:                    Path, Version
//	setData:                          Path, Data, Version
//	getData, getChildren:             Path (the watch flag is sent as false
//	                                  and ignored on decode, as ZooKeeper does)
type MultiOp struct {
	Op      OpCode
	Path    string
	Data    []byte
	ACL     []ACL
	Flags   int32
	TTL     int64
	Version int32
}

// MultiRequest is the body of multi (14) and multiRead (22)
// (ZooKeeper's MultiOperationRecord). Each op is a MultiHeader{Op, false,
// -1} and the op's record; MultiHeader{-1, true, -1} ends the list.
type MultiRequest struct {
	Ops []MultiOp
}

// Validate reports an op that cannot be encoded (not a multi op) or a
// mix of read and write ops. Append encodes such an op as a bare header,
// which every decoder rejects, so call Validate on untrusted input first.
func (r *MultiRequest) Validate() error {
	for i := range r.Ops {
		op := r.Ops[i].Op
		if !IsMultiWriteOp(op) && !IsMultiReadOp(op) {
			return fmt.Errorf("%w: multi op %d has type %v, not allowed in a multi", ErrMalformed, i, op)
		}
		if IsMultiReadOp(op) != IsMultiReadOp(r.Ops[0].Op) {
			return fmt.Errorf("%w: multi op %d (%v) mixes read and write ops", ErrMalformed, i, op)
		}
	}
	return nil
}

// ReadOnly reports whether the request holds only read ops (getData,
// getChildren), as a multiRead must; an empty request is not read-only.
func (r *MultiRequest) ReadOnly() bool {
	return len(r.Ops) > 0 && IsMultiReadOp(r.Ops[0].Op)
}

// Append appends the jute encoding of the request.
func (r *MultiRequest) Append(b []byte) []byte {
	for i := range r.Ops {
		op := &r.Ops[i]
		h := MultiHeader{Type: op.Op, Err: -1}
		b = h.Append(b)
		switch op.Op {
		case OpCreate, OpCreate2, OpCreateContainer:
			b = AppendString(b, op.Path)
			b = AppendBuffer(b, op.Data)
			b = AppendACLs(b, op.ACL)
			b = AppendInt32(b, op.Flags)
		case OpCreateTTL:
			b = AppendString(b, op.Path)
			b = AppendBuffer(b, op.Data)
			b = AppendACLs(b, op.ACL)
			b = AppendInt32(b, op.Flags)
			b = AppendInt64(b, op.TTL)
		case OpDelete, OpCheck:
			b = AppendString(b, op.Path)
			b = AppendInt32(b, op.Version)
		case OpSetData:
			b = AppendString(b, op.Path)
			b = AppendBuffer(b, op.Data)
			b = AppendInt32(b, op.Version)
		case OpGetData, OpGetChildren:
			b = appendPathWatch(b, op.Path, false)
		}
	}
	return multiEnd.Append(b)
}

// Decode reads a MultiRequest from d. An op type that may not appear in a
// multi, or a mix of read and write ops, fails with ErrMalformed. Whether
// the ops suit the enclosing opcode (multi vs multiRead) is checked by
// DecodeRequest.
func (r *MultiRequest) Decode(d *Decoder) {
	r.Ops = nil
	var ops []MultiOp
	// Every iteration consumes a header, so the loop ends within
	// len(input)/MultiHeaderSize rounds.
	for d.Err() == nil {
		var h MultiHeader
		at := d.Offset()
		h.Decode(d)
		if d.Err() != nil || h.Done {
			break
		}
		op := MultiOp{Op: h.Type}
		switch h.Type {
		case OpCreate, OpCreate2, OpCreateContainer:
			op.Path, op.Data, op.ACL, op.Flags = d.String(), d.Buffer(), DecodeACLs(d), d.Int32()
		case OpCreateTTL:
			op.Path, op.Data, op.ACL, op.Flags = d.String(), d.Buffer(), DecodeACLs(d), d.Int32()
			op.TTL = d.Int64()
		case OpDelete, OpCheck:
			op.Path, op.Version = d.String(), d.Int32()
		case OpSetData:
			op.Path, op.Data, op.Version = d.String(), d.Buffer(), d.Int32()
		case OpGetData, OpGetChildren:
			op.Path = d.String()
			d.Bool() // watch: ignored, as ZooKeeper rebuilds the op without it
		default:
			d.Fail(fmt.Errorf("%w: multi op %d at offset %d has type %v, not allowed in a multi",
				ErrMalformed, len(ops), at, h.Type))
			return
		}
		if len(ops) > 0 && IsMultiReadOp(op.Op) != IsMultiReadOp(ops[0].Op) {
			d.Fail(fmt.Errorf("%w: multi op %d at offset %d (%v) mixes read and write ops",
				ErrMalformed, len(ops), at, h.Type))
			return
		}
		ops = append(ops, op)
	}
	if d.Err() == nil {
		r.Ops = ops
	}
}

// MultiResult is the outcome of one op of a multi or multiRead. Op is
// the result type: OpError for a failed (or, in a failed multi, rolled
// back) op, with Err holding its code; otherwise the op's type, where
// create2, createContainer and createTTL all encode as OpCreate2.
//
//	OpError:                 Err
//	OpCreate:                Path
//	OpCreate2 (and kin):     Path, Stat
//	OpDelete, OpCheck:       nothing
//	OpSetData:               Stat
//	OpGetData:               Data, Stat
//	OpGetChildren:           Children
//
// A nil Stat where one is encoded is written as a zero Stat; decoding
// always sets Stat for the result types that carry one.
type MultiResult struct {
	Op       OpCode
	Err      ErrCode
	Path     string
	Stat     *Stat
	Data     []byte
	Children []string
}

// MultiResponse is the body of a multi or multiRead reply (ZooKeeper's
// MultiResponse). The ReplyHeader of a failed multi still has Err ErrOK;
// the failure shows as OpError results.
type MultiResponse struct {
	Results []MultiResult
}

// Validate reports a result whose Op cannot be encoded. Append encodes
// such a result as a bare header, which every decoder rejects.
func (r *MultiResponse) Validate() error {
	for i := range r.Results {
		switch op := r.Results[i].Op; op {
		case OpError, OpCreate, OpCreate2, OpCreateContainer, OpCreateTTL, OpDelete, OpCheck,
			OpSetData, OpGetData, OpGetChildren:
		default:
			return fmt.Errorf("%w: multi result %d has type %v, not allowed in a multi response",
				ErrMalformed, i, op)
		}
	}
	return nil
}

// Append appends the jute encoding of the response. Error results carry
// their code both in the header's err field and in an ErrorResponse body,
// as ZooKeeper writes them; other headers carry err 0.
func (r *MultiResponse) Append(b []byte) []byte {
	for i := range r.Results {
		res := &r.Results[i]
		h := MultiHeader{Type: res.Op}
		switch res.Op {
		case OpError:
			h.Err = res.Err
			b = h.Append(b)
			b = AppendInt32(b, int32(res.Err))
		case OpCreate:
			b = h.Append(b)
			b = AppendString(b, res.Path)
		case OpCreate2, OpCreateContainer, OpCreateTTL:
			h.Type = OpCreate2
			b = h.Append(b)
			b = AppendString(b, res.Path)
			b = appendStatPtr(b, res.Stat)
		case OpSetData:
			b = h.Append(b)
			b = appendStatPtr(b, res.Stat)
		case OpGetData:
			b = h.Append(b)
			b = AppendBuffer(b, res.Data)
			b = appendStatPtr(b, res.Stat)
		case OpGetChildren:
			b = h.Append(b)
			b = AppendStrings(b, res.Children)
		default: // OpDelete, OpCheck; anything else is caught by Validate.
			b = h.Append(b)
		}
	}
	return multiEnd.Append(b)
}

func appendStatPtr(b []byte, s *Stat) []byte {
	if s == nil {
		var zero Stat
		return zero.Append(b)
	}
	return s.Append(b)
}

// Decode reads a MultiResponse from d. Like ZooKeeper's client it stops at
// the first header with done set, takes an error result's code from its
// ErrorResponse body, and rejects unknown result types with ErrMalformed.
func (r *MultiResponse) Decode(d *Decoder) {
	r.Results = nil
	var results []MultiResult
	// Every iteration consumes a header, so the loop ends within
	// len(input)/MultiHeaderSize rounds.
	for d.Err() == nil {
		var h MultiHeader
		at := d.Offset()
		h.Decode(d)
		if d.Err() != nil || h.Done {
			break
		}
		res := MultiResult{Op: h.Type}
		switch h.Type {
		case OpError:
			res.Err = ErrCode(d.Int32())
		case OpCreate:
			res.Path = d.String()
		case OpCreate2:
			res.Path = d.String()
			res.Stat = decodeStatPtr(d)
		case OpDelete, OpCheck:
		case OpSetData:
			res.Stat = decodeStatPtr(d)
		case OpGetData:
			res.Data = d.Buffer()
			res.Stat = decodeStatPtr(d)
		case OpGetChildren:
			res.Children = d.Strings()
		default:
			d.Fail(fmt.Errorf("%w: multi result %d at offset %d has type %v, not allowed in a multi response",
				ErrMalformed, len(results), at, h.Type))
			return
		}
		results = append(results, res)
	}
	if d.Err() == nil {
		r.Results = results
	}
}

func decodeStatPtr(d *Decoder) *Stat {
	s := new(Stat)
	s.Decode(d)
	return s
}
