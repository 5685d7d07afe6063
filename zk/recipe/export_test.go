package recipe

// LatchDone returns a channel closed when l's background goroutine has
// ended (nil before Start).
func LatchDone(l *LeaderLatch) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.done
}
