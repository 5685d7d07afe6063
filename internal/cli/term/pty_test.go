package term_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/paddockhq/paddock/internal/cli/term"
)

// The pty tests run term.Run in a child process, this test binary started
// again with childEnv set, because liner only works on the process's own
// standard input and output. The child's stdio is the tty side of a
// pseudo-terminal; the test types into the master side and reads what the
// terminal shows.
const (
	childEnv        = "PADDOCK_TERM_TEST_CHILD"
	childHistoryEnv = "PADDOCK_TERM_TEST_HISTORY"
	childTimeoutEnv = "PADDOCK_TERM_TEST_COMPLETE_TIMEOUT"
)

// waitFor bounds every wait on the terminal.
const waitFor = 20 * time.Second

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(childMain())
	}
	os.Exit(m.Run())
}

// childMain runs term.Run on a fakeShell. SIGUSR1 makes the shell print a
// watch event asynchronously, as a real watch would; SIGTERM cancels Run's
// context.
func childMain() int {
	con := term.NewConsole(os.Stdout)
	sh := &fakeShell{out: con.Writer(os.Stdout)}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	go func() {
		for range usr1 {
			fmt.Fprint(sh.out, "WATCHER::\n\nWatchedEvent state:SyncConnected type:NodeDataChanged path:/foo\n")
		}
	}()
	timeout, _ := time.ParseDuration(os.Getenv(childTimeoutEnv))
	err := term.Run(ctx, sh, term.Options{
		HistoryFile:     os.Getenv(childHistoryEnv),
		CompleteTimeout: timeout,
		Console:         con,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "run:", err)
		return 1
	}
	fmt.Println("run: ended")
	return 0
}

// fakeTree is the znode tree the fake shell completes from.
var fakeTree = map[string][]string{
	"/":          {"bar", "foo", "zookeeper"},
	"/foo":       {"baz", "qux"},
	"/foo/baz":   {},
	"/foo/qux":   {},
	"/bar":       {},
	"/zookeeper": {"config", "quota"},
}

// fakeShell records each line it executes as `exec: "line"`.
type fakeShell struct {
	out  io.Writer
	mu   sync.Mutex
	n    int
	done bool
}

func (s *fakeShell) Exec(ctx context.Context, line string) error {
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
	fmt.Fprintf(s.out, "exec: %q\n", line)
	switch strings.TrimSpace(line) {
	case "block":
		fmt.Fprintln(s.out, "block: started")
		<-ctx.Done()
		fmt.Fprintf(s.out, "block: %v\n", ctx.Err())
		return ctx.Err()
	case "quit":
		s.mu.Lock()
		s.done = true
		s.mu.Unlock()
	}
	return nil
}

func (s *fakeShell) Prompt() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("[fake %d] ", s.n)
}

func (s *fakeShell) Commands() []string {
	return []string{"close", "connect", "create", "delete", "deleteall", "get", "getAcl", "ls", "quit", "set", "stat"}
}

func (s *fakeShell) Children(ctx context.Context, path string) ([]string, error) {
	if path == "/slow" {
		select {} // ignores ctx: Run must bound the wait itself
	}
	names, ok := fakeTree[path]
	if !ok {
		return nil, errors.New("no node")
	}
	return names, nil
}

func (s *fakeShell) Done() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// terminal is a process running on a pseudo-terminal.
type terminal struct {
	t      *testing.T
	cmd    *exec.Cmd
	master *os.File
	exited chan struct{} // closed when cmd.Wait returns
	err    error         // of cmd.Wait, once exited is closed

	mu      sync.Mutex
	out     []byte
	seen    int           // out[:seen] has been matched by expect
	changed chan struct{} // closed and replaced when out grows
}

// startTerminal starts cmd with a 50x200 pseudo-terminal as its stdio.
func startTerminal(t *testing.T, cmd *exec.Cmd) *terminal {
	t.Helper()
	cmd.Env = append(cmd.Environ(), "TERM=xterm")
	master, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 200})
	if err != nil {
		t.Fatalf("start %s on a pty: %v", cmd.Path, err)
	}
	tm := &terminal{t: t, cmd: cmd, master: master, exited: make(chan struct{}), changed: make(chan struct{})}
	go func() {
		tm.err = cmd.Wait()
		close(tm.exited)
	}()
	go tm.read()
	t.Cleanup(func() {
		select {
		case <-tm.exited:
		default:
			cmd.Process.Kill() // by PID
			<-tm.exited
		}
		master.Close()
		if t.Failed() {
			t.Logf("terminal output:\n%s", tm.output())
		}
	})
	return tm
}

