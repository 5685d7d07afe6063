package recipe

import (
	"context"
	"sync"
)

// latest holds the current value of something watched, for readers: the
// value, and a channel that receives each new value with the latest one
// winning (a reader that falls behind skips to the newest value, never to
// an older one, and is never sent a value twice).
type latest[T any] struct {
	mu      sync.Mutex
	val     T
	loaded  bool
	err     error         // why the watching stopped
	ready   chan struct{} // closed at the first value, or at stop
	updates chan T        // capacity 1; closed at stop
	stopped bool
}

func newLatest[T any]() *latest[T] {
	return &latest[T]{ready: make(chan struct{}), updates: make(chan T, 1)}
}

// set publishes v. It never blocks: a value the reader has not taken yet is
// replaced.
func (l *latest[T]) set(v T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	l.val = v
	if !l.loaded {
		l.loaded = true
		close(l.ready)
	}
	select {
	case <-l.updates:
	default:
	}
	l.updates <- v
}

// stop ends the updates with err (kept for Err); the last value stays
// readable.
func (l *latest[T]) stop(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	l.stopped = true
	l.err = err
	close(l.updates)
	if !l.loaded {
		close(l.ready)
	}
}

// get returns the current value and whether there is one.
func (l *latest[T]) get() (T, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.val, l.loaded
}

// wait returns the current value once there is one. When the watching
// stopped before any value, it returns the reason.
func (l *latest[T]) wait(ctx context.Context) (T, error) {
	select {
	case <-l.ready:
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.loaded {
		return l.val, l.err
	}
	return l.val, nil
}

func (l *latest[T]) failure() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}
