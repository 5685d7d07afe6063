package transport

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// outMsg is one queued message: a raft message or an application one.
type outMsg struct {
	raft  raftpb.Message
	app   []byte
	isApp bool
}

// peer is the sending side towards one member: its queue, the goroutine
// that owns its outbound message stream, and its snapshot sender.
type peer struct {
	t      *Transport
	id     uint64
	addr   string
	queue  chan outMsg
	logger *slog.Logger

	connected atomic.Bool // the outbound message stream is up
	snapBusy  atomic.Bool // a snapshot is being sent
	full      atomic.Bool // a full queue was logged and has not drained since
}

// enqueue queues m without blocking. On a full queue it drops m and
// reports the peer unreachable.
func (p *peer) enqueue(m outMsg) bool {
	select {
	case p.queue <- m:
		if p.full.Load() {
			p.full.Store(false)
		}
		return true
	default:
	}
	if !p.full.Swap(true) {
		p.logger.Warn("queue to peer is full; dropping messages", "queue_size", cap(p.queue))
	}
	p.t.cfg.Reporter.ReportUnreachable(p.id)
	return false
}

// run owns the outbound message stream: it dials, writes the queue to the
// stream until it breaks, and redials with backoff, until Close.
func (p *peer) run() {
	defer p.t.wg.Done()
	backoff := minBackoff
	failing := false
	for {
		conn, err := p.t.dial(p.id, p.addr, kindMessages)
		if err == nil {
			p.logger.Info("connected to peer")
			failing = false
			up := time.Now()
			p.connected.Store(true)
			err = p.stream(conn)
			p.connected.Store(false)
			if p.t.ctx.Err() != nil {
				return
			}
			// Only a stream that lasted resets the backoff: one that
			// breaks as soon as it is up (a peer that closes every
			// stream at once) is retried as a failed dial is, not
			// every 50ms.
			if time.Since(up) >= maxBackoff {
				backoff = minBackoff
			}
			// Messages written shortly before the break may be lost.
			p.logger.Warn("stream to peer broke; redialing", "err", err)
			p.t.cfg.Reporter.ReportUnreachable(p.id)
			p.t.peerClosed(p.id)
		} else {
			if p.t.ctx.Err() != nil {
				return
			}
			// A peer that is down is logged once, not at every retry.
			level := slog.LevelDebug
			if !failing {
				level = slog.LevelWarn
			}
			p.logger.Log(p.t.ctx, level, "cannot reach peer; retrying", "err", err)
			failing = true
			p.t.cfg.Reporter.ReportUnreachable(p.id)
		}
		if !p.t.sleep(jitter(backoff)) {
			return
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// errPeerClosed says the peer closed the message stream.
var errPeerClosed = errors.New("transport: the peer closed the stream")

// stream writes queued messages to conn, in batches flushed whenever the
// queue is drained, and a keepalive frame when idle, until a write fails,
// the peer closes the stream or goes silent, or the transport closes. It
// closes conn.
func (p *peer) stream(conn net.Conn) error {
	stop := context.AfterFunc(p.t.ctx, func() { _ = conn.Close() })
	defer stop()
	broken := make(chan struct{})
	var watchErr error // set before broken is closed
	go func() {
		defer close(broken)
		watchErr = watch(conn)
	}()
	defer func() {
		_ = conn.Close()
		<-broken
	}()
	w := &frameWriter{
		bw:      bufio.NewWriterSize(deadlineWriter{c: conn, d: writeTimeout}, writeBufferSize),
		maxRaft: p.t.cfg.MaxRaftMessageBytes,
	}
	keepAlive := time.NewTimer(keepAliveInterval)
	defer keepAlive.Stop()
	for {
		var err error
		select {
		case <-p.t.ctx.Done():
			return ErrClosed
		case <-broken:
			return watchErr
		case <-keepAlive.C:
			err = w.keepAlive()
		case m := <-p.queue:
			err = p.writeBatch(w, m)
		}
		if err != nil {
			return err // what was buffered since the last flush is lost
		}
		keepAlive.Reset(keepAliveInterval)
	}
}

// writeBatch writes m and whatever else is queued, then flushes.
func (p *peer) writeBatch(w *frameWriter, m outMsg) error {
	for {
		var err error
		if m.isApp {
			err = w.app(m.app)
		} else {
			err = w.raft(&m.raft)
		}
		if errors.Is(err, errFrameTooLarge) {
			// Not the stream's fault: drop the message, keep the stream.
			p.logger.Error("dropping a message too large to send", "err", err, "app", m.isApp, "type", m.raft.Type.String())
			p.t.cfg.Reporter.ReportUnreachable(p.id)
		} else if err != nil {
			return err
		}
		select {
		case m = <-p.queue:
			continue
		default:
		}
		return w.bw.Flush()
	}
}

// watch reads what the acceptor sends on a message stream, keepalive
// frames only, and returns why the stream is no longer healthy: the peer
// closed it, sent something else, or fell silent (a dead host or network),
// which a write alone would notice only once the socket buffer filled.
func watch(conn net.Conn) error {
	r := &deadlineReader{c: conn, d: idleTimeout}
	var hdr [frameHeaderLen]byte
	want := appendFrameHeader(nil, frameKeepAlive, 0)
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if err == io.EOF {
				return errPeerClosed
			}
			return fmt.Errorf("transport: reading the peer's keepalive: %w", err)
		}
		if string(hdr[:]) != string(want) {
			return fmt.Errorf("transport: the peer sent %x on a message stream; only keepalives are expected", hdr)
		}
	}
}

// frameWriter encodes frames into a buffered stream.
type frameWriter struct {
	bw      *bufio.Writer
	maxRaft int    // bounds a raft message's encoding (Config.MaxRaftMessageBytes)
	buf     []byte // scratch for a frame header and marshalled message
}

func (w *frameWriter) raft(m *raftpb.Message) error {
	n := m.Size()
	if n > w.maxRaft {
		return fmt.Errorf("%w: raft message of %d bytes, the limit is %d", errFrameTooLarge, n, w.maxRaft)
	}
	w.buf = appendFrameHeader(w.buf[:0], frameRaft, n)
	w.buf = slices.Grow(w.buf, n)[:frameHeaderLen+n]
	if _, err := m.MarshalToSizedBuffer(w.buf[frameHeaderLen:]); err != nil {
		return err
	}
	_, err := w.bw.Write(w.buf)
	if cap(w.buf) > eagerAlloc {
		w.buf = nil // do not pin a rare big message's memory
	}
	return err
}

func (w *frameWriter) app(data []byte) error {
	if len(data) > maxFrameLen {
		return errFrameTooLarge
	}
	w.buf = appendFrameHeader(w.buf[:0], frameApp, len(data))
	if _, err := w.bw.Write(w.buf); err != nil {
		return err
	}
	_, err := w.bw.Write(data)
	return err
}

func (w *frameWriter) keepAlive() error {
	w.buf = appendFrameHeader(w.buf[:0], frameKeepAlive, 0)
	if _, err := w.bw.Write(w.buf); err != nil {
		return err
	}
	return w.bw.Flush()
}

// deadlineReader sets a read deadline d ahead before every read of c, so
// that a silent peer fails the read instead of blocking it forever.
type deadlineReader struct {
	c net.Conn
	d time.Duration
}

func (r *deadlineReader) Read(p []byte) (int, error) {
	if err := r.c.SetReadDeadline(time.Now().Add(r.d)); err != nil {
		return 0, err
	}
	return r.c.Read(p)
}

// deadlineWriter sets a write deadline d ahead before every write to c.
type deadlineWriter struct {
	c net.Conn
	d time.Duration
}

func (w deadlineWriter) Write(p []byte) (int, error) {
	if err := w.c.SetWriteDeadline(time.Now().Add(w.d)); err != nil {
		return 0, err
	}
	return w.c.Write(p)
}
