package raftnode_test

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestObserverHooks checks that OnWALSync hears of the WAL's fsyncs and
// OnSnapshot of each snapshot written, with its size.
func TestObserverHooks(t *testing.T) {
	var mu sync.Mutex
	var syncs int
	snaps := make(chan int64, 16)
	cfg := testConfig(t, t.TempDir())
	cfg.SnapCount = 10
	cfg.OnWALSync = func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		if d > 0 {
			syncs++
		}
	}
	cfg.OnSnapshot = func(took time.Duration, bytes int64) {
		if took > 0 {
			snaps <- bytes
		}
	}
	sm := newListSM()
	n := start(t, cfg, sm)
	for i := range 12 {
		propose(t, n, fmt.Sprintf("a%d", i))
	}
	sm.waitItems(t, 12)
	select {
	case size := <-snaps:
		if size <= 0 {
			t.Errorf("OnSnapshot got size %d", size)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OnSnapshot not called after SnapCount entries")
	}
	mu.Lock()
	got := syncs
	mu.Unlock()
	if want := n.WALStats().Syncs; got == 0 || uint64(got) > want {
		t.Errorf("OnWALSync heard %d fsyncs with a positive duration; the WAL made %d", got, want)
	}
}
