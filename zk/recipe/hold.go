package recipe

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/paddockhq/paddock/zk"
)

// hold is the ownership of one ephemeral node: a lock held, a leadership, a
// membership. Its monitor goroutine watches the node and the session and
// closes lost as soon as the ownership is no longer guaranteed:
//
//   - the session ends (expired, closed, authentication failed);
//   - the node is found deleted;
//   - the Conn has had no read-write server for longer than grace.
//
// After a loss for which the session may still be alive, the monitor deletes
// the node and its twins, so that a holder that gave up does not block the
// others.
type hold struct {
	conn  *zk.Conn
	node  string
	grace time.Duration

	lost     chan struct{}
	lostOnce sync.Once
	mu       sync.Mutex
	cause    error

	ctx    context.Context // ends when release stops the monitor
	cancel context.CancelFunc
	done   chan struct{}
}

func newHold(conn *zk.Conn, node string, o options) *hold {
	ctx, cancel := context.WithCancel(context.Background())
	h := &hold{
		conn:   conn,
		node:   node,
		grace:  o.graceFor(conn.SessionTimeout()),
		lost:   make(chan struct{}),
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
	}
	go h.run()
	return h
}

// end closes lost with cause, once.
func (h *hold) end(cause error) {
	h.lostOnce.Do(func() {
		h.mu.Lock()
		h.cause = cause
		h.mu.Unlock()
		close(h.lost)
	})
}

// err returns why the hold ended (nil while it lasts).
func (h *hold) err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cause
}

// release stops the monitor, ends the hold and deletes the node (retrying on
// connection loss until ctx ends), with its twins (see deleteOwn).
//
// After a loss, release only cleans up and returns nil: the holder can do
// nothing more. A session that lives on (a loss through the grace, or the
// node deleted by someone else) may still hold the node or a twin, so the
// deletion is not given up when ctx ends, which would leave them blocking
// the others as long as the session lives: it goes on in the background, as
// the monitor's did, until it is done or the session is over.
func (h *hold) release(ctx context.Context, cause error) error {
	h.cancel()
	<-h.done
	h.end(cause)
	if h.err() == cause { // held until now (or a release that failed)
		return deleteOwn(ctx, h.conn, h.node)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		deleteOwn(context.Background(), h.conn, h.node)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return nil
}

func (h *hold) run() {
	defer close(h.done)
	// The watch outlives the monitor until the node goes: drop what it
	// delivers then.
	w := newClosingQueue()
	defer w.close()
	var (
		graceT  *time.Timer
		graceC  <-chan time.Time
		graceAt time.Time // when graceT fires
		retryC  <-chan time.Time
		check   = true
		backoff = 20 * time.Millisecond
	)
	away := func() {
		if graceT == nil {
			graceAt = time.Now().Add(h.grace)
			graceT = time.NewTimer(h.grace)
			graceC = graceT.C
		}
	}
	back := func() {
		if graceT != nil {
			graceT.Stop()
			graceT, graceC = nil, nil
		}
	}
	defer back()
	for {
		if check {
			check = false
			// A call made while disconnected waits for a connection
			// attempt: while away, wait no longer than the grace.
			if h.conn.State() != zk.StateSyncConnected {
				away()
			}
			cctx, cancel := h.ctx, context.CancelFunc(func() {})
			if graceT != nil {
				cctx, cancel = context.WithDeadline(h.ctx, graceAt)
			}
			// ExistsW both confirms the node and keeps w registered, so
			// that w receives the session's state changes.
			ok, _, err := h.conn.ExistsW(cctx, h.node, w)
			cancel()
			switch {
			case h.ctx.Err() != nil:
				return
			case err == nil && !ok:
				h.lose(ErrNodeDeleted)
				return
			case err == nil:
				backoff = 20 * time.Millisecond
				if h.conn.State() == zk.StateSyncConnected {
					back()
				} else {
					away()
				}
			case sessionOver(err):
				h.lose(err)
				return
			default: // connection loss and the like: try again soon
				away()
				retryC = time.After(backoff)
				backoff = min(2*backoff, time.Second)
			}
		}
		select {
		case <-h.ctx.Done():
			return
		case <-graceC:
			h.lose(ErrDisconnected)
			return
		case <-retryC:
			retryC = nil
			check = true
		case <-w.wake:
			for _, e := range w.take() {
				if e.Type == zk.EventNone {
					switch {
					case finalState(e.State):
						h.lose(stateError(e.State))
						return
					case e.State == zk.StateSyncConnected:
						check = true // back: is the node still there?
					default: // Disconnected, ConnectedReadOnly
						away()
					}
					continue
				}
				if e.Path == h.node && e.Type == zk.EventNodeDeleted {
					h.lose(ErrNodeDeleted)
					return
				}
				check = true // the watch fired for another reason: set it again
			}
		}
	}
}

// lose ends the hold for cause, unless release stopped the monitor first,
// and deletes the node if the session may still be alive.
func (h *hold) lose(cause error) {
	if h.ctx.Err() != nil {
		return
	}
	h.end(cause)
	if errors.Is(cause, ErrDisconnected) || errors.Is(cause, ErrNodeDeleted) {
		// The session may come back with the node, and a twin may
		// outlive it: take them out. release (which deletes them as
		// well) stops this attempt.
		deleteOwn(h.ctx, h.conn, h.node)
	}
}
