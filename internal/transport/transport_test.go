package transport

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// TestExchange sends interleaved raft and application messages between
// every pair of members and checks each receiver gets all of them, in the
// order each sender queued them.
func TestExchange(t *testing.T) {
	for _, size := range []int{2, 3} {
		t.Run(string(rune('0'+size))+" members", func(t *testing.T) {
			checkLeaks(t)
			tn := newTestNet()
			var ids []uint64
			for i := 1; i <= size; i++ {
				ids = append(ids, uint64(i))
			}
			members := map[uint64]*member{}
			for _, id := range ids {
				members[id] = tn.start(t, id, ids, nil)
			}
			const n = 300 // odd seqs are raft messages, even ones app messages
			for _, from := range members {
				for _, to := range ids {
					if to == from.id {
						continue
					}
					for seq := uint64(1); seq <= n; seq++ {
						if seq%2 == 1 {
							from.tr.Send([]raftpb.Message{raftMsg(from.id, to, seq)})
						} else if !from.tr.SendApp(to, appMsg(seq)) {
							t.Fatalf("SendApp %d -> %d dropped seq %d", from.id, to, seq)
						}
					}
				}
			}
			for _, to := range members {
				next := map[uint64]uint64{}
				for i := 0; i < n*(size-1); i++ {
					e := to.h.next(t)
					next[e.from]++
					if e.seq != next[e.from] || e.app != (e.seq%2 == 0) {
						t.Fatalf("member %d got seq %d (app %v) from %d, want seq %d", to.id, e.seq, e.app, e.from, next[e.from])
					}
					if !e.app {
						want := raftMsg(e.from, to.id, e.seq)
						if e.msg.To != to.id || e.msg.Type != want.Type || len(e.msg.Entries) != 1 ||
							string(e.msg.Entries[0].Data) != string(want.Entries[0].Data) {
							t.Fatalf("member %d got %+v, want %+v", to.id, e.msg, want)
						}
					}
				}
				to.h.expectNone(t)
			}
			// Everything arrived, so every outbound stream is up.
			for _, from := range members {
				for _, to := range ids {
					if to != from.id && !from.tr.Connected(to) {
						t.Errorf("member %d not connected to %d after sending it messages", from.id, to)
					}
				}
			}
		})
	}
}

// TestPeerStartsLater checks that messages queued for a peer that is down
// stay queued, that the peer is reported unreachable meanwhile, and that
// they arrive once it starts.
func TestPeerStartsLater(t *testing.T) {
	checkLeaks(t)
	tn := newTestNet()
	ids := []uint64{1, 2}
	m1 := tn.start(t, 1, ids, nil)
	m1.tr.Send([]raftpb.Message{raftMsg(1, 2, 1)})
	if !m1.tr.SendApp(2, appMsg(2)) {
		t.Fatal("SendApp to a peer that is down dropped the message; it should queue it")
	}
	m1.rep.waitFor(t, "member 2 reported unreachable", func() bool { return m1.rep.unreachableCount(2) > 0 })
	if m1.tr.Connected(2) {
		t.Fatal("Connected(2) while member 2 is down")
	}
	m2 := tn.start(t, 2, ids, nil)
	expectSeq(t, m2.h, 1, 1, 2)
	m2.tr.Send([]raftpb.Message{raftMsg(2, 1, 7)})
	expectSeq(t, m1.h, 2, 7)
	waitUntil(t, "Connected(2)", func() bool { return m1.tr.Connected(2) })
}

// TestHeartbeatsNotQueuedWhileDown checks that heartbeats for a peer that
// cannot be reached are dropped, not queued: raft's leader answers each
// heartbeat reply from a member in probe state with that member's missing
// entries, so a backlog of heartbeats delivered at once on reconnection
// made a storm. Other messages queued meanwhile are delivered.
func TestHeartbeatsNotQueuedWhileDown(t *testing.T) {
	checkLeaks(t)
	tn := newTestNet()
	ids := []uint64{1, 2}
	m1 := tn.start(t, 1, ids, nil)
	m1.rep.waitFor(t, "member 2 reported unreachable", func() bool { return m1.rep.unreachableCount(2) > 0 })
	for seq := uint64(1); seq <= 3; seq++ {
		m1.tr.Send([]raftpb.Message{{Type: raftpb.MsgHeartbeat, From: 1, To: 2, Term: 1, Index: seq}})
	}
	m1.tr.Send([]raftpb.Message{raftMsg(1, 2, 4)})
	m2 := tn.start(t, 2, ids, nil)
	expectSeq(t, m2.h, 1, 4)
	waitUntil(t, "Connected(2)", func() bool { return m1.tr.Connected(2) })
	m1.tr.Send([]raftpb.Message{{Type: raftpb.MsgHeartbeat, From: 1, To: 2, Term: 1, Index: 5}})
	expectSeq(t, m2.h, 1, 5)
}