func (tm *terminal) read() {
	buf := make([]byte, 4096)
	for {
		n, err := tm.master.Read(buf)
		tm.mu.Lock()
		tm.out = append(tm.out, buf[:n]...)
		close(tm.changed)
		tm.changed = make(chan struct{})
		tm.mu.Unlock()
		if err != nil {
			return // EIO once the child has closed the tty
		}
	}
}

func (tm *terminal) output() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return string(tm.out)
}

// send types s.
func (tm *terminal) send(s string) {
	tm.t.Helper()
	if _, err := tm.master.Write([]byte(s)); err != nil {
		tm.t.Fatalf("type %q: %v", s, err)
	}
}

// expect waits until want appears in the output after the previous match,
// and returns the output up to and including it.
func (tm *terminal) expect(want string) string {
	tm.t.Helper()
	deadline := time.After(waitFor)
	for {
		tm.mu.Lock()
		rest := tm.out[tm.seen:]
		if i := bytes.Index(rest, []byte(want)); i >= 0 {
			got := string(rest[:i+len(want)])
			tm.seen += i + len(want)
			tm.mu.Unlock()
			return got
		}
		changed := tm.changed
		tm.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			tm.t.Fatalf("%q did not appear within %v; output after the last match:\n%q", want, waitFor, tm.output()[tm.seen:])
		}
	}
}

// wait waits for the process to exit and returns its exit code.
func (tm *terminal) wait() int {
	tm.t.Helper()
	select {
	case <-tm.exited:
	case <-time.After(waitFor):
		tm.t.Fatalf("process did not exit within %v", waitFor)
	}
	var exit *exec.ExitError
	if errors.As(tm.err, &exit) {
		return exit.ExitCode()
	}
	if tm.err != nil {
		tm.t.Fatalf("wait: %v", tm.err)
	}
	return 0
}

// startChild runs the fake shell in this test binary on a pty.
func startChild(t *testing.T, historyFile string, completeTimeout time.Duration) *terminal {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", childHistoryEnv+"="+historyFile,
		childTimeoutEnv+"="+completeTimeout.String(),
		// Under -race a process otherwise sleeps 1 s before exiting.
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	return startTerminal(t, cmd)
}

const (
	keyUp    = "\x1b[A"
	keyDown  = "\x1b[B"
	keyLeft  = "\x1b[D"
	keyCtrlC = "\x03"
	keyCtrlD = "\x04"
)

func TestCompletionOnTerminal(t *testing.T) {
	tm := startChild(t, "", 300*time.Millisecond)
	steps := []struct {
		name, typed, exec string
	}{
		{"command", "cre\t\r", "create "},
		{"root child", "ls /fo\t\r", "ls /foo"},
		{"nested child", "get -s /foo/b\t\r", "get -s /foo/baz"},
		{"common prefix", "stat /zookeeper/\t\r", "stat /zookeeper/"},
		{"flags left alone", "ls -\t\r", "ls -"},
		{"unknown parent", "ls /nope/x\t\r", "ls /nope/x"},
		{"slow listing gives up", "ls /slow/\t\r", "ls /slow/"},
		{"middle of line", "get /b -s" + keyLeft + keyLeft + keyLeft + "\t\r", "get /bar -s"},
	}
	for i, s := range steps {
		tm.expect(fmt.Sprintf("[fake %d] ", i))
		tm.send(s.typed)
		tm.expect(fmt.Sprintf("exec: %q", s.exec))
	}
	tm.expect("[fake 8] ")
	tm.send(keyCtrlD)
	tm.expect("run: ended")
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit status %d after Ctrl-D, want 0", code)
	}
	assertCookedMode(t, tm.master)
}

func TestCompletionListsCandidates(t *testing.T) {
	tm := startChild(t, "", time.Second)
	tm.expect("[fake 0] ")
	// Two candidates: the first Tab inserts the common prefix "/foo/", the
	// second lists both, then the line is still editable.
	tm.send("ls /foo/\t\t")
	list := tm.expect("qux")
	if !strings.Contains(list, "/foo/baz") {
		t.Errorf("candidate list %q lacks /foo/baz", list)
	}
	tm.send("q\t\r")
	tm.expect(`exec: "ls /foo/qux"`)
	tm.expect("[fake 1] ")
	tm.send("quit\r")
	tm.expect("run: ended")
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit status %d after quit, want 0", code)
	}
}

