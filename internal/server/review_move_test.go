package server

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// TestSessionMoveClosesOldMemberConnection opens a session on one member,
// sets a watch there and takes the session to another member without
// closing the first connection (a client that gave up on a member it
// could no longer reach leaves it half open). The first member must close
// its connection: it held the session's connection, its watches and a
// maxClientCnxns place for as long as the session lived elsewhere, since
// nothing on that member expires it (ZooKeeper closes a connection idle
// for its session timeout).
func TestSessionMoveClosesOldMemberConnection(t *testing.T) {
	ms := startEnsemble(t, 3, 0)
	a := dial(t, ms[0].Addr().String())
	a.mustCreate("/w", "", 0)
	if h, _ := a.call(proto.OpGetData, &proto.GetDataRequest{Path: "/w", Watch: true}, nil); h.Err != proto.ErrOK {
		t.Fatal(h.Err)
	}
	b := redial(t, ms[1].Addr().String(), a.session, a.passwd)
	if b.session != a.session {
		t.Fatalf("reattached to 0x%x, want 0x%x", b.session, a.session)
	}
	if h, _ := b.call(proto.OpExists, &proto.ExistsRequest{Path: "/w"}, nil); h.Err != proto.ErrOK {
		t.Fatal(h.Err)
	}
	// Bounded by twice the session timeout (4 s at most here), while the
	// client keeps its session alive on the second member.
	deadline := time.Now().Add(8 * time.Second)
	for {
		a.nc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		_, err := a.br.ReadByte()
		var ne net.Error
		if err == nil {
			continue
		}
		if !errors.As(err, &ne) || !ne.Timeout() {
			if !errors.Is(err, io.EOF) && !isReset(err) {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			ms[0].connMu.Lock()
			held := ms[0].bySession[a.session] != nil
			ms[0].connMu.Unlock()
			t.Fatalf("the first member kept the moved session's connection open (attached: %v)", held)
		}
		b.write(proto.AppendRequestFrame(nil, proto.XidPing, proto.OpPing, nil))
		if f := b.next(); f.hdr.Xid != proto.XidPing {
			t.Fatalf("ping reply %+v", f.hdr)
		}
	}
	// The session lives on, on the second member.
	if h, _ := b.call(proto.OpExists, &proto.ExistsRequest{Path: "/w"}, nil); h.Err != proto.ErrOK {
		t.Fatal(h.Err)
	}
}

// TestSessionMoveKeepsSessionAlive lets a session idle on one follower for
// most of its timeout, takes it to another follower and stays idle there
// for less than a timeout, as a client does between its reconnection and
// its first ping (a third of the timeout). The session must live: the
// resume tells the leader the client is alive, as ZooKeeper's revalidation
// of a session on a learner touches it on the leader. Before, the leader
// heard nothing of the resume and expired the session at the deadline the
// first follower's last report had set.
func TestSessionMoveKeepsSessionAlive(t *testing.T) {
	sink := &logSink{}
	ms := startEnsembleLogged(t, 3, 0, nil, slog.New(slog.NewTextHandler(sink, nil)))
	t.Cleanup(func() {
		if t.Failed() {
			sink.mu.Lock()
			t.Log(sink.buf.String())
			sink.mu.Unlock()
		}
	})
	var leader *Server
	var followers []*Server
	for _, s := range ms {
		if s.node.Status().IsLeader {
			leader = s
		} else {
			followers = append(followers, s)
		}
	}
	if leader == nil || len(followers) != 2 {
		t.Fatal("no leader with two followers")
	}
	const timeout = 4000 // ms, the ensemble's maximum
	x := dialTimeout(t, followers[0].Addr().String(), 0, make([]byte, 16), timeout)
	if h, _ := x.call(proto.OpExists, &proto.ExistsRequest{Path: "/"}, nil); h.Err != proto.ErrOK {
		t.Fatal(h.Err)
	}
	x.nc.Close()
	idle := time.Now()
	time.Sleep(timeout * time.Millisecond * 6 / 10) // the client's reconnection, well within the timeout
	y := dialTimeout(t, followers[1].Addr().String(), x.session, x.passwd, timeout)
	if y.session != x.session {
		t.Fatalf("the resume was refused after %v idle", time.Since(idle))
	}
	time.Sleep(timeout * time.Millisecond * 6 / 10) // then idle for less than a timeout, past the first deadline
	y.write(proto.AppendRequestFrame(nil, proto.XidPing, proto.OpPing, nil))
	y.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := proto.ReadFrame(y.br, nil, 1<<20); err != nil {
		leader.mu.RLock()
		open := leader.fsm.Session(x.session) != nil
		leader.mu.RUnlock()
		t.Fatalf("ping %v after the session went idle, resumed meanwhile: %v (session open: %v)", time.Since(idle), err, open)
	}
}
