package admin

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Server.
type Options struct {
	// Source is the server reported on. Required.
	Source Source
	// CommandURL is the path the commands are served under
	// (admin.commandURL); "" means "/commands".
	CommandURL string
	// IdleTimeout closes keep-alive connections idle this long
	// (admin.idleTimeout); 0 means 30 s.
	IdleTimeout time.Duration
	// SnapshotEnabled allows the snapshot command
	// (admin.snapshot.enabled).
	SnapshotEnabled bool
	// SuperDigest is the super user's digest identity,
	// "user:base64(sha1(user:password))"
	// (DigestAuthenticationProvider.superDigest); "" for none. A command
	// that needs credentials lets the super user through whatever the
	// ACL.
	SuperDigest string
	// Logger receives the server's log; nil discards it.
	Logger *slog.Logger
}

// Server is the admin HTTP server.
type Server struct {
	src             Source
	prefix          string
	snapshotEnabled bool
	superDigest     string
	log             *slog.Logger
	mux             *http.ServeMux
	hs              *http.Server

	// snapshotting is set while a snapshot command runs: one at a time.
	snapshotting atomic.Bool

	mu   sync.Mutex
	ln   net.Listener
	done chan struct{} // closed when Serve returns
}

// New returns a server for opts. It listens on nothing until Start or
// Serve.
func New(opts Options) (*Server, error) {
	if opts.Source == nil {
		return nil, errors.New("admin: no Source")
	}
	prefix := strings.TrimRight(opts.CommandURL, "/")
	if opts.CommandURL == "" {
		prefix = "/commands"
	}
	if !strings.HasPrefix(prefix, "/") || prefix == "/ready" || prefix == "/live" {
		return nil, fmt.Errorf("admin: command URL %q must be a path other than /, /ready and /live", opts.CommandURL)
	}
	idle := opts.IdleTimeout
	if idle <= 0 {
		idle = 30 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{
		src:             opts.Source,
		prefix:          prefix,
		snapshotEnabled: opts.SnapshotEnabled,
		superDigest:     opts.SuperDigest,
		log:             log,
		mux:             http.NewServeMux(),
	}
	s.mux.HandleFunc("/ready", s.getOnly(s.serveReady))
	s.mux.HandleFunc("/live", s.getOnly(s.serveLive))
	s.mux.HandleFunc(prefix, s.getOnly(s.serveList))
	s.mux.HandleFunc(prefix+"/", s.getOnly(s.serveCommand))
	s.hs = &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       idle,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return s, nil
}

// Handler returns the server's HTTP handler, for tests and for mounting
// it elsewhere.
func (s *Server) Handler() http.Handler { return s.mux }

// Start listens on addr (host:port, port 0 for a free one) and serves in
// the background. A bind failure is returned.
func (s *Server) Start(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("admin: listen on %s: %w", addr, err)
	}
	s.Serve(ln)
	return nil
}

// Serve serves on ln in the background until Close.
func (s *Server) Serve(ln net.Listener) {
	s.mu.Lock()
	s.ln = ln
	s.done = make(chan struct{})
	done := s.done
	s.mu.Unlock()
	go func() {
		defer close(done)
		if err := s.hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("admin server stopped", "err", err)
		}
	}()
}

// Addr returns the address the server listens on, nil before Start.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Close stops listening, closes idle connections and waits (at most five
// seconds) for the requests in flight, then closes the rest.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.hs.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.hs.Close()
	}
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done != nil {
		<-done
	}
	return err
}

// getOnly refuses every method but GET and HEAD.
func (s *Server) getOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h(w, r)
	}
}

func (s *Server) serveReady(w http.ResponseWriter, r *http.Request) {
	ok := s.src.Serving()
	writeProbe(w, ok, Object{{"ready", ok}, {"mode", s.src.Mode()}})
}

func (s *Server) serveLive(w http.ResponseWriter, r *http.Request) {
	ok := s.src.Live()
	writeProbe(w, ok, Object{{"live", ok}, {"mode", s.src.Mode()}})
}

