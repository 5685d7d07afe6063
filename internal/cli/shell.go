package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddockhq/paddock/internal/javatime"
	"github.com/paddockhq/paddock/zk"
)

// DefaultServer is the server zkCli connects to when none is given.
const DefaultServer = "localhost:2181"

// DefaultSessionTimeout is zkCli's default session timeout (-timeout 30000).
const DefaultSessionTimeout = 30 * time.Second

// Options configures a Shell.
type Options struct {
	// Server is the connect string, "host:port[,host:port...][/chroot]";
	// "" means DefaultServer.
	Server string
	// SessionTimeout is the session timeout asked for, and how long Connect
	// and the connect command wait for a session; 0 means
	// DefaultSessionTimeout.
	SessionTimeout time.Duration
	// Out receives command output and watch events; Err receives errors,
	// warnings and the messages zkCli prints there ("Created /a"). Nil
	// means io.Discard.
	Out, Err io.Writer
	// JSON prints one JSON object per command (and per watch event) on Out
	// instead of zkCli's text.
	JSON bool
	// ReadOnly lets the session connect to a read-only server (zkCli -r).
	ReadOnly bool
	// Version is reported by the version command.
	Version string
	// Location is the time zone of the ctime and mtime lines; nil means
	// the system's (time.Local), as Java uses the default time zone. The
	// zone is named as Java's Date.toString names it, which for a few zones
	// depends on the Location's name (javatime.Date).
	Location *time.Location
	// Logger receives the client's connection log; nil discards it.
	Logger *slog.Logger
}

// Shell runs zkCli.sh's commands on one ZooKeeper session at a time.
// Exec, Connect and Close are called from one goroutine; Prompt, Children,
// Commands and Done may be called from any. Watch events are printed from the
// client's delivery goroutine, between whole commands' output.
type Shell struct {
	opts Options
	loc  *time.Location

	outMu sync.Mutex // serialises writes to Out and Err

	mu      sync.Mutex
	conn    *zk.Conn
	host    string
	count   int
	history map[int]string
	done    bool

	printWatches atomic.Bool
	closing      atomic.Bool // Close was called: events are no longer printed
	printer      *printer    // the watcher of every watch the shell sets
}

// CommandError is the error Exec returns when a command fails. Its message
// has already been printed (to Err, or as a JSON object on Out).
type CommandError struct {
	// Status is the exit status zkCli gives the failure: 1, or 127 for an
	// unknown command.
	Status int
	// Code names the failure for --json: a ZooKeeper error code
	// ("NONODE"), or USAGE, INVALIDPATH, COMMANDNOTFOUND, NOTCONNECTED,
	// ERROR.
	Code string
	// Message is the text zkCli prints.
	Message string
}

func (e *CommandError) Error() string { return e.Message }

// Status returns the exit status zkCli gives a command that returned err:
// 0 for nil, the CommandError's status, else 1.
func Status(err error) int {
	if err == nil {
		return 0
	}
	var ce *CommandError
	if errors.As(err, &ce) {
		return ce.Status
	}
	return 1
}

// NewShell returns a Shell that is not yet connected.
func NewShell(opts Options) *Shell {
	if opts.Server == "" {
		opts.Server = DefaultServer
	}
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = DefaultSessionTimeout
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	if opts.Err == nil {
		opts.Err = io.Discard
	}
	s := &Shell{opts: opts, loc: opts.Location, history: map[int]string{}}
	if s.loc == nil {
		s.loc = javatime.LocalLocation()
	}
	s.printWatches.Store(true)
	s.printer = &printer{s: s}
	return s
}

// Connect prints "Connecting to <server>" (as zkCli does; not in JSON mode)
// and starts a session with Options.Server, waiting for it at most the
// session timeout or until ctx ends.
func (s *Shell) Connect(ctx context.Context) error {
	if !s.opts.JSON {
		s.writeOut("Connecting to " + s.opts.Server + "\n")
	}
	return s.connectTo(ctx, s.opts.Server)
}

// connectTo closes the current session, if alive, and starts one with host.
func (s *Shell) connectTo(ctx context.Context, host string) error {
	s.mu.Lock()
	old := s.conn
	s.conn = nil
	s.host = host
	s.mu.Unlock()
	if old != nil && alive(old) {
		_ = old.Close()
		// Print the old session's Closed event now, before the new
		// session's events, as zkCli's close does.
		s.barrier(ctx, old)
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.SessionTimeout)
	defer cancel()
	logger := s.opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	opts := []zk.Option{
		zk.WithSessionTimeout(s.opts.SessionTimeout),
		zk.WithDefaultWatcher(s.printer),
		zk.WithLogger(logger),
	}
	if s.opts.ReadOnly {
		opts = append(opts, zk.WithReadOnly(true))
	}
	conn, err := zk.Connect(ctx, host, opts...)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", host, err)
	}
	s.mu.Lock()
	s.conn = conn
	s.mu.Unlock()
	return nil
}

