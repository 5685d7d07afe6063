package curator_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/difftest"
	"github.com/paddockhq/paddock/internal/zktest"
)

// jar is a jar on the session's classpath and the Debian package that
// installs it.
type jar struct {
	path, pkg string
}

// classpath lists the jars the session compiles and runs with: Curator
// 5.4, the ZooKeeper 3.8 client and what they load. (The jars' manifests
// name most of these too; listing them makes a missing one fail here, by
// name, rather than as a NoClassDefFoundError mid-session.)
var classpath = []jar{
	{"/usr/share/java/curator-client.jar", "libcurator-client-java"},
	{"/usr/share/java/curator-framework.jar", "libcurator-framework-java"},
	{"/usr/share/java/curator-recipes.jar", "libcurator-recipes-java"},
	{"/usr/share/java/curator-x-discovery.jar", "libcurator-discovery-java"},
	{"/usr/share/java/zookeeper.jar", "libzookeeper-java"},
	{"/usr/share/java/zookeeper-jute.jar", "libzookeeper-java"},
	{"/usr/share/java/guava.jar", "libguava-java"},
	{"/usr/share/java/slf4j-api.jar", "libslf4j-java"},
	{"/usr/share/java/slf4j-simple.jar", "libslf4j-java"},
	{"/usr/share/java/jackson-databind.jar", "libjackson2-databind-java"},
	{"/usr/share/java/jackson-core.jar", "libjackson2-core-java"},
	{"/usr/share/java/jackson-annotations.jar", "libjackson2-annotations-java"},
}

// sessionDeadline is the limit the Java program enforces on itself (it
// then prints its threads' stacks and exits 3); runTimeout, a little
// longer, is the backstop that kills it.
const (
	sessionDeadline = 90 * time.Second
	runTimeout      = sessionDeadline + 15*time.Second
)

// target is a server the session runs against; start returns the
// addresses the session's clients connect to, in turn.
type target struct {
	name  string
	start func(t *testing.T) []string
}

func targets() []target {
	return []target{
		{"zookeeper", func(t *testing.T) []string {
			return []string{zktest.StartZooKeeper(t, zktest.ZKOptions{}).Addr}
		}},
		{"paddock", func(t *testing.T) []string {
			return []string{zktest.StartPaddock(t, zktest.PaddockOptions{}).Addr}
		}},
		{"paddock-ensemble", func(t *testing.T) []string {
			e := zktest.StartPaddockEnsemble(t, zktest.EnsembleOptions{})
			leader := e.Leader(t, 30*time.Second)
			t.Logf("leader is member %d (%s)", e.ID(leader), leader.Addr)
			return e.Addrs()
		}},
	}
}

// TestCurator runs the Curator session against each target in turn and
// requires it to pass everywhere and to print the same transcript against
// Paddock as against Apache ZooKeeper.
func TestCurator(t *testing.T) {
	if testing.Short() {
		t.Skip("the Curator session starts five servers and takes about a minute; skipped with -short")
	}
	java, javac := jdk(t)
	classes := compile(t, javac, "testdata")
	transcripts := map[string]string{}
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			addrs := tg.start(t)
			out, err := runSession(java, classes, addrs)
			transcripts[tg.name] = out.transcript
			if err != nil {
				t.Fatalf("Curator session against %s failed after %v: %v\n--- transcript ---\n%s\n--- stderr ---\n%s",
					strings.Join(addrs, ","), out.elapsed, err, out.transcript, out.stderr)
			}
			t.Logf("Curator session passed in %v; transcript:\n%s", out.elapsed, out.transcript)
		})
	}
	want, ok := transcripts["zookeeper"]
	if !ok {
		return // the reference did not run (-run selected other targets)
	}
	for _, name := range []string{"paddock", "paddock-ensemble"} {
		got, ok := transcripts[name]
		if !ok {
			continue
		}
		if d := difftest.UnifiedDiff("zookeeper", name, want, got); d != "" {
			t.Errorf("Curator transcripts differ between Apache ZooKeeper and %s:\n%s", name, d)
		}
	}
}

// jdk returns the java and javac launchers, failing t if either is
// missing.
func jdk(t *testing.T) (java, javac string) {
	t.Helper()
	for _, j := range classpath {
		if _, err := os.Stat(j.path); err != nil {
			t.Fatalf("the Curator session needs %s (Debian package %s): %v", j.path, j.pkg, err)
		}
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("the Curator session needs java (Debian package openjdk-17-jdk-headless): %v", err)
	}
	javac, err = exec.LookPath("javac")
	if err != nil {
		t.Fatalf("the Curator session needs javac (Debian package openjdk-17-jdk-headless): %v", err)
	}
	return java, javac
}

func classpathString(extra ...string) string {
	parts := append([]string{}, extra...)
	for _, j := range classpath {
		parts = append(parts, j.path)
	}
	return strings.Join(parts, string(os.PathListSeparator))
}

// sharedDir holds the Java helpers both programs use (Helpers.java);
// compile adds its files to each program's.
var sharedDir = filepath.Join("testdata", "shared")

// compile compiles the Java files of dir (testdata for TestCurator's
// program, testdata/interop for TestInterop's), with those of sharedDir,
// into a temporary directory and returns it.
func compile(t *testing.T, javac, dir string) string {
	t.Helper()
	var srcs []string
	for _, d := range []string{dir, sharedDir} {
		files, err := filepath.Glob(filepath.Join(d, "*.java"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Java sources in %s: %v", d, err)
		}
		srcs = append(srcs, files...)
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"-Xlint:all,-path", "-encoding", "UTF-8", "-d", out, "-cp", classpathString()}, srcs...)
	start := time.Now()
	if msg, err := exec.CommandContext(ctx, javac, args...).CombinedOutput(); err != nil {
		t.Fatalf("javac %s: %v\n%s", strings.Join(srcs, " "), err, msg)
	} else if len(msg) > 0 {
		t.Logf("javac:\n%s", msg)
	}
	t.Logf("compiled %d Java files in %v", len(srcs), time.Since(start).Round(time.Millisecond))
	return out
}

// result is what one run of the session printed.
type result struct {
	transcript, stderr string
	elapsed            time.Duration
}

// runSession runs the compiled session against addrs and returns its
// output; the error says why it did not exit 0.
func runSession(java, classes string, addrs []string) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	args := []string{
		"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
		"-Djava.awt.headless=true", "-Dfile.encoding=UTF-8",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
		"-Dorg.slf4j.simpleLogger.showDateTime=true",
		"-cp", classpathString(classes),
		"Session", strconv.Itoa(int(sessionDeadline / time.Second)),
	}
	cmd := exec.CommandContext(ctx, java, append(args, addrs...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{transcript: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start).Round(time.Millisecond)}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return r, fmt.Errorf("killed after %v", runTimeout)
	case err != nil:
		return r, err
	case !strings.HasPrefix(lastLine(r.transcript), "PASS "):
		return r, errors.New("exited 0 without its PASS line")
	}
	return r, nil
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}
