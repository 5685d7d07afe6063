package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// Errors returned by Transport methods.
var (
	ErrClosed         = errors.New("transport: closed")
	ErrStarted        = errors.New("transport: already started")
	errSnapshotFailed = errors.New("transport: the peer failed to store the snapshot")
)

// Transport carries raft and application messages between this member and
// its peers. See the package documentation.
type Transport struct {
	cfg       Config
	logger    *slog.Logger
	peers     map[uint64]*peer     // fixed by New
	receivers map[uint64]*receiver // fixed by New, one per peer

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the transport starts

	mu        sync.Mutex
	started   bool
	closed    bool
	ln        net.Listener
	inbound   map[net.Conn]struct{}    // every accepted connection
	snapshots map[uint64]*snapshotSlot // the current inbound snapshot stream per peer

	refusals logLimiter // of refused hellos

	closeOnce sync.Once
	closeErr  error
}

// New validates cfg and returns a Transport that queues messages but
// neither dials nor listens until Start.
func New(cfg Config) (*Transport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	t := &Transport{
		cfg:       cfg,
		logger:    cfg.Logger.With("component", "transport", "id", cfg.ID),
		peers:     make(map[uint64]*peer, len(cfg.Peers)),
		receivers: make(map[uint64]*receiver, len(cfg.Peers)),
		ctx:       ctx,
		cancel:    cancel,
		inbound:   make(map[net.Conn]struct{}),
		snapshots: make(map[uint64]*snapshotSlot),
	}
	for id, addr := range cfg.Peers {
		t.peers[id] = &peer{
			t:      t,
			id:     id,
			addr:   addr,
			queue:  make(chan outMsg, cfg.QueueSize),
			logger: t.logger.With("peer", id, "addr", addr),
		}
		t.receivers[id] = &receiver{}
	}
	return t, nil
}

// Start listens on Config.Listen (if set) and starts dialing every peer.
func (t *Transport) Start() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.closed:
		return ErrClosed
	case t.started:
		return ErrStarted
	}
	if t.cfg.Listen != "" {
		var lc net.ListenConfig
		ln, err := lc.Listen(t.ctx, "tcp", t.cfg.Listen)
		if err != nil {
			return fmt.Errorf("transport: listening for peers: %w", err)
		}
		t.ln = ln
		t.wg.Add(1)
		go t.accept(ln)
		t.logger.Info("listening for peers", "addr", ln.Addr().String())
	}
	t.started = true
	for _, p := range t.peers {
		t.wg.Add(1)
		go p.run()
	}
	return nil
}

// Addr returns the address peers connect to, or nil before Start or
// without Config.Listen.
func (t *Transport) Addr() net.Addr {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ln == nil {
		return nil
	}
	return t.ln.Addr()
}

// Send queues raft messages for their peers and never blocks. A MsgSnap is
// sent on a snapshot stream of its own (one at a time per peer; a MsgSnap
// for a peer that is already receiving one is dropped) and its outcome is
// reported with Reporter.ReportSnapshot. A MsgHeartbeat for a peer whose
// message stream is down is dropped. Any other message goes to its peer's
// queue; when the queue is full it is dropped and the peer reported
// unreachable, as it is when its turn to be written comes if its encoding
// is over Config.MaxRaftMessageBytes. Messages to unknown members, and all messages after Close,
// are dropped. The transport keeps the messages (and their entries) until
// written: the caller must not modify them.
func (t *Transport) Send(msgs []raftpb.Message) {
	if t.ctx.Err() != nil {
		return
	}
	for i := range msgs {
		m := &msgs[i]
		p := t.peers[m.To]
		if p == nil {
			t.logger.Debug("dropping raft message to an unknown member", "to", m.To, "type", m.Type.String())
			continue
		}
		if m.Type == raftpb.MsgSnap {
			p.sendSnapshot(*m)
			continue
		}
		if m.Type == raftpb.MsgHeartbeat && !p.connected.Load() {
			// Dropped, not queued: the next heartbeat, a heartbeat
			// interval later, carries the same commit index and read
			// context. Queued heartbeats all reached a member at once
			// when it came back, and raft's leader answered each reply
			// from a member in probe state with its whole backlog: a
			// storm that stalled the leader and kept the member from
			// catching up while clients were syncing.
			continue
		}
		p.enqueue(outMsg{raft: *m})
	}
}

