package transport

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// These tests speak the wire format by hand to a member (id 1 of {1, 2}).

func validHello() hello {
	return hello{version: version, kind: kindMessages, from: 2, to: 1, cluster: testCluster}
}

func appFrame(seq uint64) []byte {
	p := appMsg(seq)
	return append(appendFrameHeader(nil, frameApp, len(p)), p...)
}

func raftFrame(t *testing.T, m raftpb.Message) []byte {
	t.Helper()
	p, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return append(appendFrameHeader(nil, frameRaft, len(p)), p...)
}

// rawDial connects to m and writes b.
func rawDial(t *testing.T, m *member, b []byte) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", m.tr.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.SetDeadline(time.Now().Add(waitTimeout)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	return c
}

// expectClosed waits for the member to close c: a read ends with EOF or a
// reset, not a timeout, and yields nothing but keepalive frames.
func expectClosed(t *testing.T, c net.Conn) {
	t.Helper()
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the member did not close the connection")
	}
	keepAlive := appendFrameHeader(nil, frameKeepAlive, 0)
	for bytes.HasPrefix(b, keepAlive) {
		b = b[len(keepAlive):]
	}
	if len(b) != 0 {
		t.Fatalf("the member sent %x before closing", b)
	}
}

// readAnswer reads the member's one-byte answer to a hello.
func readAnswer(t *testing.T, c net.Conn) helloCode {
	t.Helper()
	var b [1]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		t.Fatalf("reading the answer to hello: %v", err)
	}
	return helloCode(b[0])
}

func TestHelloRefused(t *testing.T) {
	checkLeaks(t)
	tn := newTestNet()
	m := tn.start(t, 1, []uint64{1, 2}, nil)
	with := func(f func(h *hello)) []byte {
		h := validHello()
		f(&h)
		return appendHello(nil, h)
	}
	tests := []struct {
		name   string
		hello  []byte
		answer helloCode
		silent bool // closed without an answer
	}{
		{name: "wrong cluster id", hello: with(func(h *hello) { h.cluster = "other" }), answer: helloWrongCluster},
		{name: "empty cluster id", hello: with(func(h *hello) { h.cluster = "" }), answer: helloWrongCluster},
		{name: "wrong to-id", hello: with(func(h *hello) { h.to = 3 }), answer: helloWrongMember},
		{name: "unknown from-id", hello: with(func(h *hello) { h.from = 7 }), answer: helloUnknownPeer},
		{name: "from itself", hello: with(func(h *hello) { h.from = 1 }), answer: helloUnknownPeer},
		{name: "unknown kind", hello: with(func(h *hello) { h.kind = 9 }), answer: helloBadKind},
		{name: "version 2", hello: with(func(h *hello) { h.version = 2 }), answer: helloBadVersion},
		{name: "version 0", hello: with(func(h *hello) { h.version = 0 }), answer: helloBadVersion},
		{name: "bad magic", hello: []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), silent: true},
		{name: "cluster id too long", silent: true, hello: func() []byte {
			b := with(func(h *hello) { h.cluster = "" })
			return binary.BigEndian.AppendUint16(b[:len(b)-2], maxClusterIDLen+1)
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// An app frame follows: it must not be delivered.
			c := rawDial(t, m, append(tt.hello, appFrame(1)...))
			if !tt.silent {
				if got := readAnswer(t, c); got != tt.answer {
					t.Fatalf("answer %d (%v), want %d (%v)", got, got, tt.answer, tt.answer)
				}
			}
			expectClosed(t, c)
			m.h.expectNone(t)
		})
	}
	t.Run("truncated", func(t *testing.T) {
		h := appendHello(nil, validHello())
		c := rawDial(t, m, h[:len(h)-3])
		if err := c.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
		expectClosed(t, c)
		m.h.expectNone(t)
	})
	t.Run("accepted", func(t *testing.T) {
		// The same connection with a valid hello does deliver, so the
		// refusals above are not vacuous.
		c := rawDial(t, m, append(appendHello(nil, validHello()), appFrame(1)...))
		if got := readAnswer(t, c); got != helloOK {
			t.Fatalf("answer %v to a valid hello", got)
		}
		expectSeq(t, m.h, 2, 1)
	})
}

