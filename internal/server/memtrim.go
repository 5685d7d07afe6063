package server

import (
	"runtime/debug"
	"sync"
	"time"
)

// memTrimmer decides when the server hands freed memory back to the OS
// (debug.FreeOSMemory, a full collection). A snapshot leaves behind the
// copies its stream kept, so after one the heap holds much garbage; but
// under heavy writes a large tree is snapshotted every few seconds, and a
// forced collection of it each time costs a fifth of the write throughput.
// So a snapshot frees at once only if the last free was at least
// freeMemoryEvery ago; otherwise the free waits for the first tick at which
// nothing was applied since the tick before (the server went quiet).
type memTrimmer struct {
	mu       sync.Mutex
	every    time.Duration // 0: freeMemoryEvery
	lastFree time.Time
	pending  bool
	lastZxid int64
}

// snapshotDone reports whether to free memory now that a snapshot ended.
func (m *memTrimmer) snapshotDone(now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	every := m.every
	if every == 0 {
		every = freeMemoryEvery
	}
	if !m.lastFree.IsZero() && now.Sub(m.lastFree) < every {
		m.pending = true
		return false
	}
	m.lastFree, m.pending = now, false
	return true
}

// tick reports whether to free memory now, given the last applied zxid: a
// pending free goes ahead once a whole tick passed with nothing applied.
func (m *memTrimmer) tick(zxid int64, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	quiet := zxid == m.lastZxid
	m.lastZxid = zxid
	if !m.pending || !quiet {
		return false
	}
	m.lastFree, m.pending = now, false
	return true
}

// freeMemoryEvery is the least time between two returns of memory to the
// OS right after snapshots.
const freeMemoryEvery = time.Minute

// memTrimTick is how often memoryLoop looks whether the server went quiet.
const memTrimTick = time.Second

// memoryLoop frees memory a snapshot left behind once the server is quiet
// (see memTrimmer).
func (s *Server) memoryLoop() {
	s.every(memTrimTick, func(now time.Time) {
		if s.memTrim.tick(s.zxid.Load(), now) {
			debug.FreeOSMemory()
		}
	})
}
