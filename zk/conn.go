package zk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// Conn is a ZooKeeper session: one connection at a time to one server of
// the ensemble, re-established to the same or another server when it drops,
// for as long as the session lives. A Conn is safe for concurrent use.
type Conn struct {
	cfg    config
	hosts  HostProvider
	root   chroot
	log    *slog.Logger
	events *delivery

	wake    chan struct{} // cap 1: outq has calls to write
	closeCh chan struct{} // closed by Close
	done    chan struct{} // closed when the connection loop has ended
	ready   chan struct{} // closed at the first session or final state
	once    sync.Once     // closes ready

	mu        sync.Mutex
	state     State
	closing   bool
	sessionID int64
	passwd    []byte
	timeout   time.Duration // negotiated session timeout
	lastZxid  int64
	xid       int32
	outq      []*call // submitted, not written yet
	pending   []*call // written, waiting for a reply, in xid order
	lastAsync *call   // the last asynchronous call submitted, until it completes
	lastAuth  *call   // the last asynchronous auth call submitted, likewise
	authq     []*call // auth packets written, waiting for their reply
	auth      []authInfo
	watches   registry
	server    string       // address of the current connection
	prefer    string       // a read-write server found while read-only
	lastHeard atomic.Int64 // unix nanoseconds of the last frame read
	seenRW    bool         // a read-write server accepted the session
	authFail  bool         // the server refused credentials
	lastErr   error        // why the last attempt or connection failed
}

// Connect starts a session with the ensemble named by connectString
// ("host1:port1,host2:port2/optional/chroot") and returns once the session is
// established, or when ctx ends (the Conn is then closed and the error wraps
// ErrNoServer and ctx's error). The Conn reconnects by itself afterwards;
// Close ends the session.
func Connect(ctx context.Context, connectString string, opts ...Option) (*Conn, error) {
	hosts, root, err := ParseConnectString(connectString)
	if err != nil {
		return nil, err
	}
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.sessionTimeout <= 0 {
		return nil, fmt.Errorf("zk: connect: session timeout %v is not positive", cfg.sessionTimeout)
	}
	c := &Conn{
		cfg:     cfg,
		hosts:   cfg.hostProvider(hosts),
		root:    chroot(root),
		log:     cfg.logger,
		events:  newDelivery(cfg.executor),
		wake:    make(chan struct{}, 1),
		closeCh: make(chan struct{}),
		done:    make(chan struct{}),
		ready:   make(chan struct{}),
		state:   StateDisconnected,
		timeout: cfg.sessionTimeout,
		auth:    append([]authInfo(nil), cfg.auth...),
		passwd:  make([]byte, 16),
	}
	go c.loop()
	select {
	case <-c.ready:
		c.mu.Lock()
		st, lastErr := c.state, c.lastErr
		c.mu.Unlock()
		if st.final() {
			c.Close()
			return nil, fmt.Errorf("zk: connect %s: session %s: %w", connectString, st, lastErr)
		}
		return c, nil
	case <-ctx.Done():
		c.mu.Lock()
		lastErr := c.lastErr
		c.mu.Unlock()
		c.Close()
		if lastErr == nil {
			lastErr = errors.New("no attempt finished")
		}
		return nil, fmt.Errorf("%w %s: %w (last error: %w)", ErrNoServer, connectString, ctx.Err(), lastErr)
	}
}

// State returns the session's current state.
func (c *Conn) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// SessionID returns the session id (0 before the session is established).
func (c *Conn) SessionID() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

// SessionPassword returns a copy of the session's password.
func (c *Conn) SessionPassword() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.passwd...)
}

// SessionTimeout returns the timeout the server granted (the requested one
// before the session is established).
func (c *Conn) SessionTimeout() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timeout
}

// Server returns the address of the server the Conn is connected to, or ""
// while disconnected.
func (c *Conn) Server() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.state.Connected() {
		return ""
	}
	return c.server
}

// LastZxid returns the highest zxid seen in a reply; the Conn never
// resumes its session on a server that has seen less.
func (c *Conn) LastZxid() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastZxid
}

// QueuedEvents returns the number of callbacks and events waiting for
// delivery: a measure of how far behind the application's consumers are.
func (c *Conn) QueuedEvents() int { return c.events.len() }

// Close ends the session: it asks the server to close it (waiting at most
// two thirds of the session timeout for the answer), fails every call still
// waiting with ErrClosed, and delivers StateClosed to the watchers. The
// delivery goroutine ends once it has run what was queued; Close does not
// wait for it, so it may be called from a callback. Close is idempotent.
//
// Close returns an error only when it asked the server to close the session
// and got no confirmation (the connection was lost or the server did not
// answer in time): the Conn is closed all the same, but the session may
// live on, with its ephemeral znodes, until the server expires it. Closing
// while disconnected, or a second time, returns nil.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closing || c.state.final() {
		c.mu.Unlock()
		<-c.done
		return nil
	}
	c.closing = true
	connected := c.state.Connected()
	wait := c.timeout * 2 / 3
	c.mu.Unlock()
	var err error
	if connected {
		cl := c.newCall(proto.OpCloseSession, "", &proto.Empty{}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		if err = c.do(ctx, cl); err != nil {
			c.log.Debug("zk: close session", "err", err)
			err = fmt.Errorf("zk: close session 0x%x: %w", c.SessionID(), err)
		}
		cancel()
	}
	close(c.closeCh)
	<-c.done
	return err
}