// alive reports whether the session can still be used (Java's
// States.isAlive).
func alive(c *zk.Conn) bool {
	switch c.State() {
	case zk.StateClosed, zk.StateExpired, zk.StateAuthFailed:
		return false
	}
	return true
}

// Prompt returns zkCli's prompt, "[zk: 127.0.0.1:2181(CONNECTED) 3] ".
func (s *Shell) Prompt() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("[zk: %s(%s) %d] ", s.host, s.stateNameLocked(), s.count)
}

// stateNameLocked names the session state as Java's ZooKeeper.States.
func (s *Shell) stateNameLocked() string {
	if s.conn == nil {
		return "NOT_CONNECTED"
	}
	switch s.conn.State() {
	case zk.StateSyncConnected:
		return "CONNECTED"
	case zk.StateConnectedReadOnly:
		return "CONNECTEDREADONLY"
	case zk.StateDisconnected:
		return "CONNECTING"
	case zk.StateAuthFailed:
		return "AUTH_FAILED"
	}
	return "CLOSED"
}

// Commands returns the names of the commands, sorted, for completion.
func (s *Shell) Commands() []string {
	names := make([]string, 0, len(commands)+len(localCommands))
	for name := range commands {
		names = append(names, name)
	}
	names = append(names, localCommands...)
	names = append(names, "help")
	sort.Strings(names)
	return names
}

// Children returns the names of path's children, sorted, for completion.
func (s *Shell) Children(ctx context.Context, path string) ([]string, error) {
	conn := s.currentConn()
	if conn == nil || !alive(conn) {
		return nil, errors.New("not connected")
	}
	children, _, err := conn.Children(ctx, path)
	if err != nil {
		return nil, err
	}
	sort.Strings(children)
	return children, nil
}

// Done reports whether quit has been run.
func (s *Shell) Done() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// Close ends the session without printing its last events. It is
// idempotent.
func (s *Shell) Close() error {
	s.closing.Store(true)
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if conn != nil {
		return conn.Close()
	}
	return nil
}

func (s *Shell) currentConn() *zk.Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn
}

// Exec parses and runs one command line as zkCli does, printing its output,
// and records it in the numbered history. An empty line does nothing and
// returns nil (a script's exit status must not change for it: the caller
// skips it); a line of blanks is an unknown command, as in zkCli. A failed
// command returns a *CommandError whose message has been printed.
func (s *Shell) Exec(ctx context.Context, line string) error {
	if line == "" {
		return nil
	}
	s.mu.Lock()
	n := s.count
	s.history[n] = line
	s.mu.Unlock()
	err := s.process(ctx, Tokenize(line), n)
	s.mu.Lock()
	s.count++
	s.mu.Unlock()
	return err
}

// ExecArgs runs one command given as words, with no tokenising (zkCli's
// "zkCli.sh -server host cmd args..."). It is not recorded in the history.
func (s *Shell) ExecArgs(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return nil
	}
	s.mu.Lock()
	n := s.count
	s.mu.Unlock()
	return s.process(ctx, args, n)
}

// localCommands are handled by the shell itself (ZooKeeperMain).
var localCommands = []string{"connect", "history", "printwatches", "quit", "redo"}

// process runs one tokenised command; n is its history number.
func (s *Shell) process(ctx context.Context, args []string, n int) error {
	err := s.processCmd(ctx, args, n)
	var ce *CommandError
	if errors.As(err, &ce) {
		s.report(ce)
		return ce
	}
	return err
}

// report prints a failed command's message.
func (s *Shell) report(ce *CommandError) {
	if s.opts.JSON {
		s.writeJSON(map[string]any{"error": ce.Message, "code": ce.Code})
		return
	}
	s.writeErr(ce.Message + "\n")
}

