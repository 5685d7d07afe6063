package server

import "sync"

// outQueue is a connection's outbound frame queue, bounded in bytes. Pushers
// never block; the writer goroutine takes everything queued at once and
// writes it with one vectored write.
type outQueue struct {
	mu      sync.Mutex
	bufs    [][]byte
	bytes   int
	limit   int
	closing bool // flush what is queued, then close
	dead    bool
	wake    chan struct{}
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

// push queues a frame. It returns false if the queue is over its limit.
func (q *outQueue) push(b []byte) bool {
	q.mu.Lock()
	if q.dead || q.closing {
		q.mu.Unlock()
		return true
	}
	if q.bytes+len(b) > q.limit {
		q.mu.Unlock()
		return false
	}
	q.bufs = append(q.bufs, b)
	q.bytes += len(b)
	q.mu.Unlock()
	q.signal()
	return true
}

func (q *outQueue) size() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.bytes
}

func (q *outQueue) empty() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.bufs) == 0
}

// take waits for queued frames and appends them to dst. ok is false when the
// writer should stop: the connection is done, or it is closing with nothing
// left to write.
func (q *outQueue) take(dst [][]byte, done <-chan struct{}) (out [][]byte, ok, closing bool) {
	for {
		q.mu.Lock()
		if q.dead {
			q.mu.Unlock()
			return dst, false, false
		}
		if len(q.bufs) > 0 {
			dst = append(dst, q.bufs...)
			for i := range q.bufs {
				q.bufs[i] = nil
			}
			q.bufs = q.bufs[:0]
			q.bytes = 0
			closing := q.closing
			q.mu.Unlock()
			return dst, true, closing
		}
		if q.closing {
			q.mu.Unlock()
			return dst, false, true
		}
		q.mu.Unlock()
		select {
		case <-q.wake:
		case <-done:
			return dst, false, false
		}
	}
}

// flushAndClose makes the writer stop once everything queued is written.
func (q *outQueue) flushAndClose() {
	q.mu.Lock()
	q.closing = true
	q.mu.Unlock()
	q.signal()
}

// shutdown drops everything queued.
func (q *outQueue) shutdown() {
	q.mu.Lock()
	q.dead = true
	q.bufs = nil
	q.bytes = 0
	q.mu.Unlock()
	q.signal()
}
