// Package proto is the jute wire format of Apache ZooKeeper's client
// protocol: opcodes, error codes, records, multi framing and
// length-prefixed frames. It imports only the standard library and does
// no I/O beyond reading a frame from an io.Reader handed to it.
//
// # Records
//
// Every record type has the same two methods (the Record interface):
//
//	Append(b []byte) []byte // appends the jute encoding to b
//	Decode(d *Decoder)      // reads the record from d
//
// Decode never returns an error itself: the Decoder keeps the first error
// (sticky) and every later read returns a zero value. Check d.Err() or
// d.Done() once after decoding, or use Unmarshal, DecodeRequest and
// DecodeResponse, which do it for you. Decoding never panics and never
// allocates from a length or element count that the remaining input
// cannot hold.
//
// Fields are encoded in declaration order as ZooKeeper's zookeeper.jute
// declares them. A jute ustring of length -1 (null) decodes to "" and is
// re-encoded with length 0; a buffer or vector of length -1 decodes to nil
// and a nil slice is encoded with length -1, while an empty non-nil slice
// is encoded with length 0, so captured frames round-trip byte for byte.
//
// Trailing bytes after a record are ignored, as ZooKeeper ignores them;
// the only place where the presence of trailing bytes changes meaning is
// the optional readOnly flag of ConnectRequest and ConnectResponse.
//
// # Requests and responses
//
// A request frame is RequestHeader followed by the request record chosen
// by the opcode (DecodeRequest); a reply frame is ReplyHeader followed,
// only when ReplyHeader.Err is ErrOK, by the response record chosen by the
// opcode of the request it answers (DecodeResponse). Notifications are
// replies with xid XidNotification and a WatcherEvent body. The connect
// handshake records have no header.
//
// Several opcodes share a record type (create, create2 and createContainer
// all carry a CreateRequest; exists, setData and setACL all answer with a
// StatResponse), so the opcode travels in the header, not in the record.
//
// # Multi
//
// MultiRequest and MultiResponse implement the MultiHeader framing of
// ZooKeeper's MultiOperationRecord and MultiResponse classes with one flat
// MultiOp and MultiResult struct per operation.
//
// # Concurrency
//
// Nothing in this package holds shared state; a Decoder must not be used
// by two goroutines at once. Records are plain values.
package proto
