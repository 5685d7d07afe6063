package transport

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// snapMsg is a MsgSnap for the snapshot at index. Its Data must not be
// sent: the body comes from Config.OpenSnapshot.
func snapMsg(from, to, index uint64) raftpb.Message {
	return raftpb.Message{
		Type: raftpb.MsgSnap, From: from, To: to, Term: 2,
		Snapshot: &raftpb.Snapshot{
			Data: []byte("in-memory data that must not be sent"),
			Metadata: raftpb.SnapshotMetadata{
				Index: index, Term: 2, ConfState: raftpb.ConfState{Voters: []uint64{1, 2, 3}},
			},
		},
	}
}

func randomBytes(n int, seed byte) []byte {
	b := make([]byte, n)
	_, _ = rand.NewChaCha8([32]byte{seed}).Read(b)
	return b
}

// waitReport waits for the sender's single snapshot report.
func waitReport(t *testing.T, rep *reporter) snapReport {
	t.Helper()
	rep.waitFor(t, "a snapshot report", func() bool { return len(rep.snapshotReports()) > 0 })
	got := rep.snapshotReports()
	if len(got) != 1 {
		t.Fatalf("snapshot reports %v, want one", got)
	}
	return got[0]
}

func TestSnapshot(t *testing.T) {
	const size = 8 << 20
	body := randomBytes(size, 1)
	open := func(index uint64) (io.ReadCloser, int64, error) {
		if index != 42 {
			return nil, 0, errors.New("no such snapshot")
		}
		return io.NopCloser(bytes.NewReader(body)), size, nil
	}
	readAll := func(r io.Reader) error {
		got, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		if sha256.Sum256(got) != sha256.Sum256(body) {
			return errors.New("body differs")
		}
		return nil
	}
	tests := []struct {
		name    string
		open    func(uint64) (io.ReadCloser, int64, error)
		handle  func(r io.Reader) error
		ok      bool
		called  bool  // whether the receiver's handler runs
		readErr error // what the handler's reads must end with, if it runs
	}{
		{name: "stored", open: open, handle: readAll, ok: true, called: true},
		{name: "handler fails", open: open, called: true,
			handle: func(r io.Reader) error {
				if err := readAll(r); err != nil {
					return err
				}
				return errors.New("disk full")
			}},
		{name: "handler returns early", open: open, called: true,
			handle: func(r io.Reader) error {
				_, err := io.CopyN(io.Discard, r, size/2)
				return err
			}},
		{name: "body shorter than its size", called: true, readErr: io.ErrUnexpectedEOF,
			open: func(uint64) (io.ReadCloser, int64, error) {
				return io.NopCloser(bytes.NewReader(body[:size/2])), size, nil
			},
			handle: func(r io.Reader) error {
				_, err := io.ReadAll(r)
				return err
			}},
		{name: "open fails", handle: readAll,
			open: func(uint64) (io.ReadCloser, int64, error) { return nil, 0, errors.New("gone") }},
		{name: "no snapshot source", handle: readAll},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			tn := newTestNet()
			ids := []uint64{1, 2}
			m1 := tn.start(t, 1, ids, func(c *Config) { c.OpenSnapshot = tt.open })
			m2 := tn.start(t, 2, ids, nil)
			type call struct {
				m    raftpb.Message
				size int64
				err  error
			}
			calls := make(chan call, 1)
			m2.h.snap = func(m raftpb.Message, r io.Reader, size int64) error {
				err := tt.handle(r)
				calls <- call{m, size, err}
				return err
			}
			msg := snapMsg(1, 2, 42)
			m1.tr.Send([]raftpb.Message{msg})
			if got := waitReport(t, m1.rep); got != (snapReport{2, tt.ok}) {
				t.Errorf("report %+v, want ok=%v for member 2", got, tt.ok)
			}
			if string(msg.Snapshot.Data) != "in-memory data that must not be sent" {
				t.Error("Send modified the caller's message")
			}
			if !tt.called {
				_ = m2.tr.Close() // waits for a handler call, if any
				if len(calls) != 0 {
					t.Error("the receiver's handler ran")
				}
				return
			}
			var c call
			select {
			case c = <-calls:
			case <-time.After(waitTimeout):
				t.Fatal("the receiver's handler did not return")
			}
			if tt.readErr != nil && !errors.Is(c.err, tt.readErr) {
				t.Errorf("handler's read ended with %v, want %v", c.err, tt.readErr)
			}
			if !tt.ok {
				return
			}
			if c.err != nil {
				t.Fatal(c.err)
			}
			if c.size != size {
				t.Errorf("size %d, want %d", c.size, size)
			}
			m := c.m
			if m.Type != raftpb.MsgSnap || m.From != 1 || m.To != 2 || m.Term != 2 || m.Snapshot == nil ||
				m.Snapshot.Metadata.Index != 42 || m.Snapshot.Metadata.Term != 2 ||
				len(m.Snapshot.Metadata.ConfState.Voters) != 3 {
				t.Errorf("received %+v, want the MsgSnap sent", m)
			}
			if m.Snapshot != nil && len(m.Snapshot.Data) != 0 {
				t.Errorf("the message carried %d bytes of Snapshot.Data; it must be empty", len(m.Snapshot.Data))
			}
		})
	}
}