func TestBadFrames(t *testing.T) {
	checkLeaks(t)
	tn := newTestNet()
	m := tn.start(t, 1, []uint64{1, 2}, nil)
	header := func(typ frameType, n uint32) []byte {
		return binary.BigEndian.AppendUint32([]byte{byte(typ)}, n)
	}
	msg := func(f func(*raftpb.Message)) []byte {
		r := raftMsg(2, 1, 9)
		f(&r)
		return raftFrame(t, r)
	}
	tests := []struct {
		name   string
		frames []byte
	}{
		{"unknown frame type", append(header(0, 1), 0)},
		{"frame type 200", append(header(200, 1), 0)},
		{"oversized frame", header(frameApp, maxFrameLen+1)},
		{"oversized raft frame", header(frameRaft, 1<<32-1)},
		{"keepalive with payload", append(header(frameKeepAlive, 1), 0)},
		{"garbage raft payload", append(header(frameRaft, 4), 0xff, 0xff, 0xff, 0xff)},
		{"raft message from another member", msg(func(m *raftpb.Message) { m.From = 3 })},
		{"raft message to another member", msg(func(m *raftpb.Message) { m.To = 3 })},
		{"MsgSnap on a message stream", raftFrame(t, snapMsg(2, 1, 5))},
		{"raft frame over the bound", header(frameRaft, DefaultMaxRaftMessageBytes+1)},
		// Refused before raftpb's decoder recurses into every level.
		{"deeply nested responses", func() []byte {
			p := nestedResponses(raftMsg(2, 1, 9), 3<<20)
			return append(header(frameRaft, uint32(len(p))), p...)
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A good frame, the bad one, then another good one that must not
			// be delivered.
			b := append(appendHello(nil, validHello()), appFrame(1)...)
			b = append(b, tt.frames...)
			b = append(b, appFrame(2)...)
			c := rawDial(t, m, b)
			if got := readAnswer(t, c); got != helloOK {
				t.Fatalf("answer %v", got)
			}
			expectSeq(t, m.h, 2, 1)
			expectClosed(t, c)
			m.h.expectNone(t)
		})
	}
	t.Run("truncated frame", func(t *testing.T) {
		b := append(appendHello(nil, validHello()), appFrame(1)...)
		b = append(b, header(frameApp, 10)...)
		c := rawDial(t, m, append(b, 1, 2, 3))
		if err := c.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
		if got := readAnswer(t, c); got != helloOK {
			t.Fatalf("answer %v", got)
		}
		expectSeq(t, m.h, 2, 1)
		expectClosed(t, c)
		m.h.expectNone(t)
	})
	t.Run("many empty entries over the bound", func(t *testing.T) {
		c := rawDial(t, m, append(appendHello(nil, validHello()), appFrame(1)...))
		if got := readAnswer(t, c); got != helloOK {
			t.Fatalf("answer %v", got)
		}
		expectSeq(t, m.h, 2, 1)
		p := emptyEntries(raftMsg(2, 1, 9), DefaultMaxRaftMessageBytes/2)
		// The member closes the stream once it has read the header: the
		// write may fail.
		_, _ = c.Write(append(header(frameRaft, uint32(len(p))), p...))
		expectClosed(t, c)
		m.h.expectNone(t)
	})
	t.Run("good frames", func(t *testing.T) {
		b := append(appendHello(nil, validHello()), raftFrame(t, raftMsg(2, 1, 1))...)
		b = append(b, header(frameKeepAlive, 0)...)
		b = append(b, appFrame(2)...)
		c := rawDial(t, m, b)
		if got := readAnswer(t, c); got != helloOK {
			t.Fatalf("answer %v", got)
		}
		expectSeq(t, m.h, 2, 1, 2)
	})
}

// TestNewerStreamReplacesOlder checks that a second message stream from a
// peer closes the first, and that the second delivers.
func TestNewerStreamReplacesOlder(t *testing.T) {
	checkLeaks(t)
	tn := newTestNet()
	m := tn.start(t, 1, []uint64{1, 2}, nil)
	first := rawDial(t, m, append(appendHello(nil, validHello()), appFrame(1)...))
	if got := readAnswer(t, first); got != helloOK {
		t.Fatalf("answer %v", got)
	}
	expectSeq(t, m.h, 2, 1)
	second := rawDial(t, m, append(appendHello(nil, validHello()), appFrame(2)...))
	if got := readAnswer(t, second); got != helloOK {
		t.Fatalf("answer %v", got)
	}
	expectSeq(t, m.h, 2, 2)
	expectClosed(t, first)
}

// TestReplacedStreamDeliversNothingMore checks that a message stream that a
// newer one replaced delivers nothing more, not even the frames it had
// already read: those may be lost, never delivered after or alongside the
// newer stream's.
func TestReplacedStreamDeliversNothingMore(t *testing.T) {
	checkLeaks(t)
	tn := newTestNet()
	drained := make(chan struct{})
	t.Cleanup(func() { close(drained) })     // after the transport's Close
	h := &recorder{events: make(chan event)} // a delivery waits for the test
	m := tn.start(t, 1, []uint64{1, 2}, func(c *Config) { c.Handler = h })
	t.Cleanup(func() { // before Close, which waits for the deliveries
		go func() {
			for {
				select {
				case <-h.events:
				case <-drained:
					return
				}
			}
		}()
	})
	b := appendHello(nil, validHello())
	for seq := uint64(1); seq <= 100; seq++ {
		b = append(b, appFrame(seq)...)
	}
	first := rawDial(t, m, b)
	if got := readAnswer(t, first); got != helloOK {
		t.Fatalf("answer %v", got)
	}
	expectSeq(t, h, 2, 1)
	// The first stream is delivering 2, with more read or on their way, when
	// the second one replaces it.
	second := rawDial(t, m, append(appendHello(nil, validHello()), appFrame(1000)...))
	if got := readAnswer(t, second); got != helloOK {
		t.Fatalf("answer %v", got)
	}
	var got []uint64
	for len(got) == 0 || got[len(got)-1] < 1000 {
		got = append(got, h.next(t).seq)
	}
	// A few round trips on the second stream, for the first to show any
	// frame it would still deliver.
	for seq := uint64(1001); seq <= 1010; seq++ {
		if _, err := second.Write(appFrame(seq)); err != nil {
			t.Fatal(err)
		}
		for got[len(got)-1] != seq {
			got = append(got, h.next(t).seq)
		}
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("deliveries after the first: %v; the first stream's must all come before the second's", got)
		}
	}
	expectClosed(t, first)
	h.expectNone(t)
}

