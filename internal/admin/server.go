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
	// IdleTimeout closes keep-alive connections idle this long, and cuts
	// an answer whose writes make no progress this long
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
	// idle is the keep-alive idle timeout, and how long a write to a
	// client may make no progress before the answer is cut (as Jetty's
	// idle timeout does).
	idle    time.Duration
	log     *slog.Logger
	handler http.Handler
	hs      *http.Server

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
		idle:            idle,
		log:             log,
	}
	s.handler = http.HandlerFunc(s.route)
	s.hs = &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       idle,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return s, nil
}

// Handler returns the server's HTTP handler, for tests and for mounting
// it elsewhere.
func (s *Server) Handler() http.Handler { return s.handler }

// route dispatches a request by its path. The command URL is a plain
// prefix, not a ServeMux pattern: a configured URL may hold any character,
// and paths are taken as they come, unclean ones included, as Jetty hands
// them to ZooKeeper's servlet (/commands//srvr asks for command "/srvr").
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodOptions {
		serveOptions(w)
		return
	}
	var h http.HandlerFunc
	switch p := r.URL.Path; {
	case p == "/ready":
		h = s.serveReady
	case p == "/live":
		h = s.serveLive
	case p == s.prefix:
		h = s.serveList
	case strings.HasPrefix(p, s.prefix+"/"):
		h = s.serveCommand
	default:
		http.NotFound(w, r)
		return
	}
	s.getOnly(h)(w, r)
}

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

// optionsAllow is the Allow header of an OPTIONS answer: ZooKeeper's
// (Jetty's default for a servlet with doGet), which names TRACE though
// its security constraint refuses TRACE.
const optionsAllow = "GET, HEAD, TRACE, OPTIONS"

// serveOptions answers an OPTIONS request on any path, known or not, as
// ZooKeeper 3.8's admin server does: 200, the Allow header, no body.
func serveOptions(w http.ResponseWriter) {
	w.Header().Set("Allow", optionsAllow)
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
}

// getOnly refuses every method but GET and HEAD (OPTIONS is answered
// before routing).
func (s *Server) getOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD, OPTIONS")
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
		s.writeJSON(w, r, http.StatusOK, name, nil, errUnknownPrefix+name)
		return
	}
	primary := cmd.names[0]
	// The gates answer under the name as asked, alias or not, as
	// ZooKeeper's Commands.runCommand does; a command that runs answers
	// under its primary name.
	if cmd.serverRequired && !s.src.Serving() {
		s.writeJSON(w, r, http.StatusOK, name, nil, errNotServing)
		return
	}
	// Credentials are checked after the serving gate and before the
	// command runs (so before snapshot's own checks), as in ZooKeeper.
	if cmd.auth != nil {
		if status, msg := s.authorize(r, cmd.auth); status != 0 {
			s.writeJSON(w, r, status, name, nil, msg)
			return
		}
	}
	if primary == snapshotCommand {
		s.serveSnapshot(w, r)
		return
	}
	data, errMsg := cmd.run(s.src)
	s.writeJSON(w, r, http.StatusOK, primary, data, errMsg)
}

// writeJSON writes a command's answer.
func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, status int, command string, data any, errMsg string) {
	body, err := encodeResponse(command, data, errMsg)
	if err != nil {
		s.log.Error("admin: encoding an answer", "command", command, "err", err)
		status = http.StatusInternalServerError
		body, _ = encodeResponse(command, nil, "encoding the answer failed: "+err.Error())
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	s.writeBody(w, r, body)
}

// writeChunk is how much writeBody writes under one write deadline.
const writeChunk = 256 << 10

// writeBody writes an answer's body (nothing for HEAD) in chunks, each
// with a write deadline of the idle timeout, so that a client that stops
// reading loses its answer after that long, as Jetty's idle timeout has
// it, rather than holding the handler (and a snapshot's slot and bytes)
// for as long as it keeps its connection open.
func (s *Server) writeBody(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Method == http.MethodHead {
		return
	}
	rc := http.NewResponseController(w)
	for len(body) > 0 {
		n := min(len(body), writeChunk)
		// A writer without deadlines (a test's recorder) just writes.
		rc.SetWriteDeadline(time.Now().Add(s.idle))
		if _, err := w.Write(body[:n]); err != nil {
			return
		}
		body = body[n:]
	}
	if err := rc.Flush(); err != nil {
		return
	}
	rc.SetWriteDeadline(time.Time{})
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
		s.writeJSON(w, r, http.StatusServiceUnavailable, snapshotCommand, nil,
			"snapshot command is disabled; set admin.snapshot.enabled=true to enable it")
		return
	}
	// As ZooKeeper 3.9 reads it: absent means true, else
	// Boolean.parseBoolean of the first value (only "true", in any case,
	// is true).
	streaming := true
	if v, ok := r.URL.Query()["streaming"]; ok {
		streaming = strings.EqualFold(v[0], "true")
	}
	if !s.snapshotting.CompareAndSwap(false, true) {
		s.writeJSON(w, r, http.StatusTooManyRequests, snapshotCommand, nil, "a snapshot is already being taken")
		return
	}
	defer s.snapshotting.Store(false)
	zxid, data, err := s.src.Snapshot()
	if err != nil {
		s.log.Warn("admin: snapshot failed", "err", err)
		s.writeJSON(w, r, http.StatusInternalServerError, snapshotCommand, nil, "taking the snapshot failed: "+err.Error())
		return
	}
	zx := "0x" + strconv.FormatUint(uint64(zxid), 16)
	// Set as spelt (lower case, as ZooKeeper sends them), not through
	// Header.Set, which would send Last_zxid.
	w.Header()[headerLastZxid] = []string{zx}
	w.Header()[headerSnapshotSize] = []string{strconv.Itoa(len(data))}
	if !streaming {
		s.writeJSON(w, r, http.StatusOK, snapshotCommand, Object{{headerLastZxid, zx}, {headerSnapshotSize, len(data)}}, "")
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	s.writeBody(w, r, data)
}
