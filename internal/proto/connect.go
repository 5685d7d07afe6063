package proto

// Encoded sizes of the handshake records with a 16-byte password.
const (
	// ConnectRequestSize is the size of a ConnectRequest with the readOnly byte.
	ConnectRequestSize = 45
	// ConnectRequestSizeNoReadOnly is the size sent by pre-3.4 clients
	// and go-zookeeper/zk, which omit the readOnly byte.
	ConnectRequestSizeNoReadOnly = 44
	// ConnectResponseSize is the size of a ConnectResponse with the readOnly byte.
	ConnectResponseSize = 37
	// ConnectResponseSizeNoReadOnly is the size of a ConnectResponse sent
	// to a client whose request had no readOnly byte.
	ConnectResponseSizeNoReadOnly = 36
)

// ConnectRequest opens or resumes a session. It is the first frame a
// client sends and has no RequestHeader.
type ConnectRequest struct {
	ProtocolVersion int32
	LastZxidSeen    int64
	TimeOut         int32
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool
	// OmitReadOnly is true when the request has no trailing readOnly
	// byte (44 bytes with a 16-byte password). Decode sets it; Append
	// then leaves the byte out. A server answers such a client with a
	// ConnectResponse whose OmitReadOnly is true too.
	OmitReadOnly bool
}

// Append appends the jute encoding of the request.
func (r *ConnectRequest) Append(b []byte) []byte {
	b = AppendInt32(b, r.ProtocolVersion)
	b = AppendInt64(b, r.LastZxidSeen)
	b = AppendInt32(b, r.TimeOut)
	b = AppendInt64(b, r.SessionID)
	b = AppendBuffer(b, r.Passwd)
	if !r.OmitReadOnly {
		b = AppendBool(b, r.ReadOnly)
	}
	return b
}

// Decode reads a ConnectRequest from d. Like ZooKeeper's ProtocolManager,
// it reads the readOnly byte only if one is left and otherwise sets
// OmitReadOnly.
func (r *ConnectRequest) Decode(d *Decoder) {
	r.ProtocolVersion = d.Int32()
	r.LastZxidSeen = d.Int64()
	r.TimeOut = d.Int32()
	r.SessionID = d.Int64()
	r.Passwd = d.Buffer()
	r.ReadOnly, r.OmitReadOnly = decodeOptionalBool(d)
}

// ConnectResponse answers a ConnectRequest; it has no ReplyHeader.
type ConnectResponse struct {
	ProtocolVersion int32
	TimeOut         int32
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool
	// OmitReadOnly leaves out the trailing readOnly byte (36 bytes with a
	// 16-byte password), for clients that sent no readOnly byte. Decode
	// sets it when the byte is absent.
	OmitReadOnly bool
}

// Append appends the jute encoding of the response.
func (r *ConnectResponse) Append(b []byte) []byte {
	b = AppendInt32(b, r.ProtocolVersion)
	b = AppendInt32(b, r.TimeOut)
	b = AppendInt64(b, r.SessionID)
	b = AppendBuffer(b, r.Passwd)
	if !r.OmitReadOnly {
		b = AppendBool(b, r.ReadOnly)
	}
	return b
}

// Decode reads a ConnectResponse from d, with or without the readOnly byte.
func (r *ConnectResponse) Decode(d *Decoder) {
	r.ProtocolVersion = d.Int32()
	r.TimeOut = d.Int32()
	r.SessionID = d.Int64()
	r.Passwd = d.Buffer()
	r.ReadOnly, r.OmitReadOnly = decodeOptionalBool(d)
}

// decodeOptionalBool reads a trailing bool if a byte is left; omitted
// reports that none was.
func decodeOptionalBool(d *Decoder) (v, omitted bool) {
	if d.Err() != nil {
		return false, false
	}
	if d.Remaining() == 0 {
		return false, true
	}
	return d.Bool(), false
}

// RequestHeader precedes every request record after the handshake.
type RequestHeader struct {
	Xid int32
	Op  OpCode
}

// RequestHeaderSize is the encoded size of a RequestHeader.
const RequestHeaderSize = 8

// Append appends the jute encoding of the header.
func (h *RequestHeader) Append(b []byte) []byte {
	b = AppendInt32(b, h.Xid)
	return AppendInt32(b, int32(h.Op))
}

// Decode reads a RequestHeader from d.
func (h *RequestHeader) Decode(d *Decoder) {
	h.Xid = d.Int32()
	h.Op = OpCode(d.Int32())
}

// ReplyHeader precedes every reply and notification after the handshake.
// When Err is not ErrOK no response record follows.
type ReplyHeader struct {
	Xid  int32
	Zxid int64
	Err  ErrCode
}

// ReplyHeaderSize is the encoded size of a ReplyHeader.
const ReplyHeaderSize = 16

// Append appends the jute encoding of the header.
func (h *ReplyHeader) Append(b []byte) []byte {
	b = AppendInt32(b, h.Xid)
	b = AppendInt64(b, h.Zxid)
	return AppendInt32(b, int32(h.Err))
}

// Decode reads a ReplyHeader from d.
func (h *ReplyHeader) Decode(d *Decoder) {
	h.Xid = d.Int32()
	h.Zxid = d.Int64()
	h.Err = ErrCode(d.Int32())
}
