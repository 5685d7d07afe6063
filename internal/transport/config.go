package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// Handler receives what peers send. Its methods are called from the
// transport's receiving goroutines (one per inbound stream), so they must be
// safe for concurrent use. Raft and App must not block for long: while they
// run, that peer's stream is not read. Raft and App calls for one peer never
// overlap, and its messages arrive in the order it sent them with none
// repeated, though some may be missing: those lost with a stream that broke
// or was replaced by a newer one (which then delivers nothing more). At most
// one Snapshot call runs per peer at a time.
type Handler interface {
	// Raft receives a raft message from a peer; never a MsgSnap.
	Raft(m raftpb.Message)
	// App receives an application message (opaque bytes, for example
	// session liveness); the handler owns data.
	App(from uint64, data []byte)
	// Snapshot receives a MsgSnap whose snapshot body streams from r, which
	// yields exactly size bytes (m.Snapshot.Data is empty). The handler
	// reads r to its end, stores the snapshot, then steps m into raft
	// itself; it may take as long as that needs. Returning an error, or nil
	// without reading all size bytes, makes the sender report a failure.
	// A read from r fails if the sender stalls or the transport closes, and
	// returns io.ErrUnexpectedEOF if the stream ends early. Close waits for
	// Snapshot to return, so it must not wait indefinitely on anything
	// else.
	Snapshot(m raftpb.Message, r io.Reader, size int64) error
}

// Reporter is told about delivery problems, so raft can adapt
// (RawNode.ReportUnreachable and RawNode.ReportSnapshot). Its methods are
// called from the transport's goroutines and from Send and SendApp
// themselves, so they must be safe for concurrent use, must not block and
// must not call back into the Transport: queue the report for the goroutine
// that owns raft.
type Reporter interface {
	// ReportUnreachable says a message to id was dropped or id could not
	// be reached.
	ReportUnreachable(id uint64)
	// ReportSnapshot says whether the snapshot sent to id was stored by it.
	ReportSnapshot(id uint64, ok bool)
}

// Defaults applied by New to zero Config fields.
const (
	DefaultQueueSize   = 4096
	DefaultDialTimeout = time.Second
	// DefaultMaxRaftMessageBytes has room for the messages of a raft whose
	// MaxSizePerMsg and largest entry are at most 2 MiB each.
	DefaultMaxRaftMessageBytes = 8 << 20
)

// Timing of streams; see the package documentation.
const (
	minBackoff        = 50 * time.Millisecond
	maxBackoff        = time.Second
	writeTimeout      = 5 * time.Second  // one write on a message stream
	keepAliveInterval = time.Second      // an idle message stream's keepalive
	idleTimeout       = 10 * time.Second // an inbound stream silent this long is closed
	helloTimeout      = 5 * time.Second  // for an acceptor to read a hello and answer it
	chunkTimeout      = 10 * time.Second // one read or write of a snapshot body
	verdictTimeout    = time.Minute      // for a snapshot's receiver to store it and answer
	writeBufferSize   = 64 << 10
)

