package transport

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// sendSnapshot starts sending a MsgSnap on a snapshot stream of its own,
// unless one is already being sent to this peer. The outcome goes to
// Reporter.ReportSnapshot.
func (p *peer) sendSnapshot(m raftpb.Message) {
	index := uint64(0)
	if m.Snapshot != nil {
		index = m.Snapshot.Metadata.Index
	}
	if p.t.cfg.OpenSnapshot == nil || m.Snapshot == nil {
		p.logger.Error("cannot send a snapshot: no Config.OpenSnapshot, or a MsgSnap without a snapshot",
			"index", index)
		p.t.cfg.Reporter.ReportSnapshot(p.id, false)
		return
	}
	if !p.snapBusy.CompareAndSwap(false, true) {
		// raft sends no new snapshot to a peer before the last one is
		// reported, so this is a leftover of an earlier term: the report of
		// the one in flight settles the peer's state.
		p.logger.Info("a snapshot is already being sent to the peer; dropping the new one", "index", index)
		return
	}
	started := p.t.spawn(func() {
		start := time.Now()
		size, err := p.streamSnapshot(m)
		// Free the slot before reporting: the report may at once make raft
		// send the next snapshot.
		p.snapBusy.Store(false)
		if err != nil {
			if p.t.ctx.Err() == nil {
				p.logger.Warn("sending snapshot failed", "index", index, "err", err)
			}
			p.t.cfg.Reporter.ReportSnapshot(p.id, false)
			return
		}
		p.logger.Info("sent snapshot", "index", index, "bytes", size, "took", time.Since(start))
		p.t.cfg.Reporter.ReportSnapshot(p.id, true)
	})
	if !started {
		p.snapBusy.Store(false)
	}
}

