package server

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/proto"
)

// logSink collects JSON log records.
type logSink struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// find returns the first record with message msg whose attributes include
// every pair of want.
func (l *logSink) find(msg string, want map[string]string) map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range strings.Split(l.buf.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != msg {
			continue
		}
		match := true
		for k, v := range want {
			if s, _ := rec[k].(string); s != v {
				match = false
			}
		}
		if match {
			return rec
		}
	}
	return nil
}

// waitLog waits until a record as find describes it is logged.
func (l *logSink) waitLog(t *testing.T, msg string, want map[string]string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for l.find(msg, want) == nil {
		if time.Now().After(deadline) {
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Fatalf("no log record %q with %v in:\n%s", msg, want, l.buf.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// startLogged starts a server that logs JSON records of level and above
// into the returned sink.
func startLogged(t *testing.T, level slog.Level, mutate func(*config.Config)) (*Server, *logSink) {
	t.Helper()
	sink := &logSink{}
	cfg := config.Default()
	cfg.ClientPort, cfg.ClientPortAddress = 0, "127.0.0.1"
	cfg.DataDir = t.TempDir()
	cfg.DataLogDir = cfg.DataDir
	mutate(cfg)
	s, err := New(cfg, slog.New(slog.NewJSONHandler(sink, &slog.HandlerOptions{Level: level})))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, sink
}

// TestLogLines checks the operator-facing log lines: one per session open
// and close at debug level (as ZooKeeper logs them), one per expiry, and one
// per rejected connection.
func TestLogLines(t *testing.T) {
	s, sink := startLogged(t, slog.LevelDebug, func(cfg *config.Config) {
		cfg.TickTime = 50 * time.Millisecond
		cfg.MinSessionTimeout, cfg.MaxSessionTimeout = 100*time.Millisecond, 10*time.Second
	})
	addr := s.Addr().String()

	closing := dial(t, addr)
	id := hexSession(closing.session)
	sink.waitLog(t, "session established", map[string]string{"session": id, "level": "DEBUG"})
	closing.call(proto.OpCloseSession, nil, nil)
	sink.waitLog(t, "session closed by client", map[string]string{"session": id, "level": "DEBUG"})

	// A session of 100 ms whose client goes silent expires.
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	silent := &rawClient{t: t, nc: nc, br: bufio.NewReader(nc)}
	silent.handshake(&proto.ConnectRequest{TimeOut: 100, Passwd: make([]byte, 16)})
	sink.waitLog(t, "expiring session", map[string]string{"session": hexSession(silent.session)})
}

// TestSessionLinesAreDebug: at the default level (info) a session that
// opens and closes leaves no log line, as with ZooKeeper, whose per-session
// lines are debug too; a server with thousands of short sessions a second
// would otherwise spend its time logging.
func TestSessionLinesAreDebug(t *testing.T) {
	s, sink := startLogged(t, slog.LevelInfo, func(*config.Config) {})
	c := dial(t, s.Addr().String())
	// Both lines are written before the replies they precede.
	c.call(proto.OpCloseSession, nil, nil)
	for _, msg := range []string{"session established", "session closed by client"} {
		if rec := sink.find(msg, nil); rec != nil {
			t.Errorf("%q logged at level info: %v", msg, rec)
		}
	}
	if sink.find("listening", nil) == nil {
		t.Fatal("the sink recorded no \"listening\" line at level info")
	}
}

// TestLogRejectedConnection checks that a connection over maxClientCnxns is
// logged.
func TestLogRejectedConnection(t *testing.T) {
	s, sink := startLogged(t, slog.LevelInfo, func(cfg *config.Config) { cfg.MaxClientCnxns = 1 })
	dial(t, s.Addr().String())
	extra, err := net.DialTimeout("tcp", s.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	sink.waitLog(t, "rejecting connection: too many connections from this address", nil)
}