// SendApp queues an application message for peer to, on the same stream
// and in the same order as raft messages, and never blocks. It returns false
// if the message was dropped: unknown peer, data over 64 MiB, transport
// closed, or queue full (the peer is then also reported unreachable). The
// caller must not modify data afterwards.
func (t *Transport) SendApp(to uint64, data []byte) bool {
	p := t.peers[to]
	if p == nil || len(data) > maxFrameLen || t.ctx.Err() != nil {
		return false
	}
	return p.enqueue(outMsg{app: data, isApp: true})
}

// Connected reports whether the outbound message stream to peer id is up:
// dialed, and its hello accepted.
func (t *Transport) Connected(id uint64) bool {
	p := t.peers[id]
	return p != nil && p.connected.Load()
}

// Close stops the listener, the senders and the receivers, closes every
// connection and waits for the transport's goroutines, including handler
// calls in progress. No Handler or Reporter method is called after Close
// returns. Queued messages are dropped. It is safe to call more than once.
func (t *Transport) Close() error {
	t.closeOnce.Do(func() {
		t.mu.Lock()
		t.closed = true
		ln := t.ln
		conns := make([]net.Conn, 0, len(t.inbound))
		for c := range t.inbound {
			conns = append(conns, c)
		}
		t.mu.Unlock()
		t.cancel() // aborts dials; closes outbound connections
		if ln != nil {
			if err := ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
				t.closeErr = fmt.Errorf("transport: closing listener: %w", err)
			}
		}
		for _, c := range conns {
			_ = c.Close()
		}
		t.wg.Wait()
	})
	return t.closeErr
}

// spawn runs f on a new goroutine that Close waits for, unless the
// transport is closed.
func (t *Transport) spawn(f func()) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		f()
	}()
	return true
}

// sleep waits for d, or returns false once the transport closes.
func (t *Transport) sleep(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-t.ctx.Done():
		return false
	}
}

// jitter returns a duration drawn uniformly from [d/2, d].
func jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d/2+1)
}

// refusedError is a peer's refusal of a hello.
type refusedError struct{ code helloCode }

func (e refusedError) Error() string {
	return "transport: the peer refused the stream: " + e.code.String()
}

// dial connects to a peer and exchanges the hello for a stream of the
// given kind, within Config.DialTimeout.
func (t *Transport) dial(to uint64, addr string, kind streamKind) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(t.ctx, t.cfg.DialTimeout)
	defer cancel()
	conn, err := t.cfg.Dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	// The deadline bounds the exchange; cancelling ctx (Close) cuts it short.
	deadline, _ := ctx.Deadline()
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	err = t.handshake(conn, deadline, to, kind)
	if !stop() && err == nil {
		err = ctx.Err()
	}
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	return conn, nil
}

// handshake sends the hello and reads the acceptor's answer.
func (t *Transport) handshake(conn net.Conn, deadline time.Time, to uint64, kind streamKind) error {
	if err := conn.SetDeadline(deadline); err != nil {
		return err
	}
	h := hello{version: version, kind: kind, from: t.cfg.ID, to: to, cluster: t.cfg.ClusterID}
	if _, err := conn.Write(appendHello(nil, h)); err != nil {
		return fmt.Errorf("transport: sending hello: %w", err)
	}
	var code [1]byte
	if _, err := io.ReadFull(conn, code[:]); err != nil {
		return fmt.Errorf("transport: reading the answer to hello: %w", err)
	}
	if c := helloCode(code[0]); c != helloOK {
		return refusedError{c}
	}
	return conn.SetDeadline(time.Time{})
}
