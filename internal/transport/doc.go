// Package transport carries raft messages, snapshots and application
// messages between the members of a Paddock ensemble, over TCP. It is one of
// the few importers of etcd raft (its raftpb messages); it neither reads nor
// steps raft: the Handler and Reporter the caller supplies do that.
//
// # Streams
//
// Every member dials every other member once: one outbound message stream
// per peer, owned by one goroutine that drains the peer's bounded queue
// (Config.QueueSize) with buffered writes, flushed whenever the queue is
// empty. Inbound streams are accepted from every configured peer; a newer
// message stream from a peer replaces (closes) its older one, which delivers
// nothing more once replaced. Messages to one peer are written in the order
// Send and SendApp queued them, and the receiver hands them to the Handler
// in that order, one at a time; a stream that breaks or is replaced may lose
// what was last written to it, and the next one carries on with the queue.
//
// A MsgSnap goes on a snapshot stream of its own, a new connection opened
// for it by a goroutine of its own (at most one per peer), so that a big
// snapshot never holds up the message stream. Its body comes from
// Config.OpenSnapshot, not from the message. A receiver serves one snapshot
// stream per peer at a time: a newer one (the sender has given up on the
// older) closes the older and waits for its Handler.Snapshot to return.
//
// # Failures
//
// Send and SendApp never block. When a peer's queue is full, the new message
// is dropped and Reporter.ReportUnreachable is called (raft retransmits).
// While a peer cannot be reached, messages stay queued (within the bound),
// except heartbeats, which are dropped (raft sends another every heartbeat
// interval), each failed dial reports the peer unreachable, and dialing is
// retried after a jittered backoff from 50ms doubling to 1s. A stream that breaks
// (a write fails, the peer closes it or falls silent) is closed and the peer
// reported unreachable; what was written to it since the last flush may be
// lost, the rest of the queue waits for the next stream, dialed after the
// same backoff as a failed dial (reset to 50ms once a stream has lasted a
// second, so a peer that closes every stream at once is not redialed 20
// times a second). The outcome of every MsgSnap is reported with
// Reporter.ReportSnapshot.
//
// Every read and write has a deadline, so a dead or stalled peer cannot
// wedge a goroutine: a write on a message stream 5s; both ends of a message
// stream send a keepalive frame every second (the dialer only when it has
// had nothing else to write) and each closes a stream on which it has read
// nothing for 10s, so a dead host is noticed even when no message is sent;
// a peer that closes its end is noticed at once. The dialer's hello
// exchange takes at most Config.DialTimeout and the acceptor's 5s; each
// read or write of a snapshot body 10s, and the sender waits a minute after
// the body for the receiver's verdict.
//
// # Concurrency
//
// Send, SendApp, Connected and Addr are safe for concurrent use. Handler
// methods are called from one goroutine per inbound stream; Reporter
// methods from the transport's goroutines and from Send and SendApp. Close
// waits for every goroutine, so neither is called after Close returns.
//
// # Wire format, version 1
//
// Integers are big-endian. Every connection opens with the dialer's hello:
//
//	magic     8 bytes  "PDKPEER\n"
//	version   uint32   1
//	kind      uint8    1 message stream, 2 snapshot stream
//	from      uint64   the dialer's member id
//	to        uint64   the acceptor's member id
//	cluster   uint16 length, then that many bytes (at most 1024)
//
// The acceptor answers with one byte: 0 accepted; or a refusal, after which
// it closes the connection: 1 unsupported version (the acceptor reads no
// further than the version), 2 unknown kind, 3 cluster id mismatch, 4 "to"
// is not the acceptor's id, 5 "from" is not one of its peers. A connection
// without the magic is closed without an answer. Refusals are logged on both
// sides. A new version of the format bumps the version number; the dialer of
// a refused version may retry with an older one.
//
// A message stream (kind 1) then carries frames from dialer to acceptor,
// and keepalive frames only the other way:
//
//	type      uint8    1 raft message, 2 application message, 3 keepalive
//	length    uint32   payload bytes, at most 64 MiB; 0 for a keepalive
//	payload            raftpb.Message.Marshal, or the application's bytes
//
// A raft message is further held to Config.MaxRaftMessageBytes, and must not
// carry Responses (field 14), which raft uses only between a node and its
// local storage: the acceptor walks its top-level fields before decoding
// it. An unknown type, a length over the limit, a truncated frame, a raft
// message that is malformed, carries Responses, is not from the stream's
// dialer to the acceptor, or is a MsgSnap, closes the stream; so does
// anything but a keepalive from the acceptor.
//
// A snapshot stream (kind 2) carries, from the dialer:
//
//	length    uint32   then the marshalled MsgSnap (at most
//	                   Config.MaxRaftMessageBytes), checked as on a message
//	                   stream, its Snapshot.Data empty
//	size      int64    the body's length, not negative
//	body      size bytes
//
// and the acceptor answers with one byte once Handler.Snapshot returns: 0
// stored, 1 failed.
package transport