func TestHistoryOnTerminal(t *testing.T) {
	file := t.TempDir() + "/history"

	tm := startChild(t, file, time.Second)
	tm.expect("[fake 0] ")
	tm.send("create /a data\r")
	tm.expect(`exec: "create /a data"`)
	tm.expect("[fake 1] ")
	tm.send("get /a\r")
	tm.expect(`exec: "get /a"`)
	tm.expect("[fake 2] ")
	tm.send("   \r") // blank: neither executed nor recorded
	tm.expect("[fake 2] ")
	tm.send("set /a abandoned")
	tm.expect("abandoned")
	tm.send(keyCtrlC) // abandons the line
	tm.expect("^C")
	tm.expect("[fake 2] ")
	tm.send(keyUp + "\r") // recalls "get /a"
	tm.expect(`exec: "get /a"`)
	tm.expect("[fake 3] ")
	tm.send(keyUp + keyUp + keyUp + keyDown + "\r") // create, create (top), get: down from the top
	tm.expect(`exec: "get /a"`)
	tm.expect("[fake 4] ")
	tm.send("cr" + keyUp + "\r") // up filters by what was typed
	tm.expect(`exec: "create /a data"`)
	tm.expect("[fake 5] ")
	tm.send(keyCtrlD)
	tm.expect("run: ended")
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit status %d after Ctrl-D, want 0", code)
	}
	out := tm.output()
	for _, never := range []string{`exec: "   "`, `exec: "set /a abandoned"`} {
		if strings.Contains(out, never) {
			t.Errorf("output has %s", never)
		}
	}

	info, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("history file mode %v, want 0600", perm)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := "create /a data\nget /a\ncreate /a data\n"
	if string(data) != want {
		t.Errorf("history file = %q, want %q", data, want)
	}

	// A second session starts with the saved history.
	tm = startChild(t, file, time.Second)
	tm.expect("[fake 0] ")
	tm.send(keyUp + keyUp + "\r")
	tm.expect(`exec: "get /a"`)
	tm.expect("[fake 1] ")
	tm.send("quit\r")
	tm.expect(`exec: "quit"`)
	tm.expect("run: ended")
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit status %d after quit, want 0", code)
	}
	data, err = os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want = "create /a data\nget /a\ncreate /a data\nget /a\nquit\n"
	if string(data) != want {
		t.Errorf("history file after the second session = %q, want %q", data, want)
	}
}

func TestInterruptCancelsCommand(t *testing.T) {
	tm := startChild(t, "", time.Second)
	tm.expect("[fake 0] ")
	tm.send("block\r")
	tm.expect("block: started")
	tm.send(keyCtrlC) // SIGINT while the command runs: cancels it, not the shell
	tm.expect("block: context canceled")
	tm.expect("[fake 1] ")
	tm.send("ls /\r")
	tm.expect(`exec: "ls /"`)
	tm.expect("[fake 2] ")
	tm.send(keyCtrlD)
	tm.expect("run: ended")
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit status %d after Ctrl-D, want 0", code)
	}
}

func TestAsyncOutputKeepsPrompt(t *testing.T) {
	tm := startChild(t, "", time.Second)
	tm.expect("[fake 0] ")
	tm.send("get /fo")
	tm.expect("get /fo")
	// A watch event arrives while the line is being edited.
	if err := tm.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	// The prompt line is cleared, the event printed on lines of its own and
	// the prompt drawn again after it.
	tm.expect("\r\x1b[KWATCHER::\r\n\r\nWatchedEvent state:SyncConnected type:NodeDataChanged path:/foo\r\n[fake 0] ")
	// The typed text survived: completing and entering it runs the full line.
	tm.send("\t\r")
	tm.expect(`exec: "get /foo"`)
	tm.expect("[fake 1] ")
	tm.send(keyCtrlD)
	tm.expect("run: ended")
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit status %d after Ctrl-D, want 0", code)
	}
}

func TestCancelRestoresTerminal(t *testing.T) {
	tm := startChild(t, "", time.Second)
	tm.expect("[fake 0] ")
	tm.send("ls /")
	tm.expect("ls /")
	if err := tm.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	tm.expect("run: context canceled")
	if code := tm.wait(); code != 1 {
		t.Fatalf("exit status %d after cancel, want 1", code)
	}
	if strings.Contains(tm.output(), `exec: "ls /"`) {
		t.Error("the unfinished line was executed")
	}
	assertCookedMode(t, tm.master)
}
