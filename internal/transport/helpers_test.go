package transport

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// waitTimeout bounds every wait for an event; generous for -race on a busy
// two-core machine.
const waitTimeout = 10 * time.Second

const testCluster = "test-cluster"

// checkLeaks fails the test if goroutines started during it outlive it.
// Call it first, so that its cleanup runs after every other.
func checkLeaks(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				n := runtime.Stack(buf, true)
				t.Errorf("%d goroutines before the test, %d after:\n%s", before, runtime.NumGoroutine(), buf[:n])
				return
			}
			time.Sleep(10 * time.Millisecond) // no event to wait on
		}
	})
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// event is one delivery to a recorder: a raft message's Index or an app
// message's sequence number, in arrival order.
type event struct {
	from uint64
	app  bool
	seq  uint64
	msg  raftpb.Message
}

// recorder is a Handler that records deliveries on a channel.
type recorder struct {
	events chan event
	snap   func(m raftpb.Message, r io.Reader, size int64) error
}

func newRecorder() *recorder { return &recorder{events: make(chan event, 1<<14)} }

func (h *recorder) Raft(m raftpb.Message) { h.events <- event{from: m.From, seq: m.Index, msg: m} }

func (h *recorder) App(from uint64, data []byte) {
	var seq uint64
	if len(data) >= 8 {
		seq = binary.BigEndian.Uint64(data)
	}
	h.events <- event{from: from, app: true, seq: seq}
}

func (h *recorder) Snapshot(m raftpb.Message, r io.Reader, size int64) error {
	if h.snap == nil {
		return errors.New("no snapshot handler in this test")
	}
	return h.snap(m, r, size)
}

// next waits for the next delivery.
func (h *recorder) next(t *testing.T) event {
	t.Helper()
	select {
	case e := <-h.events:
		return e
	case <-time.After(waitTimeout):
		t.Fatal("timed out waiting for a delivery")
		return event{}
	}
}

// expectNone fails if anything was delivered.
func (h *recorder) expectNone(t *testing.T) {
	t.Helper()
	select {
	case e := <-h.events:
		t.Fatalf("unexpected delivery %+v", e)
	default:
	}
}

type snapReport struct {
	id uint64
	ok bool
}

// reporter is a Reporter that counts reports.
type reporter struct {
	mu          sync.Mutex
	unreachable map[uint64]int
	snapshots   []snapReport
	changed     chan struct{} // signalled on every report
}

func newReporter() *reporter {
	return &reporter{unreachable: map[uint64]int{}, changed: make(chan struct{}, 1)}
}

func (r *reporter) ReportUnreachable(id uint64) {
	r.mu.Lock()
	r.unreachable[id]++
	r.mu.Unlock()
	r.signal()
}

func (r *reporter) ReportSnapshot(id uint64, ok bool) {
	r.mu.Lock()
	r.snapshots = append(r.snapshots, snapReport{id, ok})
	r.mu.Unlock()
	r.signal()
}

func (r *reporter) signal() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

func (r *reporter) unreachableCount(id uint64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.unreachable[id]
}

func (r *reporter) snapshotReports() []snapReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.snapshots)
}

// waitFor waits until cond holds, re-checking it on every report.
func (r *reporter) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	timeout := time.After(waitTimeout)
	for !cond() {
		select {
		case <-r.changed:
		case <-timeout:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// waitUntil polls cond (for state with no event to wait on) until it holds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// testNet resolves members' names ("member-<id>") to the addresses their
// transports listen on, so that members can be started in any order, and
// stopped and restarted on new ports. A member not started is down: dials
// to it fail.
type testNet struct {
	mu    sync.Mutex
	addrs map[string]string
}

func newTestNet() *testNet { return &testNet{addrs: map[string]string{}} }

func memberAddr(id uint64) string { return fmt.Sprintf("member-%d", id) }

var errDown = errors.New("test: member is down")

func (n *testNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	n.mu.Lock()
	real, ok := n.addrs[addr]
	n.mu.Unlock()
	if !ok {
		return nil, errDown
	}
	var d net.Dialer
	return d.DialContext(ctx, network, real)
}

func (n *testNet) resolve(id uint64) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.addrs[memberAddr(id)]
}

// member is one started transport with its handler and reporter.
type member struct {
	id  uint64
	tr  *Transport
	h   *recorder
	rep *reporter
}

// start starts member id of a group of ids; mod may adjust its config.
func (n *testNet) start(t *testing.T, id uint64, ids []uint64, mod func(*Config)) *member {
	t.Helper()
	m := &member{id: id, h: newRecorder(), rep: newReporter()}
	cfg := Config{
		ID:        id,
		ClusterID: testCluster,
		Listen:    "127.0.0.1:0",
		Peers:     map[uint64]string{},
		Handler:   m.h,
		Reporter:  m.rep,
		Dial:      n.dial,
		Logger:    testLogger(t).With("member", id),
	}
	for _, p := range ids {
		if p != id {
			cfg.Peers[p] = memberAddr(p)
		}
	}
	if mod != nil {
		mod(&cfg)
	}
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Start(); err != nil {
		t.Fatal(err)
	}
	m.tr = tr
	t.Cleanup(func() { _ = tr.Close() })
	n.mu.Lock()
	n.addrs[memberAddr(id)] = tr.Addr().String()
	n.mu.Unlock()
	return m
}

// stop takes a member down: it cannot be dialed, and its transport closes.
func (n *testNet) stop(t *testing.T, m *member) {
	t.Helper()
	n.mu.Lock()
	delete(n.addrs, memberAddr(m.id))
	n.mu.Unlock()
	if err := m.tr.Close(); err != nil {
		t.Fatal(err)
	}
}

// raftMsg is a MsgApp from one member to another whose Index is seq.
func raftMsg(from, to, seq uint64) raftpb.Message {
	return raftpb.Message{
		Type: raftpb.MsgApp, From: from, To: to, Term: 1, Index: seq,
		Entries: []raftpb.Entry{{Term: 1, Index: seq + 1, Data: fmt.Appendf(nil, "entry %d", seq)}},
	}
}

// appMsg is an application message carrying seq.
func appMsg(seq uint64) []byte {
	return binary.BigEndian.AppendUint64(nil, seq)
}

// expectSeq waits for deliveries from one sender with sequence numbers
// want, in order.
func expectSeq(t *testing.T, h *recorder, from uint64, want ...uint64) {
	t.Helper()
	for _, seq := range want {
		e := h.next(t)
		if e.from != from || e.seq != seq {
			t.Fatalf("got delivery from %d with seq %d (app %v), want from %d seq %d", e.from, e.seq, e.app, from, seq)
		}
	}
}
