package server

import "sync"

// outQueue is a connection's outbound frame queue, bounded in bytes. Pushers
// (the responder and apply) never block; the responder takes everything
// queued at once and writes it with one vectored write.
type outQueue struct {
	mu    sync.Mutex
	bufs  [][]byte
	bytes int
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

// push queues a frame. It returns false if the queue is over its limit.
func (q *outQueue) push(b []byte) bool {
	q.mu.Lock()
	if q.dead {
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

// takeNow appends every queued frame to dst and empties the queue.
func (q *outQueue) takeNow(dst [][]byte) [][]byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.dead || len(q.bufs) == 0 {
		return dst
	}
	dst = append(dst, q.bufs...)
	clear(q.bufs)
	q.bufs = q.bufs[:0]
	q.bytes = 0
	return dst
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