// TestSnapshotDoesNotBlockMessages checks that while a big snapshot streams
// to a peer (its receiver stalled), raft messages to the same peer still get
// through, and that a second MsgSnap for the peer meanwhile is dropped.
func TestSnapshotDoesNotBlockMessages(t *testing.T) {
	checkLeaks(t)
	tn := newTestNet()
	ids := []uint64{1, 2}
	const size = 64 << 20
	var opened atomic.Int32
	m1 := tn.start(t, 1, ids, func(c *Config) {
		c.OpenSnapshot = func(uint64) (io.ReadCloser, int64, error) {
			opened.Add(1)
			return io.NopCloser(io.LimitReader(zeros{}, size)), size, nil
		}
	})
	m2 := tn.start(t, 2, ids, nil)
	reading, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	m2.h.snap = func(m raftpb.Message, r io.Reader, n int64) error {
		calls.Add(1)
		if _, err := io.CopyN(io.Discard, r, 1<<20); err != nil {
			return err
		}
		close(reading)
		<-release
		got, err := io.Copy(io.Discard, r)
		if err == nil && got != n-1<<20 {
			err = errors.New("short body")
		}
		return err
	}
	m1.tr.Send([]raftpb.Message{snapMsg(1, 2, 10)})
	select {
	case <-reading:
	case <-time.After(waitTimeout):
		t.Fatal("snapshot not received")
	}
	for seq := uint64(1); seq <= 50; seq++ {
		m1.tr.Send([]raftpb.Message{raftMsg(1, 2, seq)})
	}
	for seq := uint64(1); seq <= 50; seq++ {
		expectSeq(t, m2.h, 1, seq)
	}
	m1.tr.Send([]raftpb.Message{snapMsg(1, 2, 11)}) // dropped: one in flight
	close(release)
	if got := waitReport(t, m1.rep); got != (snapReport{2, true}) {
		t.Errorf("report %+v, want success for member 2", got)
	}
	_ = m1.tr.Close() // waits for a second snapshot sender, had one started
	if got := m1.rep.snapshotReports(); len(got) != 1 {
		t.Errorf("snapshot reports %v, want one", got)
	}
	if opened.Load() != 1 || calls.Load() != 1 {
		t.Errorf("snapshot opened %d times, received %d times; want once", opened.Load(), calls.Load())
	}
}

// TestNewerSnapshotStreamReplacesOlder checks that a member serves one
// snapshot stream per peer at a time: a newer one (a retransmission after
// the sender gave up on the first) closes the older and waits for its
// handler to return before it runs the handler in turn, and is stored.
func TestNewerSnapshotStreamReplacesOlder(t *testing.T) {
	checkLeaks(t)
	tn := newTestNet()
	m := tn.start(t, 1, []uint64{1, 2}, nil)
	var running atomic.Int32
	started := make(chan struct{})
	firstErr := make(chan error, 1)
	release := make(chan struct{})
	m.h.snap = func(msg raftpb.Message, r io.Reader, size int64) error {
		if running.Add(1) != 1 {
			t.Error("two snapshot handlers run at once for one peer")
		}
		defer running.Add(-1)
		if msg.Snapshot.Metadata.Index == 1 {
			close(started)
			_, err := io.Copy(io.Discard, r)
			firstErr <- err
			<-release // still storing what it read
			return err
		}
		got, err := io.ReadAll(r)
		if err == nil && string(got) != "body" {
			err = fmt.Errorf("body %q", got)
		}
		return err
	}
	h := validHello()
	h.kind = kindSnapshot
	header := func(index uint64, size int64) []byte {
		s := snapMsg(2, 1, index)
		s.Snapshot.Data = nil
		p, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return appendSnapshotHeader(appendHello(nil, h), p, size)
	}
	// The first stream stalls halfway through its body.
	first := rawDial(t, m, append(header(1, 100), make([]byte, 50)...))
	if got := readAnswer(t, first); got != helloOK {
		t.Fatalf("answer %v", got)
	}
	select {
	case <-started:
	case <-time.After(waitTimeout):
		t.Fatal("the first snapshot's handler was not called")
	}
	second := rawDial(t, m, append(header(2, 4), "body"...))
	if got := readAnswer(t, second); got != helloOK {
		t.Fatalf("answer %v", got)
	}
	// Closing the first stream fails its handler's read at once, well
	// before the read's own deadline.
	select {
	case err := <-firstErr:
		if err == nil {
			t.Error("the replaced stream's body read to its end")
		}
	case <-time.After(chunkTimeout / 2):
		t.Fatal("the newer stream did not close the older one")
	}
	close(release)
	var verdict [1]byte
	if _, err := io.ReadFull(second, verdict[:]); err != nil || verdict[0] != snapshotOK {
		t.Fatalf("verdict on the newer stream: %v, %v", verdict[0], err)
	}
	expectClosed(t, first)
}