// TestBadSnapshotStream checks that a snapshot stream whose header is bad
// is closed without calling the handler.
func TestBadSnapshotStream(t *testing.T) {
	checkLeaks(t)
	tn := newTestNet()
	m := tn.start(t, 1, []uint64{1, 2}, nil)
	m.h.snap = func(raftpb.Message, io.Reader, int64) error {
		t.Error("the snapshot handler was called")
		return nil
	}
	marshal := func(r raftpb.Message) []byte {
		p, err := r.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// snap is a MsgSnap as a sender puts it in the header: without its data.
	snap := func(from uint64) raftpb.Message {
		r := snapMsg(from, 1, 1)
		r.Snapshot.Data = nil
		return r
	}
	tests := []struct {
		name string
		body []byte
	}{
		{"not a MsgSnap", appendSnapshotHeader(nil, marshal(raftMsg(2, 1, 1)), 0)},
		{"from another member", appendSnapshotHeader(nil, marshal(snap(3)), 0)},
		{"negative size", appendSnapshotHeader(nil, marshal(snap(2)), -1)},
		{"oversized message", binary.BigEndian.AppendUint32(nil, maxFrameLen+1)},
		{"message over the bound", binary.BigEndian.AppendUint32(nil, DefaultMaxRaftMessageBytes+1)},
		{"garbage message", append(binary.BigEndian.AppendUint32(nil, 3), 0xff, 0xff, 0xff)},
		{"snapshot data in the message", appendSnapshotHeader(nil, marshal(snapMsg(2, 1, 1)), 0)},
		{"nested responses", appendSnapshotHeader(nil, nestedResponses(snap(2), 1<<20), 0)},
	}
	h := validHello()
	h.kind = kindSnapshot
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := rawDial(t, m, append(appendHello(nil, h), tt.body...))
			if got := readAnswer(t, c); got != helloOK {
				t.Fatalf("answer %v", got)
			}
			expectClosed(t, c)
		})
	}
}

// handPlayedPeer returns a listener standing for member 2, which the test
// plays by hand, and a test network that dials it there. The listener is
// closed when the test ends.
func handPlayedPeer(t *testing.T) (net.Listener, *testNet) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	tn := newTestNet()
	tn.addrs[memberAddr(2)] = ln.Addr().String()
	return ln, tn
}

// TestDialerWatchesStream plays the acceptor by hand: it checks the hello a
// member sends, and that the member drops a message stream on which the
// acceptor sends anything but keepalives, then dials again.
func TestDialerWatchesStream(t *testing.T) {
	checkLeaks(t)
	ln, tn := handPlayedPeer(t)
	m := tn.start(t, 1, []uint64{1, 2}, nil)
	accept := func() net.Conn {
		t.Helper()
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		_ = c.SetDeadline(time.Now().Add(waitTimeout))
		h, err := readHello(c)
		want := hello{version: version, kind: kindMessages, from: 1, to: 2, cluster: testCluster}
		if err != nil || h != want {
			t.Fatalf("hello %+v, %v; want %+v", h, err, want)
		}
		if _, err := c.Write([]byte{byte(helloOK)}); err != nil {
			t.Fatal(err)
		}
		return c
	}
	first := accept()
	waitUntil(t, "Connected(2)", func() bool { return m.tr.Connected(2) })
	ka := appendFrameHeader(nil, frameKeepAlive, 0)
	if _, err := first.Write(append(ka, appFrame(1)...)); err != nil {
		t.Fatal(err)
	}
	second := accept() // the member gave up the first stream and dialed again
	m.tr.Send([]raftpb.Message{raftMsg(1, 2, 5)})
	fr := frameReader{r: second, maxRaft: DefaultMaxRaftMessageBytes}
	for {
		typ, p, err := fr.next()
		if err != nil {
			t.Fatal(err)
		}
		if typ == frameKeepAlive {
			continue
		}
		got, err := decodeRaft(p, 1, 2)
		if err != nil || got.Index != 5 {
			t.Fatalf("got %+v, %v on the new stream; want the message sent", got, err)
		}
		break
	}
	expectClosed(t, first)
}