// loop connects, serves and reconnects until the session ends.
func (c *Conn) loop() {
	defer close(c.done)
	backoff := 50 * time.Millisecond
	for {
		if c.isClosing() {
			// Close asked the server to end the session: do not come
			// back, wait for Close to finish.
			<-c.closeCh
			c.end(StateClosed, ErrClosed, false)
			return
		}
		if c.expiredLocally() {
			c.log.Info("zk: session expired: no server heard from within the session timeout")
			c.end(StateExpired, ErrSessionExpired, false)
			return
		}
		addr, roundDone, err := c.nextServer()
		if roundDone || err != nil {
			// Every server failed once: pause before the next round.
			d := backoff/2 + rand.N(backoff/2+1)
			backoff = min(backoff*2, time.Second)
			select {
			case <-time.After(d):
			case <-c.closeCh:
				continue
			}
		}
		if err != nil {
			c.failAttempt(err)
			continue
		}
		nc, resp, err := c.handshake(addr)
		if err != nil {
			c.log.Debug("zk: connect failed", "server", addr, "err", err)
			c.failAttempt(fmt.Errorf("%s: %w", addr, err))
			continue
		}
		if resp.TimeOut <= 0 {
			nc.Close()
			c.log.Info("zk: session expired", "server", addr)
			c.end(StateExpired, ErrSessionExpired, true)
			return
		}
		backoff = 50 * time.Millisecond
		c.hosts.Connected()
		c.serve(nc, addr, resp)
		if c.authFailed() {
			c.end(StateAuthFailed, ErrAuthFailed, true)
			return
		}
	}
}

func (c *Conn) isClosing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closing
}

func (c *Conn) stopping() bool {
	select {
	case <-c.closeCh:
		return true
	default:
		return false
	}
}

// expiredLocally reports whether an established session has gone a whole
// session timeout without hearing from any server.
func (c *Conn) expiredLocally() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	heard := c.lastHeard.Load()
	return c.sessionID != 0 && heard != 0 && time.Since(time.Unix(0, heard)) >= c.timeout
}

func (c *Conn) authFailed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.authFail
}

func (c *Conn) nextServer() (string, bool, error) {
	c.mu.Lock()
	prefer := c.prefer
	c.prefer = ""
	c.mu.Unlock()
	if prefer != "" {
		return prefer, false, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.connectTimeout())
	defer cancel()
	return c.hosts.Next(ctx)
}

// connectTimeout is the time one attempt gets: the session timeout shared
// among the servers, as ZooKeeper's client does, but at most a third of it,
// so that a server which accepts the connection and never answers (a
// ZooKeeper server still loading its data does that) leaves time for two
// more attempts before the session expires. ZooKeeper's client gives a
// single server the whole session timeout and loses the session there.
func (c *Conn) connectTimeout() time.Duration {
	c.mu.Lock()
	t := c.timeout
	c.mu.Unlock()
	n := max(c.hosts.Len(), 3)
	return max(t/time.Duration(n), 100*time.Millisecond)
}

// failAttempt records a failed attempt and fails the calls queued while
// disconnected, as ZooKeeper's client does after each failed attempt.
func (c *Conn) failAttempt(err error) {
	c.mu.Lock()
	c.lastErr = err
	lost := error(ErrConnectionLoss)
	if c.closing {
		lost = ErrClosed // Close fails the calls still waiting with ErrClosed
	}
	q := c.outq
	c.outq = nil
	c.mu.Unlock()
	for _, cl := range q {
		releaseFrame(cl.frame)
		c.finish(cl, lost)
	}
}

// end makes st the final state: every call still waiting fails with err,
// every watcher and the default watcher get the state event, and delivery
// stops after that. With eventFirst the event goes ahead of the failed
// calls' callbacks, as the Java client queues it when the server says the
// session is over (Expired in the handshake, AuthFailed); when the client
// ends the session itself (Close, expiry found locally) the callbacks go
// first, as there.
func (c *Conn) end(st State, err error, eventFirst bool) {
	c.mu.Lock()
	c.state = st
	c.lastErr = err // what Connect reports when the session never started
	calls := c.takeCallsLocked()
	watchers := c.stateWatchersLocked()
	c.watches.clear()
	c.mu.Unlock()
	if eventFirst {
		c.deliverState(st, watchers)
	}
	for _, cl := range calls {
		c.finish(cl, err)
	}
	if !eventFirst {
		c.deliverState(st, watchers)
	}
	c.events.close()
	c.once.Do(func() { close(c.ready) })
}

// takeCallsLocked removes and returns every waiting call in xid order.
func (c *Conn) takeCallsLocked() []*call {
	calls := make([]*call, 0, len(c.authq)+len(c.pending)+len(c.outq))
	calls = append(calls, c.authq...)
	calls = append(calls, c.pending...)
	for _, cl := range c.outq {
		releaseFrame(cl.frame)
		cl.frame = nil
		calls = append(calls, cl)
	}
	c.authq, c.pending, c.outq = nil, nil, nil
	return calls
}

// stateWatchersLocked returns the default watcher and every registered
// watcher, each once: the watchers a session event goes to.
func (c *Conn) stateWatchersLocked() []Watcher {
	var ws []Watcher
	if c.cfg.defaultWatcher != nil {
		ws = append(ws, c.cfg.defaultWatcher)
	}
	return appendUnique(ws, c.watches.all())
}

func (c *Conn) deliverState(st State, ws []Watcher) {
	ev := Event{Type: EventNone, State: st, Zxid: -1}
	for _, w := range ws {
		c.events.push(func() { w.Process(ev) })
	}
}
