package curator_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Limits of an interop scenario's Java side: the deadline it enforces on
// itself (then it prints its threads' stacks and exits 3), the backstop
// that kills it, and how long the Go side waits for one of its lines.
const (
	peerDeadline = 60 * time.Second
	peerTimeout  = peerDeadline + 15*time.Second
	lineTimeout  = 45 * time.Second
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// peer is the Java side of one interop scenario (the Interop program),
// which the Go side talks to in turns: send writes a line to its stdin,
// expect reads the next line of its stdout.
type peer struct {
	t        *testing.T
	scenario string
	stdin    io.WriteCloser
	lines    chan string // stdout, line by line; closed at its end
	stderr   syncBuffer
	exited   chan struct{} // closed when the process has exited
	err      error         // why it exited (nil: status 0); set before exited closes
	dialogue strings.Builder
}

// startPeer starts the Java side of scenario against addr; a cleanup kills
// it (its whole process group) if it is still running when the test ends.
func startPeer(t *testing.T, java, classes, addr, scenario string) *peer {
	t.Helper()
	p := &peer{t: t, scenario: scenario, lines: make(chan string, 64), exited: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
	args := []string{
		"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
		"-Djava.awt.headless=true", "-Dfile.encoding=UTF-8",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
		"-cp", classpathString(classes),
		"Interop", strconv.Itoa(int(peerDeadline / time.Second)), addr, scenario,
	}
	cmd := exec.CommandContext(ctx, java, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Stderr = &p.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	p.stdin = stdin
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start java: %v", err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		cancel() // kills the process group if it still runs
		<-p.exited
	})
	return p
}

// failf fails the test with what the Java side said and printed on stderr.
func (p *peer) failf(format string, args ...any) {
	p.t.Helper()
	p.t.Fatalf("%s: %s\n--- dialogue ---\n%s--- Java stderr ---\n%s",
		p.scenario, fmt.Sprintf(format, args...), p.dialogue.String(), p.stderr.String())
}

// send writes a line to the Java side.
func (p *peer) send(format string, args ...any) {
	p.t.Helper()
	line := fmt.Sprintf(format, args...)
	fmt.Fprintf(&p.dialogue, "go:      %s\n", line)
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.failf("write %q: %v", line, err)
	}
}

// next returns the Java side's next line, failing the test on a FAIL
// line, the end of its output or lineTimeout.
func (p *peer) next() string {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			<-p.exited
			p.failf("the Java side ended its output (%v)", p.err)
		}
		fmt.Fprintf(&p.dialogue, "curator: %s\n", line)
		if strings.HasPrefix(line, "FAIL") {
			p.failf("the Java side failed")
		}
		return line
	case <-time.After(lineTimeout):
		p.failf("no line from the Java side within %v", lineTimeout)
	}
	panic("unreachable")
}

// expect requires the Java side's next line to be want.
func (p *peer) expect(want string) {
	p.t.Helper()
	if got := p.next(); got != want {
		p.failf("got %q, want %q", got, want)
	}
}

// expectPrefix requires the Java side's next line to start with prefix
// and returns the rest.
func (p *peer) expectPrefix(prefix string) string {
	p.t.Helper()
	got := p.next()
	rest, ok := strings.CutPrefix(got, prefix)
	if !ok {
		p.failf("got %q, want a line starting %q", got, prefix)
	}
	return rest
}

// finish requires the Java side to print its PASS line and exit 0.
func (p *peer) finish() {
	p.t.Helper()
	p.expect("PASS " + p.scenario)
	select {
	case <-p.exited:
	case <-time.After(lineTimeout):
		p.failf("the Java side did not exit after PASS")
	}
	if p.err != nil {
		p.failf("the Java side exited: %v", p.err)
	}
	p.stdin.Close()
}