// streamSnapshot opens a snapshot stream, sends m and the body of its
// snapshot and waits for the receiver's verdict. It returns the body's size.
func (p *peer) streamSnapshot(m raftpb.Message) (int64, error) {
	index := m.Snapshot.Metadata.Index
	body, size, err := p.t.cfg.OpenSnapshot(index)
	if err != nil {
		return 0, fmt.Errorf("transport: opening snapshot %d: %w", index, err)
	}
	defer body.Close()
	if size < 0 {
		return 0, fmt.Errorf("transport: snapshot %d has negative size %d", index, size)
	}
	snap := *m.Snapshot
	snap.Data = nil // the body follows the message instead
	m.Snapshot = &snap
	msg, err := m.Marshal()
	if err != nil {
		return 0, fmt.Errorf("transport: encoding MsgSnap: %w", err)
	}
	if len(msg) > p.t.cfg.MaxRaftMessageBytes {
		return 0, fmt.Errorf("%w: MsgSnap of %d bytes, the limit is %d", errFrameTooLarge, len(msg), p.t.cfg.MaxRaftMessageBytes)
	}
	conn, err := p.t.dial(p.id, p.addr, kindSnapshot)
	if err != nil {
		return 0, err
	}
	stop := context.AfterFunc(p.t.ctx, func() { _ = conn.Close() })
	defer stop()
	defer conn.Close()
	// Each write of the body has its own deadline: a big snapshot may
	// take long, a stalled peer may not.
	bw := bufio.NewWriterSize(deadlineWriter{c: conn, d: chunkTimeout}, writeBufferSize)
	if _, err := bw.Write(appendSnapshotHeader(nil, msg, size)); err != nil {
		return 0, fmt.Errorf("transport: sending MsgSnap: %w", err)
	}
	if n, err := io.CopyN(bw, body, size); err != nil {
		return 0, fmt.Errorf("transport: sending snapshot body (%d of %d bytes): %w", n, size, err)
	}
	if err := bw.Flush(); err != nil {
		return 0, fmt.Errorf("transport: sending snapshot body: %w", err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(verdictTimeout)); err != nil {
		return 0, err
	}
	var verdict [1]byte
	if _, err := io.ReadFull(conn, verdict[:]); err != nil {
		return 0, fmt.Errorf("transport: waiting for the peer to store the snapshot: %w", err)
	}
	if verdict[0] != snapshotOK {
		return 0, errSnapshotFailed
	}
	return size, nil
}

// receiveSnapshot reads a snapshot stream from peer from, hands it to
// Handler.Snapshot and answers with the verdict. It first takes the peer's
// snapshot slot, so that one stream at a time per peer gets this far.
func (t *Transport) receiveSnapshot(from uint64, conn net.Conn, r io.Reader) {
	logger := t.logger.With("peer", from, "remote", conn.RemoteAddr().String())
	release, ok := t.takeSnapshotSlot(from, conn)
	defer release()
	if !ok {
		logger.Debug("a newer snapshot stream from peer replaced this one before it started")
		return
	}
	m, size, err := readSnapshotHeader(r, from, t.cfg.ID, t.cfg.MaxRaftMessageBytes)
	if err != nil {
		logger.Warn("closing snapshot stream from peer", "err", err)
		return
	}
	index := m.Snapshot.Metadata.Index
	logger.Info("receiving snapshot", "index", index, "bytes", size)
	start := time.Now()
	body := &bodyReader{r: r, n: size}
	err = t.cfg.Handler.Snapshot(m, body, size)
	if err == nil && body.n > 0 {
		err = fmt.Errorf("the handler returned after reading %d of %d bytes", size-body.n, size)
	}
	verdict := byte(snapshotOK)
	if err != nil {
		verdict = snapshotFailed
		if t.ctx.Err() == nil || !errors.Is(err, net.ErrClosed) {
			logger.Warn("storing a snapshot from peer failed", "index", index, "err", err)
		}
	} else {
		logger.Info("received snapshot", "index", index, "bytes", size, "took", time.Since(start))
	}
	_ = conn.SetWriteDeadline(time.Now().Add(chunkTimeout))
	if _, err := conn.Write([]byte{verdict}); err != nil && t.ctx.Err() == nil {
		logger.Warn("answering a snapshot stream", "err", err)
	}
}

// snapshotSlot is the inbound snapshot stream a peer may have at a time.
type snapshotSlot struct {
	conn net.Conn
	done chan struct{} // closed when the stream no longer reads or calls the handler
}

// takeSnapshotSlot makes conn peer from's inbound snapshot stream. A newer
// stream replaces an older one, as on message streams: the sender sends one
// snapshot at a time to a member, so a second stream means it gave up on
// the first (its verdict would not be read), and a retransmission must not
// wait for the receiver to notice that the first one is dead. The older
// stream is closed, which fails its handler's reads, and waited for: at
// most one Handler.Snapshot runs per peer. It returns false if conn was
// replaced in turn, or the transport closed, while it waited; release must
// be called in any case, once conn is done with.
func (t *Transport) takeSnapshotSlot(from uint64, conn net.Conn) (release func(), ok bool) {
	s := &snapshotSlot{conn: conn, done: make(chan struct{})}
	t.mu.Lock()
	old := t.snapshots[from]
	t.snapshots[from] = s
	t.mu.Unlock()
	release = func() {
		t.mu.Lock()
		if t.snapshots[from] == s {
			delete(t.snapshots, from)
		}
		t.mu.Unlock()
		close(s.done)
	}
	if old == nil {
		return release, true
	}
	t.logger.Info("a new snapshot stream from peer replaces the one in progress", "peer", from)
	_ = old.conn.Close()
	select {
	case <-old.done:
	case <-t.ctx.Done():
		return release, false
	}
	t.mu.Lock()
	ok = t.snapshots[from] == s
	t.mu.Unlock()
	return release, ok && t.ctx.Err() == nil
}

// bodyReader yields the n bytes of a snapshot body, and
// io.ErrUnexpectedEOF if the stream ends before them.
type bodyReader struct {
	r io.Reader
	n int64 // bytes left
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	n, err := b.r.Read(p)
	b.n -= int64(n)
	if err == io.EOF && b.n > 0 {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}
