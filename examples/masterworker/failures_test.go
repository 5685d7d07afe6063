package masterworker_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/paddockhq/paddock/examples/masterworker"
	"github.com/paddockhq/paddock/zk"
)

// lossTrap is a dialer whose connection, once, is closed right after it
// sends a request whose frame contains a marker: the request reaches the
// server (or not), and its caller gets ErrConnectionLoss. Redial works, so
// the session survives.
type lossTrap struct {
	marker []byte
	mu     sync.Mutex
	armed  bool
	fired  chan struct{}
}

func newLossTrap(marker string) *lossTrap {
	return &lossTrap{marker: []byte(marker), armed: true, fired: make(chan struct{})}
}

func (l *lossTrap) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &trapConn{Conn: c, trap: l}, nil
}

type trapConn struct {
	net.Conn
	trap *lossTrap
}

func (c *trapConn) Write(b []byte) (int, error) {
	l := c.trap
	l.mu.Lock()
	hit := l.armed && bytes.Contains(b, l.marker)
	if hit {
		l.armed = false
	}
	l.mu.Unlock()
	n, err := c.Conn.Write(b)
	if hit {
		c.Conn.Close()
		close(l.fired)
	}
	return n, err
}

// connectVia opens a session through dial, closed at cleanup.
func (e *env) connectVia(dial zk.DialFunc) *zk.Conn {
	e.t.Helper()
	c, err := zk.Connect(e.ctx, e.ens.ConnectString(), zk.WithSessionTimeout(sessionTimeout), zk.WithDialer(dial))
	if err != nil {
		e.t.Fatalf("connect: %v", err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// settled waits until m has left MasterRunning and returns its state.
func settled(e *env, m *masterworker.Master) masterworker.MasterState {
	e.t.Helper()
	var st masterworker.MasterState
	e.eventually("master settled", func() error {
		if st = m.State(); st == masterworker.MasterRunning {
			return fmt.Errorf("still running for master")
		}
		return nil
	})
	return st
}

// TestMasterConnectionLossOnCreateHeldBySameID: a master restarted with the
// id of one whose session has not expired yet loses its connection while
// creating /master. /master holds its id, but it is the old session's:
// the new master must be a backup, or, once the old session goes and a
// backup takes /master, there are two primaries.
func TestMasterConnectionLossOnCreateHeldBySameID(t *testing.T) {
	e := newEnv(t)
	// The previous process with id m1: its session still holds /master.
	old := e.connect(nil)
	if _, err := old.Create(e.ctx, "/master", []byte("m1"), zk.OpenACL, zk.ModeEphemeral); err != nil {
		t.Fatal(err)
	}
	trap := newLossTrap("/master")
	m := masterworker.NewMaster(e.connectVia(trap.dial), masterworker.MasterConfig{ID: "m1"})
	e.run(m.Run)
	recv(e, "connection loss on the create of /master", trap.fired)
	if st := settled(e, m); st != masterworker.MasterNotElected {
		t.Fatalf("master is %v while another session holds /master; want %v", st, masterworker.MasterNotElected)
	}
	// The old session ends: the new master, watching, takes over.
	old.Close()
	recv(e, "elected after the old session closed", m.Elected())
}

// TestMasterConnectionLossOnOwnCreate: a master whose create of /master
// went through (or not) before the connection was lost ends up primary.
func TestMasterConnectionLossOnOwnCreate(t *testing.T) {
	e := newEnv(t)
	trap := newLossTrap("/master")
	conn := e.connectVia(trap.dial)
	m := masterworker.NewMaster(conn, masterworker.MasterConfig{ID: "m1"})
	e.run(m.Run)
	recv(e, "connection loss on the create of /master", trap.fired)
	recv(e, "elected", m.Elected())
	e.sync()
	_, st, err := e.admin.Get(e.ctx, "/master")
	if err != nil {
		t.Fatal(err)
	}
	if st.EphemeralOwner != conn.SessionID() {
		t.Errorf("/master owned by %#x, want the master's session %#x", st.EphemeralOwner, conn.SessionID())
	}
}

// TestBackupWatchSurvivesDataChange: a backup's watch on /master is a
// one-time trigger that a change of /master's data also fires; the backup
// must watch again, so that it still runs for master when /master goes.
func TestBackupWatchSurvivesDataChange(t *testing.T) {
	e := newEnv(t)
	primary := e.connect(nil)
	if _, err := primary.Create(e.ctx, "/master", []byte("m1"), zk.OpenACL, zk.ModeEphemeral); err != nil {
		t.Fatal(err)
	}
	logs := &logRecorder{}
	m := masterworker.NewMaster(e.connect(nil), masterworker.MasterConfig{ID: "m2", Logger: slog.New(logs)})
	e.run(m.Run)
	logs.wait(e, "backup master: watching /master")
	if _, err := primary.Set(e.ctx, "/master", []byte("m1 again"), -1); err != nil {
		t.Fatal(err)
	}
	primary.Close()
	recv(e, "backup elected after /master went", m.Elected())
}

// TestWorkerWaitsThroughDataChange: a worker whose id is registered by
// another session waits, with an exists watch, for that znode to go. A
// change of its data fires the watch too; the worker must watch again, and
// register once the znode is deleted.
func TestWorkerWaitsThroughDataChange(t *testing.T) {
	e := newEnv(t)
	other := e.connect(nil)
	e.create("/workers", "")
	e.create("/assign", "")
	if _, err := other.Create(e.ctx, "/workers/worker-1", []byte("idle"), zk.OpenACL, zk.ModeEphemeral); err != nil {
		t.Fatal(err)
	}
	logs := &logRecorder{}
	conn := e.connect(nil)
	w := masterworker.NewWorker(conn, masterworker.WorkerConfig{ID: "1", Logger: slog.New(logs)})
	e.run(w.Run)
	logs.wait(e, "registered by another session")
	if _, err := other.Set(e.ctx, "/workers/worker-1", []byte("busy"), -1); err != nil {
		t.Fatal(err)
	}
	if err := other.Delete(e.ctx, "/workers/worker-1", -1); err != nil {
		t.Fatal(err)
	}
	e.eventually("worker registered", func() error {
		e.sync()
		_, st, err := e.admin.Get(e.ctx, "/workers/worker-1")
		if err != nil {
			return err
		}
		if st.EphemeralOwner != conn.SessionID() {
			return fmt.Errorf("owner %#x, want %#x", st.EphemeralOwner, conn.SessionID())
		}
		return nil
	})
}

// logRecorder is a slog.Handler that keeps the messages logged.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecorder) WithGroup(string) slog.Handler            { return l }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.msgs = append(l.msgs, r.Message)
	l.mu.Unlock()
	return nil
}

func (l *logRecorder) count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if strings.Contains(m, substr) {
			n++
		}
	}
	return n
}

func (l *logRecorder) wait(e *env, substr string) { l.waitN(e, substr, 1) }

func (l *logRecorder) waitN(e *env, substr string, n int) {
	e.t.Helper()
	e.eventually(fmt.Sprintf("%d× %q logged", n, substr), func() error {
		if got := l.count(substr); got < n {
			return fmt.Errorf("%d times", got)
		}
		return nil
	})
}
