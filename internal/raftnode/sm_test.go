package raftnode_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// listSM is a toy state machine: the list of applied proposals.
type listSM struct {
	mu       sync.Mutex
	applied  uint64
	items    []string
	restored uint64 // index of the snapshot restored, 0 if none
	bad      error  // first apply out of order
	onApply  func(index uint64, data []byte)
	changed  chan struct{} // a token after each Apply
}

func newListSM() *listSM { return &listSM{changed: make(chan struct{}, 1)} }

func (s *listSM) Apply(index, _ uint64, data []byte) {
	s.mu.Lock()
	if index != s.applied+1 && s.bad == nil {
		s.bad = fmt.Errorf("applied index %d after %d", index, s.applied)
	}
	s.applied = index
	if len(data) > 0 {
		s.items = append(s.items, string(data))
	}
	hook := s.onApply
	s.mu.Unlock()
	if hook != nil && len(data) > 0 {
		hook(index, data)
	}
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *listSM) Snapshot() (func(io.Writer) error, error) {
	s.mu.Lock()
	applied, items := s.applied, slices.Clone(s.items)
	s.mu.Unlock()
	return func(w io.Writer) error {
		b := binary.BigEndian.AppendUint64(nil, applied)
		b = binary.BigEndian.AppendUint32(b, uint32(len(items)))
		for _, it := range items {
			b = binary.BigEndian.AppendUint32(b, uint32(len(it)))
			b = append(b, it...)
		}
		_, err := w.Write(b)
		return err
	}, nil
}

func (s *listSM) Restore(b []byte) error {
	if len(b) < 12 {
		return errors.New("short snapshot")
	}
	applied, n := binary.BigEndian.Uint64(b), binary.BigEndian.Uint32(b[8:])
	b = b[12:]
	items := make([]string, 0, n)
	for range n {
		if len(b) < 4 || uint32(len(b)-4) < binary.BigEndian.Uint32(b) {
			return errors.New("truncated snapshot")
		}
		l := binary.BigEndian.Uint32(b)
		items = append(items, string(b[4:4+l]))
		b = b[4+l:]
	}
	s.mu.Lock()
	s.applied, s.items, s.restored = applied, items, applied
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
	return nil
}

// state returns a copy of the state machine's state.
func (s *listSM) state() (applied uint64, items []string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applied, slices.Clone(s.items), s.bad
}

// waitItems waits until the state machine holds at least n items.
func (s *listSM) waitItems(t testing.TB, n int) []string {
	t.Helper()
	return s.waitFor(t, fmt.Sprintf("%d items", n), func(items []string) bool { return len(items) >= n })
}

// waitFor waits until cond holds for the state machine's items.
func (s *listSM) waitFor(t testing.TB, what string, cond func(items []string) bool) []string {
	t.Helper()
	timer := time.NewTimer(20 * time.Second)
	defer timer.Stop()
	for {
		_, items, err := s.state()
		if err != nil {
			t.Fatal(err)
		}
		if cond(items) {
			return items
		}
		select {
		case <-s.changed:
		case <-timer.C:
			t.Fatalf("state machine has %d items, waited for %s", len(items), what)
		}
	}
}

// eventually polls cond until it holds or 20 seconds pass.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