// TestPeerRestart checks that a member notices a peer going down, reports
// it unreachable, and delivers again once the peer is back on a new port.
func TestPeerRestart(t *testing.T) {
	checkLeaks(t)
	tn := newTestNet()
	ids := []uint64{1, 2}
	m1 := tn.start(t, 1, ids, nil)
	m2 := tn.start(t, 2, ids, nil)
	m1.tr.Send([]raftpb.Message{raftMsg(1, 2, 1)})
	expectSeq(t, m2.h, 1, 1)
	waitUntil(t, "Connected(2)", func() bool { return m1.tr.Connected(2) })

	before := m1.rep.unreachableCount(2)
	tn.stop(t, m2)
	m1.rep.waitFor(t, "member 2 reported unreachable after it stopped", func() bool {
		return m1.rep.unreachableCount(2) > before
	})
	waitUntil(t, "Connected(2) false", func() bool { return !m1.tr.Connected(2) })
	m1.tr.Send([]raftpb.Message{raftMsg(1, 2, 2)}) // queued while 2 is down

	m2 = tn.start(t, 2, ids, nil)
	expectSeq(t, m2.h, 1, 2)
	m1.tr.Send([]raftpb.Message{raftMsg(1, 2, 3)})
	expectSeq(t, m2.h, 1, 3)
	m2.tr.Send([]raftpb.Message{raftMsg(2, 1, 4)})
	expectSeq(t, m1.h, 2, 4)
}

// TestDialerRefused checks the dialer's side of a refused hello: members of
// different clusters never connect, the dialer reports the peer
// unreachable, and nothing is delivered.
func TestDialerRefused(t *testing.T) {
	checkLeaks(t)
	tn := newTestNet()
	ids := []uint64{1, 2}
	m1 := tn.start(t, 1, ids, nil)
	m2 := tn.start(t, 2, ids, func(c *Config) { c.ClusterID = "another-cluster"; c.Peers = map[uint64]string{} })
	m1.tr.Send([]raftpb.Message{raftMsg(1, 2, 1)})
	m1.rep.waitFor(t, "two failed dials", func() bool { return m1.rep.unreachableCount(2) >= 2 })
	if m1.tr.Connected(2) {
		t.Fatal("Connected(2) to a member of another cluster")
	}
	m2.h.expectNone(t)
}

