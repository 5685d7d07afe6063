package zk

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// handshake dials addr and exchanges ConnectRequest and ConnectResponse.
func (c *Conn) handshake(addr string) (net.Conn, *proto.ConnectResponse, error) {
	timeout := c.connectTimeout()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	go func() {
		select {
		case <-c.closeCh:
			cancel()
		case <-ctx.Done():
		}
	}()
	nc, err := c.cfg.dial(ctx, "tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	// Close ends the exchange below too, not only the dial: a server that
	// accepts and never answers must not hold Close up.
	raw := nc
	stop := context.AfterFunc(ctx, func() { raw.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if c.cfg.tls != nil {
		tc := tls.Client(nc, c.tlsConfig(addr))
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, nil, fmt.Errorf("tls: %w", err)
		}
		nc = tc
	}
	deadline, _ := ctx.Deadline()
	nc.SetDeadline(deadline)

	c.mu.Lock()
	req := proto.ConnectRequest{
		LastZxidSeen: c.lastZxid,
		TimeOut:      int32(c.cfg.sessionTimeout / time.Millisecond),
		Passwd:       append([]byte(nil), c.passwd...),
		ReadOnly:     c.cfg.canBeReadOnly,
	}
	// A session first made on a read-only server is not resumed: such
	// sessions are local to that server (ZooKeeper's seenRwServerBefore).
	if c.seenRW {
		req.SessionID = c.sessionID
	}
	c.mu.Unlock()
	if _, err := nc.Write(proto.AppendRecordFrame(nil, &req)); err != nil {
		nc.Close()
		return nil, nil, err
	}
	frame, err := proto.ReadFrame(nc, nil, c.cfg.maxBufferSize)
	if err != nil {
		nc.Close()
		if errors.Is(err, net.ErrClosed) || c.stopping() {
			return nil, nil, ErrClosed
		}
		return nil, nil, fmt.Errorf("reading the connect response: %w", err)
	}
	var resp proto.ConnectResponse
	if err := proto.Unmarshal(frame, &resp); err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("decoding the connect response: %w", err)
	}
	if !stop() { // the attempt ended as the answer came
		nc.Close()
		return nil, nil, ctx.Err()
	}
	nc.SetDeadline(time.Time{})
	return nc, &resp, nil
}

// tlsConfig returns the TLS configuration for a connection to addr: the
// configured one, with the host name addr was resolved from (a
// DNSHostProvider's address), or else addr's host, as ServerName when it
// names none. The certificate is then checked against the name the user
// gave, not the IP address it resolved to.
func (c *Conn) tlsConfig(addr string) *tls.Config {
	cfg := c.cfg.tls
	if cfg.ServerName == "" {
		cfg = cfg.Clone()
		if host, _, err := net.SplitHostPort(addr); err == nil {
			cfg.ServerName = host
		}
		if p, ok := c.hosts.(serverNamer); ok {
			if name := p.serverName(addr); name != "" {
				cfg.ServerName = name
			}
		}
	}
	return cfg
}

// serve runs an established connection: the reader on its own goroutine,
// the writer and the ping timer here, until the connection fails or the
// Conn closes. It leaves the Conn disconnected with every waiting call
// failed.
func (c *Conn) serve(nc net.Conn, addr string, resp *proto.ConnectResponse) {
	st := StateSyncConnected
	if resp.ReadOnly {
		st = StateConnectedReadOnly
	}
	c.mu.Lock()
	if c.closing {
		// Close came as the handshake's answer did (after the handshake
		// stopped watching for it): the Conn is ending, not connecting.
		c.mu.Unlock()
		nc.Close()
		return
	}
	newSession := c.sessionID != resp.SessionID
	c.sessionID = resp.SessionID
	c.passwd = append(c.passwd[:0], resp.Passwd...)
	c.timeout = time.Duration(resp.TimeOut) * time.Millisecond
	c.seenRW = c.seenRW || !resp.ReadOnly
	c.server = addr
	c.lastHeard.Store(time.Now().UnixNano())
	c.state = st
	// Credentials, then watch re-registration, go ahead of the calls that
	// waited for the connection.
	var first []*call
	for _, a := range c.auth {
		cl := c.newCall(proto.OpAuth, "", &proto.AuthPacket{Scheme: a.scheme, Auth: a.auth}, nil)
		c.assignXidLocked(cl)
		first = append(first, cl)
	}
	for _, req := range c.watches.setWatches(c.lastZxid, c.root) {
		op := proto.OpSetWatches
		if _, ok := req.(*proto.SetWatches2); ok {
			op = proto.OpSetWatches2
		}
		cl := c.newCall(op, "", req, nil)
		c.assignXidLocked(cl)
		first = append(first, cl)
	}
	c.outq = append(first, c.outq...)
	watchers := c.stateWatchersLocked()
	timeout := c.timeout
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}

	c.log.Info("zk: connected", "server", addr, "session", fmt.Sprintf("0x%x", resp.SessionID),
		"timeout", timeout, "readOnly", resp.ReadOnly, "new", newSession)
	c.deliverState(st, watchers)
	c.once.Do(func() { close(c.ready) })

	readTimeout := timeout * 2 / 3
	var readErr error
	readerDone := make(chan struct{})
	go func() {
		readErr = c.read(nc, readTimeout)
		close(readerDone)
	}()
	go func() {
		// A write stuck on a server that reads nothing must not hold up
		// Close, nor outlive the reader: a server silent for the read
		// timeout may have stopped reading too (a frozen process), and
		// the writer, blocked in a write, would never see readerDone.
		select {
		case <-c.closeCh:
		case <-readerDone:
		}
		nc.Close()
	}()

	err := c.write(nc, readTimeout, readerDone, st == StateConnectedReadOnly)
	nc.Close()
	<-readerDone
	if err == nil {
		err = readErr
	}

	c.mu.Lock()
	c.lastErr = fmt.Errorf("%s: %w", addr, err)
	// Closing or refused credentials end the session: no Disconnected
	// event before the final one, as in ZooKeeper's client.
	final := c.closing || c.authFail
	// The calls still waiting fail as ZooKeeper's client fails them
	// (conLossPacket): with the end of the session when it is over, so
	// that nobody retries them on a Conn that will not reconnect. After
	// refused credentials they are left to end, which delivers AuthFailed
	// before failing them with ErrAuthFailed, as the Java client does.
	var lost error = ErrConnectionLoss
	if c.closing {
		lost = ErrClosed
	}
	c.state = StateDisconnected
	var calls []*call
	if !c.authFail {
		calls = c.takeCallsLocked()
	}
	watchers = c.stateWatchersLocked()
	c.mu.Unlock()
	if !final {
		c.log.Info("zk: disconnected", "server", addr, "err", err)
	}
	for _, cl := range calls {
		c.finish(cl, lost)
	}
	if !final {
		c.deliverState(StateDisconnected, watchers)
	}
}

