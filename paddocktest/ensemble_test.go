package paddocktest_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/paddocktest"
	"github.com/paddockhq/paddock/zk"
)

// testCtx bounds a test's waits.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// connect opens a session on the given connect string (one member's
// ClientAddr pins the client to that member), closed by t.Cleanup before
// the ensemble is.
func connect(t *testing.T, ctx context.Context, servers string, opts ...zk.Option) *zk.Conn {
	t.Helper()
	c, err := zk.Connect(ctx, servers, opts...)
	if err != nil {
		t.Fatalf("connecting to %s: %v", servers, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitFor polls cond until it holds or d passes: the members announce no
// change of state, so there is nothing to wait on.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// modes returns every member's Mode, by id.
func modes(ens *paddocktest.Ensemble) []string {
	var ms []string
	for _, m := range ens.Members() {
		ms = append(ms, m.Mode())
	}
	return ms
}

// followers returns the members that are not m.
func others(ens *paddocktest.Ensemble, m *paddocktest.Member) []*paddocktest.Member {
	var os []*paddocktest.Member
	for _, o := range ens.Members() {
		if o != m {
			os = append(os, o)
		}
	}
	return os
}

// readAfterSync reads path through c after a sync, so that c's member has
// applied every write committed before.
func readAfterSync(t *testing.T, ctx context.Context, c *zk.Conn, path string) string {
	t.Helper()
	var data []byte
	err := zk.Retry(ctx, func(ctx context.Context) error {
		if _, err := c.Sync(ctx, path); err != nil {
			return err
		}
		var err error
		data, _, err = c.Get(ctx, path)
		return err
	})
	if err != nil {
		t.Fatalf("reading %s on %s: %v", path, c.Server(), err)
	}
	return string(data)
}

func create(t *testing.T, ctx context.Context, c *zk.Conn, path, data string) {
	t.Helper()
	err := zk.Retry(ctx, func(ctx context.Context) error {
		_, err := c.Create(ctx, path, []byte(data), zk.OpenACL, zk.ModePersistent)
		return err
	})
	if err != nil {
		t.Fatalf("creating %s through %s: %v", path, c.Server(), err)
	}
}

// election bounds how long a change of leader or of serving takes with
// the default tick (election timeout 100-200 ms), with room for -race on
// a loaded machine.
const election = 10 * time.Second

// catchUp bounds how long a restarted or healed member takes to serve
// again. It is above the 10 s a member waits for an answer to its
// catch-up read index before it asks again: that answer can be lost when
// the transport drops a stream for carrying a message raft forwarded
// (internal/transport's decodeRaft insists on From being the dialer).
const catchUp = 20 * time.Second

func TestStartOneLeaderReplicates(t *testing.T) {
	ens := paddocktest.Start(t, paddocktest.Options{})
	ctx := testCtx(t)

	leader, err := ens.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ms := modes(ens)
	if len(ms) != 3 || ms[leader.ID()-1] != "leader" {
		t.Fatalf("modes %q, leader %d", ms, leader.ID())
	}
	slices.Sort(ms)
	if want := []string{"follower", "follower", "leader"}; !slices.Equal(ms, want) {
		t.Fatalf("modes %q, want %q", ms, want)
	}
	var addrs []string
	for _, m := range ens.Members() {
		if !m.Running() || m.Observer() {
			t.Fatalf("member %d: running %v, observer %v", m.ID(), m.Running(), m.Observer())
		}
		addrs = append(addrs, m.ClientAddr())
	}
	if got := ens.ConnectString(); got != strings.Join(addrs, ",") {
		t.Fatalf("ConnectString %q, client addresses %q", got, addrs)
	}

	// A write through one follower is read through the other.
	fs := others(ens, leader)
	w := connect(t, ctx, fs[0].ClientAddr())
	r := connect(t, ctx, fs[1].ClientAddr())
	create(t, ctx, w, "/replicated", "v1")
	if got := readAfterSync(t, ctx, r, "/replicated"); got != "v1" {
		t.Fatalf("member %d read %q, want v1", fs[1].ID(), got)
	}
}

func TestKillLeaderRestart(t *testing.T) {
	ens := paddocktest.Start(t, paddocktest.Options{})
	ctx := testCtx(t)
	old, err := ens.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, ctx, ens.ConnectString())
	create(t, ctx, c, "/before", "1")

	if err := old.Kill(); err != nil {
		t.Fatal(err)
	}
	if old.Running() || old.Mode() != "" {
		t.Fatalf("killed member: running %v, mode %q", old.Running(), old.Mode())
	}
	if err := old.Kill(); err != nil {
		t.Fatalf("killing a killed member: %v", err)
	}
	leader, err := ens.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if leader == old {
		t.Fatalf("member %d still leads after it was killed", old.ID())
	}
	create(t, ctx, c, "/after", "2")

	if err := old.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := old.Restart(); !errors.Is(err, paddocktest.ErrRunning) {
		t.Fatalf("restarting a running member: %v, want ErrRunning", err)
	}
	waitFor(t, catchUp, "the restarted leader is not a follower", func() bool { return old.Mode() == "follower" })
	oc := connect(t, ctx, old.ClientAddr())
	if got := readAfterSync(t, ctx, oc, "/after"); got != "2" {
		t.Fatalf("restarted member read %q, want 2", got)
	}
	if err := ens.WaitServing(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestStopRestartKeepsAddress(t *testing.T) {
	ens := paddocktest.Start(t, paddocktest.Options{})
	ctx := testCtx(t)
	m := ens.Member(2)
	addr := m.ClientAddr()
	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	// The other two serve on; the stopped member is not waited for.
	if err := ens.WaitServing(ctx); err != nil {
		t.Fatal(err)
	}
	c := connect(t, ctx, ens.Member(1).ClientAddr())
	create(t, ctx, c, "/while-stopped", "x")
	if err := m.Restart(); err != nil {
		t.Fatal(err)
	}
	if m.ClientAddr() != addr {
		t.Fatalf("client address moved from %s to %s", addr, m.ClientAddr())
	}
	mc := connect(t, ctx, addr)
	if got := readAfterSync(t, ctx, mc, "/while-stopped"); got != "x" {
		t.Fatalf("restarted member read %q", got)
	}
}

func TestIsolateFollower(t *testing.T) {
	ens := paddocktest.Start(t, paddocktest.Options{})
	ctx := testCtx(t)
	leader, err := ens.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fs := others(ens, leader)
	iso, other := fs[0], fs[1]
	rest := connect(t, ctx, leader.ClientAddr()+","+other.ClientAddr())

	ens.Isolate(iso.ID())
	waitFor(t, election, "the isolated member still serves", func() bool { return iso.Mode() == "" })
	create(t, ctx, rest, "/during-isolation", "x")
	if got, err := ens.Leader(ctx); err != nil || got != leader {
		t.Fatalf("leader %v, %v; want member %d still", got, err, leader.ID())
	}
	if m := other.Mode(); m != "follower" {
		t.Fatalf("the other follower's mode is %q", m)
	}
	if !iso.Running() {
		t.Fatal("an isolated member is not running")
	}

	ens.HealAll()
	waitFor(t, catchUp, "the healed member does not serve", func() bool { return iso.Mode() == "follower" })
	ic := connect(t, ctx, iso.ClientAddr())
	if got := readAfterSync(t, ctx, ic, "/during-isolation"); got != "x" {
		t.Fatalf("healed member read %q", got)
	}
}

func TestCutHeal(t *testing.T) {
	ens := paddocktest.Start(t, paddocktest.Options{})
	ctx := testCtx(t)
	leader, err := ens.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fs := others(ens, leader)
	// The follower cut from the leader loses it; the other one, which
	// still hears the leader, refuses to elect another.
	ens.Cut(leader.ID(), fs[0].ID())
	waitFor(t, election, "a follower cut from the leader still serves", func() bool { return fs[0].Mode() == "" })
	if m := fs[1].Mode(); m != "follower" {
		t.Fatalf("the follower that was not cut is %q", m)
	}
	ens.Heal(fs[0].ID(), leader.ID()) // either order names the link
	waitFor(t, catchUp, "the healed follower does not serve", func() bool { return fs[0].Mode() == "follower" })
}

func TestPauseResume(t *testing.T) {
	ens := paddocktest.Start(t, paddocktest.Options{
		// Sessions long enough to outlive the pause.
		ExtraConfig: map[string]string{"maxSessionTimeout": "20000"},
	})
	ctx := testCtx(t)
	leader, err := ens.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := others(ens, leader)[0]
	pc := connect(t, ctx, p.ClientAddr(), zk.WithSessionTimeout(20*time.Second))
	if got := pc.SessionTimeout(); got != 20*time.Second {
		t.Fatalf("session timeout %v: ExtraConfig maxSessionTimeout not applied", got)
	}
	create(t, ctx, pc, "/before-pause", "x")

	p.Pause()
	p.Pause() // pausing twice is harmless
	// Nothing comes back from the paused member, not even the answer to
	// a four-letter word, which it gives even when it does not serve...
	fourLW, err := net.Dial("tcp", p.ClientAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer fourLW.Close()
	if _, err := io.WriteString(fourLW, "srvr"); err != nil {
		t.Fatal(err)
	}
	fourLW.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := fourLW.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("srvr to a paused member: read %d bytes, %v; want a timeout", n, err)
	}
	// ...nor an answer to its session's client.
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, _, err = pc.Get(short, "/before-pause")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("get through a paused member: %v; want the deadline to pass", err)
	}
	// Its peer links are frozen too: it hears no leader and stops serving,
	// while the others go on.
	waitFor(t, election, "a paused member still hears the leader", func() bool { return p.Mode() == "" })
	lc := connect(t, ctx, leader.ClientAddr())
	create(t, ctx, lc, "/during-pause", "y")

	p.Resume()
	// What was sent meanwhile is delivered, on the same connection.
	fourLW.SetReadDeadline(time.Now().Add(election))
	out, err := io.ReadAll(fourLW)
	if err != nil || !strings.Contains(string(out), "serving") && !strings.Contains(string(out), "Mode:") {
		t.Fatalf("srvr after resume: %q, %v", out, err)
	}
	// The session lived through the pause and sees the write made during it.
	if got := readAfterSync(t, ctx, pc, "/during-pause"); got != "y" {
		t.Fatalf("after resume read %q", got)
	}
	if got := pc.SessionID(); got == 0 {
		t.Fatal("no session")
	}
	if err := ens.WaitServing(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestObserver(t *testing.T) {
	ens := paddocktest.Start(t, paddocktest.Options{Members: 3, Observers: 1})
	ctx := testCtx(t)
	if n := len(ens.Members()); n != 4 {
		t.Fatalf("%d members, want 4", n)
	}
	obs := ens.Member(4)
	if !obs.Observer() || ens.Member(3).Observer() {
		t.Fatalf("observer flags: member 4 %v, member 3 %v", obs.Observer(), ens.Member(3).Observer())
	}
	if m := obs.Mode(); m != "observer" {
		t.Fatalf("member 4's mode is %q, want observer", m)
	}
	leader, err := ens.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if leader == obs {
		t.Fatal("the observer leads")
	}
	oc := connect(t, ctx, obs.ClientAddr())
	create(t, ctx, oc, "/through-observer", "o")
	lc := connect(t, ctx, leader.ClientAddr())
	if got := readAfterSync(t, ctx, lc, "/through-observer"); got != "o" {
		t.Fatalf("leader read %q", got)
	}
}

func TestStandalone(t *testing.T) {
	ens := paddocktest.Start(t, paddocktest.Options{Members: 1})
	ctx := testCtx(t)
	if m := ens.Member(1).Mode(); m != "standalone" {
		t.Fatalf("mode %q, want standalone", m)
	}
	if l, err := ens.Leader(ctx); err != nil || l != ens.Member(1) {
		t.Fatalf("Leader = %v, %v; want the one member", l, err)
	}
	c := connect(t, ctx, ens.ConnectString())
	create(t, ctx, c, "/solo", "s")
	if got := readAfterSync(t, ctx, c, "/solo"); got != "s" {
		t.Fatalf("read %q", got)
	}
}

func TestOptionsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts paddocktest.Options
		want string
	}{
		{"negative members", paddocktest.Options{Members: -1}, "negative"},
		{"odd tick", paddocktest.Options{TickTime: 1500 * time.Microsecond}, "TickTime"},
		{"reserved key", paddocktest.Options{ExtraConfig: map[string]string{"dataDir": "/tmp/x"}}, "dataDir"},
		{"server line", paddocktest.Options{ExtraConfig: map[string]string{"server.9": "h:1:2"}}, "server.9"},
		{"unknown key", paddocktest.Options{ExtraConfig: map[string]string{"snapcount": "10"}}, "snapcount"},
		{"bad value", paddocktest.Options{ExtraConfig: map[string]string{"snapCount": "many"}}, "snapCount"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ens, err := paddocktest.New(tc.opts)
			if err == nil {
				ens.Close()
				t.Fatal("New accepted the options")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not name %q", err, tc.want)
			}
		})
	}
}
