package server

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// failWAL makes every later write and fsync of the WAL in walDir fail as on
// a full disk: it puts /dev/full in place of the WAL's open segment files
// (dup3 onto their descriptors), under the WAL's feet, as a disk fault
// would come. Linux only: it finds the descriptors in /proc/self/fd.
func failWAL(t *testing.T, walDir string) {
	t.Helper()
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot list open files: %v", err)
	}
	replaced := 0
	for _, de := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", de.Name()))
		if err != nil || !strings.HasPrefix(target, walDir+string(filepath.Separator)) || strings.HasSuffix(target, ".lock") {
			continue
		}
		var fd int
		for _, r := range de.Name() {
			fd = fd*10 + int(r-'0')
		}
		if err := syscall.Dup3(int(full.Fd()), fd, syscall.O_CLOEXEC); err != nil {
			t.Fatalf("dup3 /dev/full onto %s: %v", target, err)
		}
		replaced++
	}
	if replaced == 0 {
		t.Fatalf("no open WAL file under %s", walDir)
	}
}

// writeAfterWALFailure writes through s, fails its WAL, sends a write and
// requires the connection closed without a reply (within 10 s): the
// write can be neither acknowledged nor left waiting.
func writeAfterWALFailure(t *testing.T, s *Server) {
	t.Helper()
	c := dial(t, s.Addr().String())
	c.mustCreate("/before", "", 0)
	failWAL(t, filepath.Join(s.cfg.DataLogDir, "wal"))
	anyone := []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}
	c.send(proto.OpCreate, &proto.CreateRequest{Path: "/after", ACL: anyone})
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if f, err := proto.ReadFrame(c.br, nil, 1<<20); err == nil {
		var h proto.ReplyHeader
		h.Decode(proto.NewDecoder(f))
		t.Fatalf("got a reply (xid %d, %v) from the server whose WAL failed", h.Xid, h.Err)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the write's client still waits 10s after the server's WAL failed: its connection was not closed")
	}
}

// TestWALFailureStopsServing breaks a follower's WAL while one of its
// clients has a write on the way, and checks that the member stops serving
// for good: the write's client loses its connection rather than wait for
// ever (its write was committed by the others, and this member can apply
// nothing more), new connections are closed at once, the member names no
// leader, and the rest of the ensemble goes on.
func TestWALFailureStopsServing(t *testing.T) {
	ens := startEnsemble(t, 3, 0)
	var follower, leader *Server
	for _, s := range ens {
		if s.node.Status().IsLeader {
			leader = s
		} else if follower == nil {
			follower = s
		}
	}
	if leader == nil || follower == nil {
		t.Fatal("no leader and follower")
	}
	writeAfterWALFailure(t, follower)

	select {
	case <-follower.node.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the node did not stop")
	}
	if follower.Serving() {
		t.Error("the member whose WAL failed still reports serving")
	}
	if st := follower.node.Status(); st.Lead != 0 {
		t.Errorf("the member whose WAL failed still names leader %d", st.Lead)
	}
	follower.pendMu.Lock()
	pending := len(follower.pending)
	follower.pendMu.Unlock()
	if pending != 0 {
		t.Errorf("%d proposals still wait on the member whose WAL failed", pending)
	}

	// A new client is turned away at once.
	nc, err := net.DialTimeout("tcp", follower.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := nc.Write(proto.AppendRecordFrame(nil, &proto.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)})); err == nil {
		_, err = proto.ReadFrame(nc, nil, 1<<20)
		if err == nil {
			t.Error("the member whose WAL failed accepted a new session")
		} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Error("the member whose WAL failed left a new connection hanging")
		} else if !errors.Is(err, syscall.ECONNRESET) && !strings.Contains(err.Error(), "EOF") {
			t.Logf("new connection: %v", err)
		}
	}

	// The others go on.
	lc := dial(t, leader.Addr().String())
	lc.mustCreate("/later", "", 0)
}

// TestWALFailureStopsServingStandalone is TestWALFailureStopsServing for a
// standalone server: the write that meets the failed WAL loses its
// connection, and the server serves no more.
func TestWALFailureStopsServingStandalone(t *testing.T) {
	s := startServer(t, nil)
	writeAfterWALFailure(t, s)
	select {
	case <-s.Failed(): // what paddock server waits for to exit with a failure
	case <-time.After(10 * time.Second):
		t.Fatal("Failed was not closed after the WAL failed")
	}
	if s.Err() == nil {
		t.Error("Err is nil after the WAL failed")
	}
	if s.Serving() {
		t.Error("the server whose WAL failed still reports serving")
	}
}

// TestFailedOnlyOnFailure: a server that runs and is closed normally never
// reports a failure.
func TestFailedOnlyOnFailure(t *testing.T) {
	s := startServer(t, nil)
	dial(t, s.Addr().String()).mustCreate("/n", "", 0)
	select {
	case <-s.Failed():
		t.Fatal("Failed closed on a server that did not fail")
	default:
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Err(); err != nil {
		t.Fatalf("Err after a normal Close: %v", err)
	}
}