// pingInterval is how long the connection may stay idle before a ping:
// a third of the session timeout (half the read timeout), at most 10 s.
func pingInterval(readTimeout time.Duration) time.Duration {
	return min(readTimeout/2, 10*time.Second)
}

// write sends queued calls in batches and pings when idle, until the
// reader fails, the Conn closes or a write fails.
func (c *Conn) write(nc net.Conn, readTimeout time.Duration, readerDone <-chan struct{}, readOnly bool) error {
	bw := getWriter(nc)
	defer putWriter(bw)
	interval := pingInterval(readTimeout)
	ping := time.NewTimer(interval)
	defer ping.Stop()
	var probe <-chan string
	var probeTimer *time.Timer
	probeWait := 100 * time.Millisecond
	if readOnly {
		probeTimer = time.NewTimer(probeWait)
		defer probeTimer.Stop()
	}
	var probeC <-chan time.Time
	if probeTimer != nil {
		probeC = probeTimer.C
	}
	var batch []*call
	var frames []pooledFrame
	for {
		select {
		case <-readerDone:
			return nil // serve reports the reader's error
		case <-c.closeCh:
			return ErrClosed
		case <-ping.C:
			cl := c.newCall(proto.OpPing, "", &proto.Empty{}, nil)
			c.submit(cl)
			ping.Reset(interval)
			continue
		case <-probeC:
			probe = c.probeRW()
			continue
		case addr := <-probe:
			probe = nil
			if addr != "" {
				c.mu.Lock()
				c.prefer = addr
				c.mu.Unlock()
				c.log.Info("zk: found a read-write server", "server", addr)
				return errors.New("moving to read-write server " + addr)
			}
			probeWait = min(probeWait*2, 60*time.Second)
			probeTimer.Reset(probeWait)
			continue
		case <-c.wake:
		}
		// Let callers that are ready to run (woken by replies the reader
		// just completed) queue their next calls, so that one write
		// carries them all: a write is the costliest part of a call.
		runtime.Gosched()
		c.mu.Lock()
		batch, c.outq = c.outq, batch[:0]
		for i, cl := range batch {
			switch cl.op {
			case proto.OpPing:
			case proto.OpAuth:
				c.authq = append(c.authq, cl)
			default:
				c.pending = append(c.pending, cl)
			}
			// Take the frames now: once a call is pending its reply
			// may complete it, and a completed call is recycled.
			frames = append(frames, cl.takeFrame())
			batch[i] = nil
		}
		c.mu.Unlock()
		for i, f := range frames {
			if _, err := bw.Write(f.b); err != nil {
				return writeErr(err, readerDone)
			}
			f.release()
			frames[i] = pooledFrame{}
		}
		frames = frames[:0]
		if err := bw.Flush(); err != nil {
			return writeErr(err, readerDone)
		}
		ping.Reset(interval)
	}
}

// writeErr is the error write returns for a failed write: nil when the
// reader ended first (the connection was closed under the writer because
// of it), so that serve reports the reader's error, the cause.
func writeErr(err error, readerDone <-chan struct{}) error {
	select {
	case <-readerDone:
		return nil
	default:
		return err
	}
}

// probeRW asks the next server whether it serves writes (the isro
// four-letter word) and reports its address if so, "" otherwise.
func (c *Conn) probeRW() <-chan string {
	out := make(chan string, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), c.connectTimeout())
		defer cancel()
		addr, _, err := c.hosts.Next(ctx)
		c.mu.Lock()
		cur := c.server
		c.mu.Unlock()
		if err != nil || addr == cur {
			out <- ""
			return
		}
		nc, err := c.cfg.dial(ctx, "tcp", addr)
		if err != nil {
			out <- ""
			return
		}
		defer nc.Close()
		deadline, _ := ctx.Deadline()
		nc.SetDeadline(deadline)
		if c.cfg.tls != nil {
			// A secure port speaks TLS only, four-letter words included
			// (ZooKeeper's client sends isro with its secure settings).
			tc := tls.Client(nc, c.tlsConfig(addr))
			if err := tc.HandshakeContext(ctx); err != nil {
				out <- ""
				return
			}
			nc = tc
		}
		buf := make([]byte, 2)
		if _, err := nc.Write([]byte("isro")); err == nil {
			if n, _ := io.ReadFull(nc, buf); n == 2 && string(buf) == "rw" {
				out <- addr
				return
			}
		}
		out <- ""
	}()
	return out
}
