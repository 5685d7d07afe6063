package transport

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

const readBufferSize = 64 << 10

// accept takes peer connections until the listener closes.
func (t *Transport) accept(ln net.Listener) {
	defer t.wg.Done()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if t.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: wait, do not spin.
			t.logger.Warn("accepting a peer connection failed", "err", err)
			if !t.sleep(minBackoff) {
				return
			}
			continue
		}
		if !t.track(conn) {
			_ = conn.Close()
			return
		}
	}
}

// track registers an accepted connection, so that Close closes it, and
// starts serving it; it returns false once the transport is closed.
func (t *Transport) track(conn net.Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.inbound[conn] = struct{}{}
	t.wg.Add(1)
	go t.serve(conn)
	return true
}

// serve checks an accepted connection's hello, answers it and then reads
// the stream it opens.
func (t *Transport) serve(conn net.Conn) {
	defer t.wg.Done()
	defer func() {
		_ = conn.Close()
		t.mu.Lock()
		delete(t.inbound, conn)
		t.mu.Unlock()
	}()
	remote := conn.RemoteAddr().String()
	dr := &deadlineReader{c: conn, d: helloTimeout}
	br := bufio.NewReaderSize(dr, readBufferSize)
	h, err := readHello(br)
	code := helloOK
	switch {
	case errors.Is(err, errBadVersion):
		code = helloBadVersion
	case err != nil:
		if t.ctx.Err() == nil {
			t.logger.Log(t.ctx, t.refusals.level(), "closing a peer connection: bad hello", "remote", remote, "err", err)
		}
		return
	case h.kind != kindMessages && h.kind != kindSnapshot:
		code = helloBadKind
	case h.cluster != t.cfg.ClusterID:
		code = helloWrongCluster
	case h.to != t.cfg.ID:
		code = helloWrongMember
	case t.peers[h.from] == nil:
		code = helloUnknownPeer
	}
	_ = conn.SetWriteDeadline(time.Now().Add(helloTimeout))
	if _, err := conn.Write([]byte{byte(code)}); err != nil {
		t.logger.Warn("closing a peer connection: answering its hello", "remote", remote, "from", h.from, "err", err)
		return
	}
	if code != helloOK {
		t.logger.Log(t.ctx, t.refusals.level(), "refused a peer connection", "remote", remote, "reason", code.String(),
			"version", h.version, "kind", h.kind, "from", h.from, "to", h.to,
			"cluster_id", h.cluster, "our_cluster_id", t.cfg.ClusterID)
		return
	}
	switch h.kind {
	case kindMessages:
		dr.d = idleTimeout
		t.readMessages(h.from, conn, br)
	case kindSnapshot:
		dr.d = chunkTimeout
		t.receiveSnapshot(h.from, conn, br)
	}
}

// readMessages delivers the frames of peer from's message stream to the
// handler until the stream ends or a frame is bad. A newer stream from the
// same peer replaces this one, which then delivers nothing more.
func (t *Transport) readMessages(from uint64, conn net.Conn, r io.Reader) {
	rc := t.receivers[from]
	t.setStream(from, conn)
	defer t.clearStream(from, conn)
	logger := t.logger.With("peer", from, "remote", conn.RemoteAddr().String())
	logger.Debug("accepted a message stream")
	// Keepalives the other way let the dialer notice a dead host.
	done, kaDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(kaDone)
		keepAlive(conn, done)
	}()
	defer func() {
		close(done)
		<-kaDone
	}()
	fr := frameReader{r: r, maxRaft: t.cfg.MaxRaftMessageBytes}
	for {
		typ, p, err := fr.next()
		if err != nil {
			switch {
			case t.ctx.Err() != nil || errors.Is(err, net.ErrClosed):
				// Closed here: by Close or by a newer stream.
			case errors.Is(err, io.EOF):
				logger.Info("peer closed its message stream")
				t.peerClosed(from)
			case errors.Is(err, syscall.ECONNRESET):
				// A peer closing with unread input resets the
				// connection: what a killed process often leaves.
				logger.Info("peer reset its message stream")
				t.peerClosed(from)
			default:
				logger.Warn("closing message stream from peer", "err", err)
				t.peerClosed(from)
			}
			return
		}
		var m raftpb.Message
		var data []byte
		switch typ {
		case frameRaft:
			m, err = decodeRaft(p, from, t.cfg.ID)
			if err == nil && m.Type == raftpb.MsgSnap {
				err = errors.New("transport: MsgSnap on a message stream")
			}
			if err != nil {
				logger.Warn("closing message stream from peer: bad raft message", "err", err)
				return
			}
		case frameApp:
			data = bytes.Clone(p)
		case frameKeepAlive:
			continue
		}
		// Delivered under the receiver's lock, and only while this is the
		// peer's current stream: what this one had read but not delivered
		// when a newer one replaced it is dropped, never delivered after,
		// or alongside, the newer stream's messages.
		rc.mu.Lock()
		if rc.conn != conn {
			rc.mu.Unlock()
			return
		}
		if typ == frameRaft {
			t.cfg.Handler.Raft(m)
		} else {
			t.cfg.Handler.App(from, data)
		}
		rc.mu.Unlock()
	}
}

// peerClosed calls Config.PeerClosed, if set.
func (t *Transport) peerClosed(from uint64) {
	if t.cfg.PeerClosed != nil {
		t.cfg.PeerClosed(from)
	}
}

// keepAlive writes a keepalive frame to conn every keepAliveInterval until
// done is closed; if a write fails it closes conn.
func keepAlive(conn net.Conn, done <-chan struct{}) {
	tick := time.NewTicker(keepAliveInterval)
	defer tick.Stop()
	frame := appendFrameHeader(nil, frameKeepAlive, 0)
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		if err := conn.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
			_ = conn.Close()
			return
		}
		if _, err := conn.Write(frame); err != nil {
			_ = conn.Close()
			return
		}
	}
}

// receiver is the receiving side from one peer.
type receiver struct {
	mu   sync.Mutex // held while a frame of conn is delivered
	conn net.Conn   // the current inbound message stream, or nil
}

// setStream records conn as peer from's message stream and closes the one
// it replaces, once that one is not delivering a frame.
func (t *Transport) setStream(from uint64, conn net.Conn) {
	rc := t.receivers[from]
	rc.mu.Lock()
	old := rc.conn
	rc.conn = conn
	rc.mu.Unlock()
	if old != nil {
		t.logger.Debug("a new message stream from peer replaces the old one", "peer", from)
		_ = old.Close()
	}
}

func (t *Transport) clearStream(from uint64, conn net.Conn) {
	rc := t.receivers[from]
	rc.mu.Lock()
	if rc.conn == conn {
		rc.conn = nil
	}
	rc.mu.Unlock()
}

// logLimiter logs a recurring problem (a misconfigured peer redials every
// second) at Warn at most once per refusalLogInterval, and at Debug in
// between.
type logLimiter struct {
	mu   sync.Mutex
	last time.Time
}

const refusalLogInterval = 30 * time.Second

func (l *logLimiter) level() slog.Level {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now := time.Now(); now.Sub(l.last) >= refusalLogInterval {
		l.last = now
		return slog.LevelWarn
	}
	return slog.LevelDebug
}
