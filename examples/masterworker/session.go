package masterworker

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"

	"github.com/paddockhq/paddock/zk"
)

// The znodes of the application (docs/master-worker.md draws the tree).
const (
	masterPath  = "/master"  // ephemeral; data: the primary master's id
	workersPath = "/workers" // worker-<id>, ephemeral; data: "idle" or "busy"
	assignPath  = "/assign"  // worker-<id>/task-N, persistent; data: the task's
	tasksPath   = "/tasks"   // task-N, persistent sequential; data: the task's
	statusPath  = "/status"  // task-N, persistent; data: "done worker-<id>"
)

// parents are the persistent znodes the bootstrap creates.
var parents = []string{workersPath, assignPath, tasksPath, statusPath}

// session is what Master, Worker and Client share: the Conn, the context
// every call is made with, and how Run ends. Run starts the role's chain
// of asynchronous calls and waits; the chain stops Run by calling stop when
// the session is over (expired, closed, authentication refused).
type session struct {
	conn *zk.Conn
	log  *slog.Logger

	ctx    context.Context // every call's: cancelled when Run returns
	cancel context.CancelFunc

	once sync.Once
	err  error // why Run ended; written once, before cancel
}

func newSession(conn *zk.Conn, log *slog.Logger) session {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return session{conn: conn, log: log}
}

// start makes the context of the calls of one Run.
func (s *session) start(ctx context.Context) {
	s.ctx, s.cancel = context.WithCancel(ctx)
}

// stop ends Run with err; the first call wins.
func (s *session) stop(err error) {
	s.once.Do(func() {
		s.err = err
		s.cancel()
	})
}

// wait blocks until Run's context ends or stop is called, and returns nil
// for the former, stop's error for the latter.
func (s *session) wait() error {
	<-s.ctx.Done()
	s.stop(nil)
	return s.err
}

// over reports whether a callback's err means that the chain must stop:
// Run is returning (its context is done), or the session is over, in which
// case Run is stopped with err. Callbacks check it before anything else
// that is not ErrConnectionLoss.
func (s *session) over(err error) bool {
	if err == nil {
		return false
	}
	if s.ctx.Err() != nil {
		return true
	}
	if isSessionEnd(err) {
		s.log.Warn("session over", "err", err)
		s.stop(err)
		return true
	}
	return false
}

// sessionEvent handles the session state changes every watcher receives.
// Disconnected and SyncConnected need nothing: a disconnected client can
// do nothing (the book's "safe mode"), calls in flight fail with
// ErrConnectionLoss and are made again, and the Conn re-registers the
// watches on the next server.
func (s *session) sessionEvent(st zk.State) {
	switch st {
	case zk.StateExpired:
		s.over(zk.ErrSessionExpired)
	case zk.StateClosed:
		s.over(zk.ErrClosed)
	case zk.StateAuthFailed:
		s.over(zk.ErrAuthFailed)
	}
}

// watcher is a Watcher that hands session events to its session and znode
// events to on. It is used as a pointer, made once per purpose, so that the
// Conn registers it once per path however many times a read re-arms it
// (WatcherFunc values are never merged).
type watcher struct {
	s  *session
	on func(zk.Event)
}

func (w *watcher) Process(e zk.Event) {
	if e.Type == zk.EventNone {
		w.s.sessionEvent(e.State)
		return
	}
	w.on(e)
}

func (s *session) newWatcher(on func(zk.Event)) *watcher {
	return &watcher{s: s, on: on}
}

// bootstrap creates /workers, /assign, /tasks and /status asynchronously,
// ignoring ErrNodeExists (chapter 3's bootstrap), then calls next. Every
// role runs it, so the processes may start in any order.
func (s *session) bootstrap(next func()) {
	left := len(parents) // touched by the callbacks only, one at a time
	for _, p := range parents {
		s.createParent(p, func() {
			left--
			if left == 0 {
				next()
			}
		})
	}
}

func (s *session) createParent(path string, done func()) {
	s.conn.CreateAsync(s.ctx, path, nil, zk.OpenACL, zk.ModePersistent, func(_ string, err error) {
		switch {
		case errors.Is(err, zk.ErrConnectionLoss):
			s.createParent(path, done)
		case err == nil:
			s.log.Debug("parent created", "path", path)
			done()
		case errors.Is(err, zk.ErrNodeExists):
			done()
		case s.over(err):
		default:
			s.log.Error("creating parent", "path", path, "err", err)
			s.stop(err)
		}
	})
}

// isSessionEnd reports whether err says the session is over for good.
func isSessionEnd(err error) bool {
	return errors.Is(err, zk.ErrSessionExpired) || errors.Is(err, zk.ErrClosed) || errors.Is(err, zk.ErrAuthFailed)
}
