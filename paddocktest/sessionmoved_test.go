package paddocktest_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
	"github.com/paddockhq/paddock/paddocktest"
	"github.com/paddockhq/paddock/zk"
)

// steeredDialer dials whichever member address it is told to, and can drop
// the connection it opened last: the client's session moves when the test
// says so, to the member the test chooses.
type steeredDialer struct {
	mu     sync.Mutex
	target string
	last   net.Conn
}

func (d *steeredDialer) dial(ctx context.Context, network, _ string) (net.Conn, error) {
	d.mu.Lock()
	target := d.target
	d.mu.Unlock()
	c, err := (&net.Dialer{}).DialContext(ctx, network, target)
	if err == nil {
		d.mu.Lock()
		d.last = c
		d.mu.Unlock()
	}
	return c, err
}

// moveTo makes the next dial go to addr and drops the current connection.
func (d *steeredDialer) moveTo(addr string) {
	d.mu.Lock()
	d.target = addr
	last := d.last
	d.mu.Unlock()
	if last != nil {
		last.Close()
	}
}

// TestWriteFromOldMemberAfterSessionMoved is the ordering case ZooKeeper's
// session owner check exists for: a client's write W1 to member A is on its
// way to the leader (the link is slow), the client gives up on A, moves its
// session to member B and writes W2 there; W1 then reaches the leader in the
// same term. W1 must not apply after W2: the session moved, so W1 is
// refused (SESSIONMOVED) and the node keeps W2's data.
func TestWriteFromOldMemberAfterSessionMoved(t *testing.T) {
	ens := paddocktest.Start(t, paddocktest.Options{ExtraConfig: map[string]string{"4lw.commands.whitelist": "mntr"}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	leader, err := ens.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var a, b *paddocktest.Member
	for _, m := range ens.Members() {
		if m != leader {
			if a == nil {
				a = m
			} else {
				b = m
			}
		}
	}
	setup, err := zk.Connect(ctx, leader.ClientAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer setup.Close()
	if _, err := setup.Create(ctx, "/x", []byte("0"), zk.WorldACL(zk.PermAll), zk.ModePersistent); err != nil {
		t.Fatal(err)
	}

	d := &steeredDialer{target: a.ClientAddr()}
	conn, err := zk.Connect(ctx, a.ClientAddr(), zk.WithDialer(d.dial), zk.WithSessionTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A second session on A, opened now: later, its write through A
	// follows W1 on A's stream to the leader.
	marker, err := zk.Connect(ctx, a.ClientAddr(), zk.WithSessionTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer marker.Close()

	ens.PauseLink(a.ID(), leader.ID())
	w1 := make(chan error, 1)
	conn.SetAsync(ctx, "/x", []byte("1"), -1, func(_ *zk.Stat, err error) { w1 <- err })
	// Wait until A has the write in flight towards the leader.
	deadline := time.Now().Add(10 * time.Second)
	for outstanding(t, a.ClientAddr()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("member A never had the write outstanding")
		}
		time.Sleep(5 * time.Millisecond)
	}
	d.moveTo(b.ClientAddr())
	if err := <-w1; !errors.Is(err, zk.ErrConnectionLoss) {
		t.Fatalf("W1 through A: %v, want a connection loss", err)
	}
	st, err := conn.Set(ctx, "/x", []byte("2"), -1)
	if err != nil {
		t.Fatalf("W2 through B: %v", err)
	}
	if st.Version != 1 {
		t.Fatalf("W2 made version %d, want 1", st.Version)
	}

	ens.ResumeLink(a.ID(), leader.ID())
	// Once the marker's write through A is applied, so is (or was
	// refused) W1, which A sent the leader before it.
	if _, err := marker.Create(ctx, "/marker", nil, zk.WorldACL(zk.PermAll), zk.ModePersistent); err != nil {
		t.Fatal(err)
	}
	data, st, err := setup.Get(ctx, "/x")
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "2" || st.Version != 1 {
		t.Fatalf("/x = %q version %d after W1 arrived late: W1 applied after W2", data, st.Version)
	}
}

// outstanding returns the member's zk_outstanding_requests (mntr).
func outstanding(t *testing.T, addr string) int {
	t.Helper()
	out, err := zktest.FourLetterWord(addr, "mntr")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "zk_outstanding_requests\t"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	t.Fatalf("no zk_outstanding_requests in mntr:\n%s", out)
	return 0
}
