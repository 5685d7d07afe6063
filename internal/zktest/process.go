package zktest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	// DefaultStartTimeout bounds the wait for a started server to answer
	// "ruok" with "imok".
	DefaultStartTimeout = 60 * time.Second
	// stopGrace is how long Stop waits after SIGTERM before SIGKILL.
	stopGrace = 10 * time.Second
	// readyPoll is the interval between "ruok" probes while starting.
	readyPoll = 50 * time.Millisecond
	// logTailBytes is how much of the log a failure message quotes.
	logTailBytes = 4096
)

// Process is a server started by [StartZooKeeper] or [StartPaddock]. Its
// methods are safe for concurrent use.
type Process struct {
	// Addr is the client address, "127.0.0.1:<Port>".
	Addr string
	// Port is the client port on 127.0.0.1.
	Port int
	// DataDir is the server's data directory (dataDir in the zoo.cfg).
	DataDir string
	// ConfigPath is the zoo.cfg the server was started with.
	ConfigPath string
	// LogPath is the file that receives the server's stdout and stderr
	// (and, for Apache ZooKeeper, its log4j output); restarts append to it.
	LogPath string

	name         string   // "zookeeper" or "paddock", for messages
	argv         []string // program and arguments
	startTimeout time.Duration

	mu  sync.Mutex
	run *run // the current or last incarnation; nil before the first start
}

// run is one incarnation of the process.
type run struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once cmd.Wait has returned
	err  error         // cmd.Wait's result, valid once done is closed
}

// newProcess starts p.argv, waits until the server is ready (see probe), and
// registers a cleanup that stops it.
func newProcess(t testing.TB, p *Process) *Process {
	t.Helper()
	if p.startTimeout <= 0 {
		p.startTimeout = DefaultStartTimeout
	}
	t.Cleanup(func() {
		p.Resume() // a stopped process would ignore SIGTERM
		if err := p.Stop(); err != nil {
			t.Errorf("zktest: cleanup: %v", err)
		}
	})
	for attempt := 1; ; attempt++ {
		if err := p.start(); err != nil {
			t.Fatal(err)
		}
		err := p.waitReady()
		if err == nil {
			return p
		}
		_ = p.Kill()
		if attempt == startAttempts || !portTaken(err) {
			t.Fatal(err)
		}
		port, perr := freePort()
		if perr == nil {
			perr = p.moveClientPort(port)
		}
		if perr != nil {
			t.Fatalf("%v\n(and moving to another port: %v)", err, perr)
		}
		t.Logf("zktest: the port picked for %s was taken before it bound it; starting it again on %s", p.name, p.Addr)
	}
}

// moveClientPort rewrites the clientPort line of p's zoo.cfg to port, for
// a start again after the port picked first was taken.
func (p *Process) moveClientPort(port int) error {
	b, err := os.ReadFile(p.ConfigPath)
	if err != nil {
		return fmt.Errorf("zktest: read %s: %w", p.ConfigPath, err)
	}
	old := "clientPort=" + strconv.Itoa(p.Port) + "\n"
	if !strings.Contains(string(b), old) {
		return fmt.Errorf("zktest: %s has no line %q", p.ConfigPath, strings.TrimSpace(old))
	}
	b = []byte(strings.Replace(string(b), old, "clientPort="+strconv.Itoa(port)+"\n", 1))
	if err := os.WriteFile(p.ConfigPath, b, 0o644); err != nil {
		return fmt.Errorf("zktest: write %s: %w", p.ConfigPath, err)
	}
	p.Port, p.Addr = port, "127.0.0.1:"+strconv.Itoa(port)
	return nil
}

// start launches a new incarnation. The caller makes sure none is running.
func (p *Process) start() error {
	logFile, err := os.OpenFile(p.LogPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("zktest: start %s: open log: %w", p.name, err)
	}
	defer logFile.Close() // the child keeps its own descriptor
	fmt.Fprintf(logFile, "=== zktest: starting %s\n", strings.Join(p.argv, " "))

	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("zktest: start %s (%s): %w", p.name, p.argv[0], err)
	}
	r := &run{cmd: cmd, done: make(chan struct{})}
	go func() {
		r.err = cmd.Wait()
		close(r.done)
	}()
	p.mu.Lock()
	p.run = r
	p.mu.Unlock()
	return nil
}

// current returns the current incarnation, or nil.
func (p *Process) current() *run {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.run
}

// waitReady polls the server until it is ready (see probe), the process
// exits, or the start timeout passes.
func (p *Process) waitReady() error {
	r := p.current()
	deadline := time.NewTimer(p.startTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	var last error
	for {
		err := probe(p.Addr, p.configuredDataDir())
		if err == nil {
			select {
			case <-r.done: // someone else answered on our port
				return fmt.Errorf("zktest: %s on %s exited (%v) although the port answers ruok; log %s ends:\n%s",
					p.name, p.Addr, r.err, p.LogPath, p.LogTail())
			default:
				return nil
			}
		}
		last = err
		select {
		case <-r.done:
			return fmt.Errorf("zktest: %s on %s exited before answering ruok (%v); log %s ends:\n%s",
				p.name, p.Addr, r.err, p.LogPath, p.LogTail())
		case <-deadline.C:
			p.killRun(r)
			return fmt.Errorf("zktest: %s on %s did not answer ruok with imok within %v (last: %v); log %s ends:\n%s",
				p.name, p.Addr, p.startTimeout, last, p.LogPath, p.LogTail())
		case <-tick.C:
		}
	}
}

// configuredDataDir returns the data directory p's zoo.cfg gives the
// server: its last dataDir line (ExtraConfig lines come after the
// defaults and override them), else p.DataDir.
func (p *Process) configuredDataDir() string {
	dir := p.DataDir
	b, err := os.ReadFile(p.ConfigPath)
	if err != nil {
		return dir
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "dataDir="); ok {
			dir = strings.TrimSpace(v)
		}
	}
	return dir
}