func (s *Shell) processCmd(ctx context.Context, args []string, n int) error {
	if len(args) == 0 {
		s.usage()
		return &CommandError{Status: 1, Code: "USAGE", Message: "No command entered"}
	}
	name := args[0]
	if name == "help" {
		s.usage()
		return nil
	}
	if _, ok := commands[name]; !ok && !slices.Contains(localCommands, name) {
		s.usage()
		return &CommandError{Status: 127, Code: "COMMANDNOTFOUND", Message: "Command not found: Command not found " + name}
	}
	var result error
	switch name {
	case "quit":
		if conn := s.currentConn(); conn != nil {
			_ = conn.Close()
			s.barrier(ctx, conn) // print the Closed event, as zkCli does
		}
		s.mu.Lock()
		s.done = true
		s.mu.Unlock()
		s.emitJSON(map[string]any{"ok": true})
		return nil
	case "redo":
		if len(args) < 2 {
			break
		}
		i, ok := decodeJavaInt(args[1])
		s.mu.Lock()
		count := s.count
		line, found := s.history[int(i)]
		s.mu.Unlock()
		if !ok {
			return &CommandError{Status: 1, Code: "USAGE", Message: fmt.Sprintf("For input string: \"%s\"", args[1])}
		}
		if int(i) >= count || i < 0 || !found {
			return &CommandError{Status: 1, Code: "USAGE", Message: "Command index out of range"}
		}
		redo := Tokenize(line)
		if len(redo) > 0 && redo[0] == "redo" {
			return &CommandError{Status: 1, Code: "USAGE", Message: "No redoing redos"}
		}
		s.mu.Lock()
		s.history[n] = line
		s.mu.Unlock()
		// As in zkCli, the redone command's failure is printed but the redo
		// itself succeeds.
		_ = s.process(ctx, redo, n)
	case "history":
		s.mu.Lock()
		var b strings.Builder
		var hist []map[string]any
		for i := max(n-10, 0); i <= n; i++ {
			// A one-shot command is not recorded: Java prints the
			// missing entry as "null".
			line, ok := s.history[i]
			if !ok {
				fmt.Fprintf(&b, "%d - null\n", i)
				hist = append(hist, map[string]any{"n": i, "command": nil})
				continue
			}
			fmt.Fprintf(&b, "%d - %s\n", i, line)
			hist = append(hist, map[string]any{"n": i, "command": line})
		}
		s.mu.Unlock()
		if s.opts.JSON {
			s.writeJSON(map[string]any{"history": hist})
		} else {
			s.writeOut(b.String())
		}
	case "printwatches":
		if len(args) == 1 {
			state := "off"
			if s.printWatches.Load() {
				state = "on"
			}
			if s.opts.JSON {
				s.writeJSON(map[string]any{"printwatches": state})
			} else {
				s.writeOut("printwatches is " + state + "\n")
			}
		} else {
			s.printWatches.Store(args[1] == "on")
			s.emitJSON(map[string]any{"ok": true})
		}
	case "connect":
		host := s.hostName()
		if len(args) >= 2 {
			host = args[1]
		}
		if err := s.connectTo(ctx, host); err != nil {
			return &CommandError{Status: 1, Code: "CONNECTIONLOSS", Message: err.Error()}
		}
		s.emitJSON(map[string]any{"ok": true, "server": host})
	}
	// The remaining commands need a live session; ZooKeeperMain checks it
	// after the shell's own commands too, and so says "Not connected" after
	// them when the session is gone.
	conn := s.currentConn()
	if conn == nil || !alive(conn) {
		if s.opts.JSON {
			if result == nil {
				return &CommandError{Status: 1, Code: "NOTCONNECTED", Message: "Not connected"}
			}
			return result
		}
		s.writeOut("Not connected\n")
		return result
	}
	cmd, ok := commands[name]
	if !ok {
		return result
	}
	f := &flags{args: args}
	if !cmd.raw {
		var err error
		if f, err = parseFlags(cmd.flags, args); err != nil {
			return &CommandError{Status: 1, Code: "USAGE", Message: err.Error()}
		}
	}
	c := &call{s: s, ctx: ctx, conn: conn, cmd: cmd, f: f, words: args}
	c.out, c.err = stream{c: c}, stream{c: c, toErr: true}
	err := cmd.run(c)
	s.barrier(ctx, conn)
	s.flush(c)
	return err
}

// barrier waits until the watch events the server sent before now have
// been printed, by reading through the session's delivery queue, which runs
// events and callbacks in the order they arrived. So a command's output comes
// after the events it caused, and no event it caused is printed after it
// returns. It costs a round trip on a live session; on a session that has
// ended (close) the call fails at once, its callback queued behind the
// session's last state event (Closed), which is so printed before the next
// command's output, as zkCli prints it.
func (s *Shell) barrier(ctx context.Context, conn *zk.Conn) {
	done := make(chan struct{})
	conn.ExistsAsync(ctx, "/", nil, func(bool, *zk.Stat, error) { close(done) })
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func (s *Shell) hostName() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.host
}

// usage prints zkCli's list of commands to Err (not in JSON mode).
func (s *Shell) usage() {
	if s.opts.JSON {
		return
	}
	var b strings.Builder
	b.WriteString("ZooKeeper -server host:port -client-configuration properties-file cmd args\n")
	for _, name := range s.allUsageNames() {
		fmt.Fprintf(&b, "\t%s %s\n", name, usageOf(name))
	}
	s.writeErr(b.String())
}

// allUsageNames lists every command usage shows, sorted as zkCli sorts them.
func (s *Shell) allUsageNames() []string {
	var names []string
	for _, n := range s.Commands() {
		if n != "help" { // zkCli lists no help command
			names = append(names, n)
		}
	}
	return names
}