// TestQueueFull checks that Send and SendApp never block: with the peer's
// queue full they drop, and report the peer unreachable once per dropped
// message; the queued messages still arrive later, the dropped ones never.
func TestQueueFull(t *testing.T) {
	checkLeaks(t)
	tn := newTestNet()
	ids := []uint64{1, 2}
	release := make(chan struct{})
	m2 := tn.start(t, 2, ids, nil)
	m1 := tn.start(t, 1, ids, func(c *Config) {
		c.QueueSize = 4
		c.DialTimeout = time.Minute
		// The dial hangs until released, so nothing drains the queue and
		// no dial failure is reported.
		c.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			select {
			case <-release:
				return tn.dial(ctx, network, addr)
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	})
	done := make(chan struct{})
	var appOK bool
	go func() {
		defer close(done)
		for seq := uint64(1); seq <= 7; seq++ {
			m1.tr.Send([]raftpb.Message{raftMsg(1, 2, seq)})
		}
		appOK = m1.tr.SendApp(2, appMsg(100))
	}()
	select {
	case <-done:
	case <-time.After(waitTimeout):
		t.Fatal("Send blocked on a full queue")
	}
	if appOK {
		t.Error("SendApp on a full queue returned true")
	}
	if got := m1.rep.unreachableCount(2); got != 4 {
		t.Errorf("%d unreachable reports after dropping 4 messages, want 4", got)
	}
	close(release)
	expectSeq(t, m2.h, 1, 1, 2, 3, 4)
	m1.tr.Send([]raftpb.Message{raftMsg(1, 2, 8)})
	expectSeq(t, m2.h, 1, 8) // 5..7 were dropped
}

// TestClose checks that Close returns promptly with streams up and a
// snapshot in flight whose receiver does not read, reports that snapshot
// failed, stops every goroutine, and that the transport is inert after.
func TestClose(t *testing.T) {
	checkLeaks(t)
	tn := newTestNet()
	ids := []uint64{1, 2}
	const size = 256 << 20 // far more than socket buffers hold
	m1 := tn.start(t, 1, ids, func(c *Config) {
		c.OpenSnapshot = func(uint64) (io.ReadCloser, int64, error) {
			return io.NopCloser(io.LimitReader(zeros{}, size)), size, nil
		}
	})
	m2 := tn.start(t, 2, ids, nil)
	reading, release := make(chan struct{}), make(chan struct{})
	handlerErr := make(chan error, 1)
	m2.h.snap = func(m raftpb.Message, r io.Reader, size int64) error {
		_, err := io.CopyN(io.Discard, r, 1<<20)
		close(reading)
		<-release // stops reading: the sender's writes block
		if err == nil {
			_, err = io.Copy(io.Discard, r)
		}
		handlerErr <- err
		return err
	}
	m1.tr.Send([]raftpb.Message{raftMsg(1, 2, 1)})
	m2.tr.Send([]raftpb.Message{raftMsg(2, 1, 1)})
	expectSeq(t, m2.h, 1, 1)
	expectSeq(t, m1.h, 2, 1)
	m1.tr.Send([]raftpb.Message{snapMsg(1, 2, 5)})
	select {
	case <-reading:
	case <-time.After(waitTimeout):
		t.Fatal("snapshot not received")
	}

	start := time.Now()
	if err := m1.tr.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Close took %v with a blocked snapshot stream", took)
	}
	if got := m1.rep.snapshotReports(); len(got) != 1 || got[0] != (snapReport{2, false}) {
		t.Errorf("snapshot reports after Close = %v, want one failure for member 2", got)
	}
	close(release)
	select {
	case err := <-handlerErr:
		if err == nil {
			t.Error("the handler read a whole snapshot whose sender closed")
		}
	case <-time.After(waitTimeout):
		t.Fatal("the snapshot handler's reads did not fail after the sender closed")
	}
	start = time.Now()
	if err := m2.tr.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Close took %v", took)
	}

	// Inert after Close.
	if err := m1.tr.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := m1.tr.Start(); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Close = %v, want ErrClosed", err)
	}
	m1.tr.Send([]raftpb.Message{raftMsg(1, 2, 2), snapMsg(1, 2, 6)})
	if m1.tr.SendApp(2, appMsg(3)) {
		t.Error("SendApp after Close returned true")
	}
	if m1.tr.Connected(2) {
		t.Error("Connected after Close")
	}
	if got := m1.rep.snapshotReports(); len(got) != 1 {
		t.Errorf("a MsgSnap after Close was reported: %v", got)
	}
}

// TestUnknownPeer checks that messages to members not configured are
// dropped without reports.
func TestUnknownPeer(t *testing.T) {
	checkLeaks(t)
	tn := newTestNet()
	m1 := tn.start(t, 1, []uint64{1, 2}, nil)
	if m1.tr.SendApp(9, appMsg(1)) {
		t.Error("SendApp to an unknown member returned true")
	}
	m1.tr.Send([]raftpb.Message{raftMsg(1, 9, 1), raftMsg(1, 1, 1)})
	if m1.tr.Connected(9) {
		t.Error("Connected to an unknown member")
	}
	if got := m1.rep.unreachableCount(9); got != 0 {
		t.Errorf("unknown member reported unreachable %d times", got)
	}
}