// writeProbe answers a probe: 200 when ok, else 503, with a small JSON
// body that is never cached.
func writeProbe(w http.ResponseWriter, ok bool, body Object) {
	status := http.StatusOK
	if !ok {
		status = http.StatusServiceUnavailable
	}
	b, err := body.MarshalJSON()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// serveList lists the commands as ZooKeeper does: one link per primary
// name.
func (s *Server) serveList(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var b strings.Builder
	for _, name := range primaryNames() {
		fmt.Fprintf(&b, "<a href=\"%s/%s\">%s</a>\n<br/>\n", html.EscapeString(s.prefix), name, name)
	}
	io.WriteString(w, b.String())
}

func (s *Server) serveCommand(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, s.prefix+"/")
	if name == "" {
		s.serveList(w, r)
		return
	}
	cmd, ok := lookup(name)
	if !ok {
		s.writeJSON(w, http.StatusOK, name, nil, errUnknownPrefix+name)
		return
	}
	primary := cmd.names[0]
	if cmd.serverRequired && !s.src.Serving() {
		s.writeJSON(w, http.StatusOK, primary, nil, errNotServing)
		return
	}
	// Credentials are checked after the serving gate and before the
	// command runs (so before snapshot's own checks), as in ZooKeeper.
	if cmd.auth != nil {
		if status, msg := s.authorize(r, cmd.auth); status != 0 {
			s.writeJSON(w, status, primary, nil, msg)
			return
		}
	}
	if primary == snapshotCommand {
		s.serveSnapshot(w, r)
		return
	}
	data, errMsg := cmd.run(s.src)
	s.writeJSON(w, http.StatusOK, primary, data, errMsg)
}

// writeJSON writes a command's answer.
func (s *Server) writeJSON(w http.ResponseWriter, status int, command string, data any, errMsg string) {
	body, err := encodeResponse(command, data, errMsg)
	if err != nil {
		s.log.Error("admin: encoding an answer", "command", command, "err", err)
		status = http.StatusInternalServerError
		body, _ = encodeResponse(command, nil, "encoding the answer failed: "+err.Error())
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// Headers of a snapshot answer, as ZooKeeper 3.9 names them.
const (
	headerLastZxid     = "last_zxid"
	headerSnapshotSize = "snapshot_size"
)

// serveSnapshot takes a snapshot of the state as it is now and streams it
// (application/octet-stream), or with ?streaming=false reports its zxid and
// size in JSON without the bytes. Disabled: 503; another one running: 429.
// serveCommand has checked the caller's credentials.
func (s *Server) serveSnapshot(w http.ResponseWriter, r *http.Request) {
	if !s.snapshotEnabled {
		s.writeJSON(w, http.StatusServiceUnavailable, snapshotCommand, nil,
			"snapshot command is disabled; set admin.snapshot.enabled=true to enable it")
		return
	}
	streaming := true
	if v := r.URL.Query().Get("streaming"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			s.writeJSON(w, http.StatusBadRequest, snapshotCommand, nil, "streaming must be true or false, got "+strconv.Quote(v))
			return
		}
		streaming = b
	}
	if !s.snapshotting.CompareAndSwap(false, true) {
		s.writeJSON(w, http.StatusTooManyRequests, snapshotCommand, nil, "a snapshot is already being taken")
		return
	}
	defer s.snapshotting.Store(false)
	zxid, data, err := s.src.Snapshot()
	if err != nil {
		s.log.Warn("admin: snapshot failed", "err", err)
		s.writeJSON(w, http.StatusInternalServerError, snapshotCommand, nil, "taking the snapshot failed: "+err.Error())
		return
	}
	zx := "0x" + strconv.FormatUint(uint64(zxid), 16)
	w.Header().Set(headerLastZxid, zx)
	w.Header().Set(headerSnapshotSize, strconv.Itoa(len(data)))
	if !streaming {
		s.writeJSON(w, http.StatusOK, snapshotCommand, Object{{headerLastZxid, zx}, {headerSnapshotSize, len(data)}}, "")
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(data)
	}
}