// notServing is what Apache ZooKeeper answers four-letter words other than
// ruok with until it has loaded its database.
const notServing = "not currently serving requests"

// probe reports whether the server at addr is ready: "ruok" answers "imok"
// and "srvr" does not say the server is still starting. (Apache ZooKeeper
// answers ruok as soon as its port is open, before it serves requests.) It
// also checks that the server is the one with data directory dataDir, when
// "conf" tells: another server may have taken the port picked for ours,
// which then fails to bind it, and that one's answers are not our server's.
func probe(addr, dataDir string) error {
	out, err := FourLetterWord(addr, "ruok")
	if err != nil {
		return err
	}
	if strings.TrimSpace(out) != "imok" {
		return fmt.Errorf("ruok answered %q", out)
	}
	out, err = FourLetterWord(addr, "srvr")
	if err != nil {
		return err
	}
	if strings.Contains(out, notServing) {
		return fmt.Errorf("srvr answered %q", out)
	}
	out, err = FourLetterWord(addr, "conf")
	if err != nil {
		return err
	}
	return sameDataDir(out, dataDir)
}

// sameDataDir checks that conf's answer out names dataDir as the server's
// data directory (Apache ZooKeeper's names its version-2 subdirectory). An
// answer without a dataDir line (conf not whitelisted) proves nothing
// either way and passes.
func sameDataDir(out, dataDir string) error {
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	for line := range strings.SplitSeq(out, "\n") {
		got, ok := strings.CutPrefix(strings.TrimSpace(line), "dataDir=")
		if !ok {
			continue
		}
		if got == dataDir || strings.HasPrefix(got, dataDir+string(filepath.Separator)) {
			return nil
		}
		return fmt.Errorf("the server answering is another one: conf says dataDir=%s, ours is %s", got, dataDir)
	}
	return nil
}

// Pid returns the process id of the running server, or 0 if it is not
// running.
func (p *Process) Pid() int {
	r := p.current()
	if r == nil {
		return 0
	}
	select {
	case <-r.done:
		return 0
	default:
		return r.cmd.Process.Pid
	}
}

// Kill sends SIGKILL to the server and waits for it to exit. Killing a
// server that is not running does nothing.
func (p *Process) Kill() error {
	r := p.current()
	if r == nil {
		return nil
	}
	return p.killRun(r)
}

func (p *Process) killRun(r *run) error {
	if err := signal(r, syscall.SIGKILL); err != nil {
		return fmt.Errorf("zktest: kill %s pid %d: %w", p.name, r.cmd.Process.Pid, err)
	}
	<-r.done
	return nil
}

// Stop sends SIGTERM to the server, waits for it to exit, and sends SIGKILL
// if it is still running after a grace period. Stopping a server that is not
// running does nothing.
func (p *Process) Stop() error {
	r := p.current()
	if r == nil {
		return nil
	}
	if err := signal(r, syscall.SIGTERM); err != nil {
		return fmt.Errorf("zktest: stop %s pid %d: %w", p.name, r.cmd.Process.Pid, err)
	}
	grace := time.NewTimer(stopGrace)
	defer grace.Stop()
	select {
	case <-r.done:
		return nil
	case <-grace.C:
	}
	if err := p.killRun(r); err != nil {
		return err
	}
	return fmt.Errorf("zktest: stop %s pid %d: still running %v after SIGTERM, killed", p.name, r.cmd.Process.Pid, stopGrace)
}

// signal sends sig to the incarnation unless it has already exited.
func signal(r *run, sig syscall.Signal) error {
	select {
	case <-r.done:
		return nil
	default:
	}
	err := r.cmd.Process.Signal(sig)
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

// Restart stops the server if it is running (SIGTERM) and starts it again
// with the same configuration, port and data directory, waiting until it
// answers "ruok". It fails t if the server does not come back.
func (p *Process) Restart(t testing.TB) {
	t.Helper()
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := p.start(); err != nil {
		t.Fatal(err)
	}
	if err := p.waitReady(); err != nil {
		t.Fatal(err)
	}
}

// LogTail returns the last few kilobytes of the server's log.
func (p *Process) LogTail() string {
	f, err := os.Open(p.LogPath)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > logTailBytes {
		if _, err := f.Seek(-logTailBytes, io.SeekEnd); err != nil {
			return fmt.Sprintf("(cannot read log: %v)", err)
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, logTailBytes))
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 && len(b) == logTailBytes {
		b = b[i+1:] // drop the partial first line
	}
	return string(b)
}

// writeConfig writes zoo.cfg lines to path.
func writeConfig(path string, lines []string) error {
	data := strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		return fmt.Errorf("zktest: write config: %w", err)
	}
	return nil
}
