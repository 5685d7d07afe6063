package server

import "sync"

// maxSpareBuf is the largest write buffer a connection keeps for reuse
// after writing it; a larger one (a burst of replies, a big getData) is
// left to the garbage collector.
const maxSpareBuf = 32 << 10

// outQueue is a connection's outbound frame queue, bounded in bytes. Frames
// are queued back to back in one buffer, so queuing a reply allocates
// nothing once the buffers have grown to the connection's usual batch:
// the flusher takes the whole buffer, writes it with one write and hands it
// back as the spare the next frames fill. Pushers (the responder, the
// reader's inline reads and apply) never block.
type outQueue struct {
	mu    sync.Mutex
	buf   []byte // queued frames, back to back
	spare []byte // an empty buffer for the next frames, kept from the last write
	limit int
	dead  bool
	wake  chan struct{}
}

func (q *outQueue) init(limit int) {
	q.limit = limit
	q.wake = make(chan struct{}, 1)
}

func (q *outQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// fill gives an empty queue the spare buffer to append to. q.mu is held.
func (q *outQueue) fill() {
	if q.buf == nil && q.spare != nil {
		q.buf, q.spare = q.spare[:0], nil
	}
}

// push queues a copy of frame b. It returns false if the queue is over its
// limit.
func (q *outQueue) push(b []byte) bool {
	q.mu.Lock()
	if q.dead {
		q.mu.Unlock()
		return true
	}
	if len(q.buf)+len(b) > q.limit {
		q.mu.Unlock()
		return false
	}
	q.fill()
	q.buf = append(q.buf, b...)
	q.mu.Unlock()
	q.signal()
	return true
}

// begin locks the queue and returns its buffer, for the caller to append
// one frame to in place and pass to end. Between the two calls the caller
// only encodes: it takes no other lock (apply queues events with the state
// lock held, so the queue's lock comes after the state lock) and does not
// block.
func (q *outQueue) begin() []byte {
	q.mu.Lock()
	q.fill()
	return q.buf
}

// end queues the frame appended to the buffer begin returned, and unlocks
// the queue. It returns false, dropping the frame, if the queue would go
// over its limit. Unlike push it does not wake the responder: the caller
// (the reader answering inline, or the responder itself) flushes.
func (q *outQueue) end(b []byte) bool {
	if q.dead {
		q.mu.Unlock()
		return true
	}
	if len(b) > q.limit {
		q.mu.Unlock()
		return false
	}
	q.buf = b
	q.mu.Unlock()
	return true
}

func (q *outQueue) size() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.buf)
}

// take returns every queued frame, back to back, and empties the queue.
// The caller writes them and then hands the buffer back with recycle.
func (q *outQueue) take() []byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.dead {
		return nil
	}
	b := q.buf
	q.buf = nil
	return b
}

// recycle keeps b, written out, as the spare buffer if it is not too large.
func (q *outQueue) recycle(b []byte) {
	if cap(b) == 0 || cap(b) > maxSpareBuf {
		return
	}
	q.mu.Lock()
	if q.spare == nil && !q.dead {
		q.spare = b[:0]
	}
	q.mu.Unlock()
}

// shutdown drops everything queued.
func (q *outQueue) shutdown() {
	q.mu.Lock()
	q.dead = true
	q.buf, q.spare = nil, nil
	q.mu.Unlock()
	q.signal()
}