func TestNewValidates(t *testing.T) {
	h := newRecorder()
	tests := []struct {
		name string
		cfg  Config
	}{
		{"zero id", Config{Handler: h}},
		{"no handler", Config{ID: 1}},
		{"peer id 0", Config{ID: 1, Handler: h, Peers: map[uint64]string{0: "a:1"}}},
		{"self as peer", Config{ID: 1, Handler: h, Peers: map[uint64]string{1: "a:1"}}},
		{"peer without address", Config{ID: 1, Handler: h, Peers: map[uint64]string{2: ""}}},
		{"negative queue", Config{ID: 1, Handler: h, QueueSize: -1}},
		{"negative dial timeout", Config{ID: 1, Handler: h, DialTimeout: -time.Second}},
		{"negative raft message bound", Config{ID: 1, Handler: h, MaxRaftMessageBytes: -1}},
		{"long cluster id", Config{ID: 1, Handler: h, ClusterID: string(make([]byte, maxClusterIDLen+1))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.cfg); err == nil {
				t.Errorf("New accepted %+v", tt.cfg)
			}
		})
	}
	tr, err := New(Config{ID: 1, Handler: h, Peers: map[uint64]string{2: "127.0.0.1:1"}})
	if err != nil {
		t.Fatalf("New refused a valid config: %v", err)
	}
	if tr.Addr() != nil {
		t.Error("Addr before Start is not nil")
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	big, err := New(Config{ID: 1, Handler: h, MaxRaftMessageBytes: 1 << 30})
	if err != nil {
		t.Fatalf("New refused a raft message bound over the wire's limit: %v", err)
	}
	if got := big.cfg.MaxRaftMessageBytes; got != maxFrameLen {
		t.Errorf("raft message bound %d, want the wire's limit %d", got, maxFrameLen)
	}
	if err := big.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRaftMessageBound checks that a raft message up to
// Config.MaxRaftMessageBytes passes, and that one over it is dropped by its
// sender, which reports the peer unreachable and keeps the stream.
func TestRaftMessageBound(t *testing.T) {
	checkLeaks(t)
	tn := newTestNet()
	ids := []uint64{1, 2}
	const bound = 64 << 10
	small := func(c *Config) { c.MaxRaftMessageBytes = bound }
	m1 := tn.start(t, 1, ids, small)
	m2 := tn.start(t, 2, ids, small)
	sized := func(seq uint64, size int) raftpb.Message {
		m := raftMsg(1, 2, seq)
		for n := size - m.Size(); m.Size() < size; n++ {
			m.Entries[0].Data = make([]byte, n)
		}
		if m.Size() != size {
			t.Fatalf("made a message of %d bytes, want %d", m.Size(), size)
		}
		return m
	}
	m1.tr.Send([]raftpb.Message{raftMsg(1, 2, 1)})
	expectSeq(t, m2.h, 1, 1)
	before := m1.rep.unreachableCount(2)
	m1.tr.Send([]raftpb.Message{sized(2, bound), sized(3, bound+1), raftMsg(1, 2, 4)})
	expectSeq(t, m2.h, 1, 2, 4)
	if got := m1.rep.unreachableCount(2); got <= before {
		t.Error("dropping a message over the bound did not report the peer unreachable")
	}
	if !m1.tr.Connected(2) {
		t.Error("the stream went down")
	}
	m2.h.expectNone(t)
}

// TestPeerClosedReported checks that a member is told when a peer's
// streams end (as a stopped or dead peer's do), and not before.
func TestPeerClosedReported(t *testing.T) {
	checkLeaks(t)
	tn := newTestNet()
	ids := []uint64{1, 2}
	closed := make(chan uint64, 4)
	m1 := tn.start(t, 1, ids, func(c *Config) { c.PeerClosed = func(id uint64) { closed <- id } })
	m2 := tn.start(t, 2, ids, nil)
	m2.tr.Send([]raftpb.Message{raftMsg(2, 1, 1)})
	expectSeq(t, m1.h, 2, 1)
	select {
	case id := <-closed:
		t.Fatalf("PeerClosed(%d) while the stream is up", id)
	default:
	}
	tn.stop(t, m2)
	select {
	case id := <-closed:
		if id != 2 {
			t.Fatalf("PeerClosed(%d), want 2", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("PeerClosed not called after the peer stopped")
	}
}
