package fourlw_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
)

const (
	// readyTimeout bounds the wait for a started server to answer srvr.
	readyTimeout = 60 * time.Second
	// readyPoll is the interval between srvr probes while starting.
	readyPoll = 50 * time.Millisecond
	// stopGrace is how long cleanup waits after SIGTERM before SIGKILL.
	stopGrace = 10 * time.Second
)

// plainServer is a server started with a zoo.cfg that does not set
// 4lw.commands.whitelist, so it has ZooKeeper's default whitelist: srvr
// only. zktest cannot start one (it waits for "imok", which such a server
// refuses), and an ExtraConfig line cannot remove zktest's
// "4lw.commands.whitelist=*"; so this package starts them itself and waits
// for srvr instead.
type plainServer struct {
	name       string
	addr       string
	port       int
	configPath string
	logPath    string
}

// startPlain writes a zoo.cfg (tickTime, dataDir, a free 127.0.0.1 port,
// the admin server off, then extra), starts argv(configPath) and waits until
// srvr reports a mode. A cleanup stops the process by PID.
func startPlain(t *testing.T, name string, extra []string, argv func(configPath string) []string) *plainServer {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatalf("%s: create data dir: %v", name, err)
	}
	port := zktest.FreePort(t)
	s := &plainServer{
		name:       name,
		addr:       "127.0.0.1:" + strconv.Itoa(port),
		port:       port,
		configPath: filepath.Join(dir, "zoo.cfg"),
		logPath:    filepath.Join(dir, name+".log"),
	}
	lines := append([]string{
		"tickTime=2000",
		"dataDir=" + data,
		"clientPort=" + strconv.Itoa(port),
		"clientPortAddress=127.0.0.1",
		"admin.enableServer=false",
	}, extra...)
	if err := os.WriteFile(s.configPath, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatalf("%s: write zoo.cfg: %v", name, err)
	}
	logFile, err := os.Create(s.logPath)
	if err != nil {
		t.Fatalf("%s: create log: %v", name, err)
	}
	defer logFile.Close() // the child keeps its own descriptor
	args := argv(s.configPath)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: start %s: %v", name, args[0], err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(stopGrace):
			cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	for {
		out, err := zktest.FourLetterWord(s.addr, "srvr")
		if err == nil && strings.Contains(out, "\nMode: ") {
			return s
		}
		select {
		case <-done:
			t.Fatalf("%s exited before answering srvr; log %s:\n%s", name, s.logPath, s.logTail())
		case <-deadline.C:
			t.Fatalf("%s did not answer srvr within %v (last: %q, %v); log %s:\n%s",
				name, readyTimeout, out, err, s.logPath, s.logTail())
		case <-tick.C:
		}
	}
}

// logTail returns the end of the server's log.
func (s *plainServer) logTail() string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	if len(b) > 4096 {
		b = b[len(b)-4096:]
	}
	return string(b)
}

// startPlainPaddock starts Paddock with the default whitelist, or the
// zoo.cfg lines in extra.
func startPlainPaddock(t *testing.T, extra ...string) *plainServer {
	t.Helper()
	bin := zktest.BuildPaddock(t)
	return startPlain(t, "paddock", extra, func(cfg string) []string {
		return []string{bin, "server", "--config", cfg}
	})
}

// startPlainZooKeeper starts Apache ZooKeeper with the default whitelist,
// or the zoo.cfg lines in extra, with the JVM options zktest uses for a
// quick start.
func startPlainZooKeeper(t *testing.T, extra ...string) *plainServer {
	t.Helper()
	java, err := exec.LookPath("java")
	if err != nil {
		java = "/usr/bin/java"
	}
	classpath := zktest.DefaultZKClasspath()
	for _, jar := range classpath {
		if _, err := os.Stat(jar); err != nil {
			t.Skipf("Apache ZooKeeper is not installed: %v", err)
		}
	}
	return startPlain(t, "zookeeper", append([]string{"initLimit=10", "syncLimit=5"}, extra...), func(cfg string) []string {
		return []string{java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
			"-Dzookeeper.admin.enableServer=false",
			"-cp", strings.Join(classpath, string(os.PathListSeparator)),
			"org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg}
	})
}