// Config configures a Transport.
type Config struct {
	// ID is this member's raft id, not 0.
	ID uint64
	// ClusterID names the ensemble; members refuse streams whose hello
	// carries another one (logged on both sides). At most 1024 bytes.
	ClusterID string
	// Listen is the host:port to accept peers on (the member's peer port);
	// "" accepts none.
	Listen string
	// Peers maps every other member's id to the host:port to dial. Streams
	// are accepted only from these ids.
	Peers map[uint64]string
	// Handler receives what peers send. Required.
	Handler Handler
	// Reporter is told about delivery problems; nil discards the reports.
	Reporter Reporter
	// OpenSnapshot opens the body of the local snapshot at index, and
	// returns its size, to stream it for a MsgSnap; a read of the body must
	// not block indefinitely (Close waits for the sender). Called from the
	// snapshot's sending goroutine. Nil: snapshots cannot be sent and
	// every MsgSnap is reported failed.
	OpenSnapshot func(index uint64) (io.ReadCloser, int64, error)
	// QueueSize is how many messages may wait per peer; when the queue is
	// full, new ones are dropped and the peer is reported unreachable
	// (raft retransmits). Zero means DefaultQueueSize.
	QueueSize int
	// MaxRaftMessageBytes bounds the encoding of one raft message, sent or
	// received: a bigger one is dropped by the sender (as a full queue
	// drops) and, if one comes anyway, its stream is closed before the
	// message is read. Set it a margin above the largest message the raft
	// sends: a message's entries come to at most raft's MaxSizePerMsg,
	// unless it holds a single bigger entry (a proposal), so twice the
	// larger of the two, plus a little, is ample. Members should agree on
	// it: a member closes the stream that brings it a message over its own
	// bound, and raft sends that message again. Zero means
	// DefaultMaxRaftMessageBytes; values over 64 MiB, the wire format's
	// limit, mean 64 MiB.
	MaxRaftMessageBytes int
	// DialTimeout bounds a dial and the hello exchange that follows it.
	// Zero means DefaultDialTimeout. Failed dials are retried after a
	// jittered backoff from 50ms, doubling up to 1s.
	DialTimeout time.Duration
	// Dial opens connections to peers; nil means a net.Dialer's
	// DialContext.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Logger receives the transport's messages; nil discards them.
	Logger *slog.Logger
	// PeerClosed, when set, is called when a stream with peer id ends
	// other than by this side closing it: the peer closed or reset it (what
	// a peer whose process ended leaves), it broke or fell silent. It is
	// a hint, to check (the peer may just be reconnecting); called from the
	// stream's goroutine, it must not block.
	PeerClosed func(id uint64)
}

// Validate reports the first problem with c, or nil.
func (c Config) Validate() error {
	switch {
	case c.ID == 0:
		return errors.New("transport: member id 0 is reserved")
	case len(c.ClusterID) > maxClusterIDLen:
		return fmt.Errorf("transport: cluster id of %d bytes, the limit is %d", len(c.ClusterID), maxClusterIDLen)
	case c.Handler == nil:
		return errors.New("transport: no handler")
	case c.QueueSize < 0:
		return fmt.Errorf("transport: negative queue size %d", c.QueueSize)
	case c.MaxRaftMessageBytes < 0:
		return fmt.Errorf("transport: negative raft message bound %d", c.MaxRaftMessageBytes)
	case c.DialTimeout < 0:
		return fmt.Errorf("transport: negative dial timeout %v", c.DialTimeout)
	}
	for id, addr := range c.Peers {
		switch {
		case id == 0:
			return errors.New("transport: peer id 0 is reserved")
		case id == c.ID:
			return fmt.Errorf("transport: member %d lists itself as a peer", id)
		case addr == "":
			return fmt.Errorf("transport: peer %d has no address", id)
		}
	}
	return nil
}

// withDefaults returns c with zero fields set to their defaults and the
// peer map copied.
func (c Config) withDefaults() Config {
	if c.QueueSize == 0 {
		c.QueueSize = DefaultQueueSize
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.MaxRaftMessageBytes == 0 {
		c.MaxRaftMessageBytes = DefaultMaxRaftMessageBytes
	}
	c.MaxRaftMessageBytes = min(c.MaxRaftMessageBytes, maxFrameLen)
	if c.Dial == nil {
		c.Dial = (&net.Dialer{}).DialContext
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Reporter == nil {
		c.Reporter = discardReporter{}
	}
	peers := make(map[uint64]string, len(c.Peers))
	for id, addr := range c.Peers {
		peers[id] = addr
	}
	c.Peers = peers
	return c
}

type discardReporter struct{}

func (discardReporter) ReportUnreachable(uint64)    {}
func (discardReporter) ReportSnapshot(uint64, bool) {}