// usageOf returns a command's option string.
func usageOf(name string) string {
	switch name {
	case "connect":
		return "host:port"
	case "history", "quit":
		return ""
	case "redo":
		return "cmdno"
	case "printwatches":
		return "on|off"
	}
	return commands[name].usage
}

// call is one run of a command.
type call struct {
	s    *Shell
	ctx  context.Context
	conn *zk.Conn
	cmd  *command
	f    *flags
	// words are the command's words as typed, the name first.
	words []string
	out   stream // text for Out
	err   stream // text for Err
	// parts are what out and err buffered, in the order it was written:
	// zkCli prints on both streams as it goes, so that on one terminal a
	// warning on Err comes before the output that follows it on Out.
	parts []textPart
}

// textPart is a piece of a command's text, for Err or Out.
type textPart struct {
	toErr bool
	text  *strings.Builder
}

// stream buffers one of a command's outputs in its call's parts.
type stream struct {
	c     *call
	toErr bool
}

func (w *stream) WriteString(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	t := w.c.parts
	if n := len(t); n == 0 || t[n-1].toErr != w.toErr {
		w.c.parts = append(t, textPart{w.toErr, &strings.Builder{}})
	}
	return w.c.parts[len(w.c.parts)-1].text.WriteString(s)
}

func (w *stream) Write(p []byte) (int, error) { return w.WriteString(string(p)) }

// arg returns the i-th word that is not an option (0 is the command).
func (c *call) arg(i int) string { return c.f.args[i] }

func (c *call) nargs() int { return len(c.f.args) }

// usageError is zkCli's error for missing words: the command's usage.
func (c *call) usageError() error {
	return &CommandError{Status: 1, Code: "USAGE", Message: c.cmd.name + " " + c.cmd.usage}
}

// fail turns a client error on path into the message zkCli prints.
func (c *call) fail(err error, path string) error {
	return failure(err, path)
}

func failure(err error, path string) error {
	var pe *pathError
	if errors.As(err, &pe) {
		return &CommandError{Status: 1, Code: "INVALIDPATH", Message: pe.msg}
	}
	if code, ok := keeperCode(err); ok {
		return &CommandError{Status: 1, Code: codeNames[code], Message: wrapperMessage(code, path)}
	}
	if errors.Is(err, zk.ErrClosed) {
		return &CommandError{Status: 1, Code: "CONNECTIONLOSS", Message: keeperMessage(-4, path)}
	}
	return &CommandError{Status: 1, Code: "ERROR", Message: err.Error()}
}

// json records the command's JSON result, printed with its output.
func (c *call) json(v map[string]any) {
	if c.s.opts.JSON {
		c.out.WriteString(jsonLine(v))
	}
}

// text reports whether the command prints zkCli's text.
func (c *call) text() bool { return !c.s.opts.JSON }

// flush writes a command's buffered text, in the order it was written.
func (s *Shell) flush(c *call) {
	for _, t := range c.parts {
		if t.toErr {
			s.writeErr(t.text.String())
		} else {
			s.writeOut(t.text.String())
		}
	}
}

func (s *Shell) writeOut(text string) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	_, _ = io.WriteString(s.opts.Out, text)
}

func (s *Shell) writeErr(text string) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	_, _ = io.WriteString(s.opts.Err, text)
}

// writeJSON prints v as one line of JSON on Out.
func (s *Shell) writeJSON(v any) {
	s.writeOut(jsonLine(v))
}

// jsonLine returns v as one line of JSON.
func jsonLine(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"error": err.Error(), "code": "ERROR"})
	}
	return string(b) + "\n"
}

// emitJSON prints v in JSON mode only.
func (s *Shell) emitJSON(v map[string]any) {
	if s.opts.JSON {
		s.writeJSON(v)
	}
}

// printer prints watch events and session state changes as zkCli's
// watcher does. One printer serves every watch of a session, so that, as
// with zkCli's single watcher, an event is printed once however many watches
// it fires.
type printer struct{ s *Shell }

// Process prints e unless printwatches is off.
func (p *printer) Process(e zk.Event) {
	s := p.s
	if !s.printWatches.Load() || s.closing.Load() {
		return
	}
	if s.opts.JSON {
		ev := map[string]any{"type": e.Type.String(), "state": e.State.String()}
		if e.Path != "" {
			ev["path"] = e.Path
		}
		s.writeJSON(map[string]any{"event": ev})
		return
	}
	path := e.Path
	if e.Type == zk.EventNone && path == "" {
		path = "null"
	}
	s.writeOut(fmt.Sprintf("\nWATCHER::\n\nWatchedEvent state:%s type:%s path:%s\n", e.State, e.Type, path))
}
