package zktest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// SuperDigest is the value both servers get for
// DigestAuthenticationProvider.superDigest: user "super", password "test"
// (the digest kazoo's test harness uses).
const SuperDigest = "super:D/InIHSb7yEEbrWz8b9l71RjZJU="

// DefaultTickTime is the tickTime, in milliseconds, used when the options
// give none.
const DefaultTickTime = 2000

// zooKeeperMain is the class zkServer.sh runs.
const zooKeeperMain = "org.apache.zookeeper.server.quorum.QuorumPeerMain"

// DefaultZKClasspath returns the classpath StartZooKeeper uses when
// ZKOptions.Classpath is empty: the server jar as Debian's zkEnv.sh names it
// (its manifest lists the other jars under /usr/share/java), plus the slf4j
// binding and log4j so the server log reaches the log file.
func DefaultZKClasspath() []string {
	return []string{
		"/usr/share/java/zookeeper.jar",
		"/usr/share/java/slf4j-log4j12.jar",
		"/usr/share/java/log4j-1.2.jar",
	}
}

// jvmFlags returns the JVM options StartZooKeeper begins with: by default
// ones that keep the JVM small and quick to start; for production, only the
// JVM's own defaults (full JIT, default GC and heap).
func jvmFlags(production bool) []string {
	common := []string{"-Djava.awt.headless=true", "-Dfile.encoding=UTF-8"}
	if production {
		return common
	}
	return append([]string{
		"-Xmx256m",
		"-XX:+UseSerialGC",
		"-XX:TieredStopAtLevel=1",
		"-XX:-UsePerfData",
	}, common...)
}

// ZKOptions configures StartZooKeeper. The zero value is usable.
type ZKOptions struct {
	// TickTime is zoo.cfg's tickTime in milliseconds; 0 means
	// DefaultTickTime.
	TickTime int
	// ExtraConfig holds additional zoo.cfg lines ("key=value"), written
	// after the defaults so that they override them.
	ExtraConfig []string
	// JVMFlags holds additional JVM options, such as "-Dkey=value" system
	// properties, placed after the defaults.
	JVMFlags []string
	// ProductionJVM drops the quick-start JVM options (small heap, serial
	// GC, C1-only JIT) so that the server runs as it would in production;
	// for benchmarks.
	ProductionJVM bool
	// DataDir is the data directory; "" means a new directory under
	// t.TempDir().
	DataDir string
	// Java is the java launcher; "" means "java" on PATH, else
	// /usr/bin/java.
	Java string
	// Classpath overrides DefaultZKClasspath().
	Classpath []string
	// StartTimeout bounds the wait for "imok"; 0 means
	// DefaultStartTimeout.
	StartTimeout time.Duration
}

// StartZooKeeper starts a standalone Apache ZooKeeper (QuorumPeerMain with a
// zoo.cfg written into t.TempDir()) on a free 127.0.0.1 port, waits until it
// answers "ruok" with "imok", and registers a cleanup that stops it. The
// server has all four-letter words enabled, extended types on and the super
// digest [SuperDigest]; its AdminServer is off.
func StartZooKeeper(t testing.TB, opts ZKOptions) *Process {
	t.Helper()
	java, classpath := zooKeeperRuntime(t, opts.Java, opts.Classpath)

	dir := t.TempDir()
	dataDir := opts.DataDir
	if dataDir == "" {
		dataDir = filepath.Join(dir, "data")
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		t.Fatalf("zktest: create ZooKeeper data dir: %v", err)
	}
	tick := opts.TickTime
	if tick == 0 {
		tick = DefaultTickTime
	}
	port := FreePort(t)
	p := &Process{
		Addr:         "127.0.0.1:" + strconv.Itoa(port),
		Port:         port,
		DataDir:      dataDir,
		ConfigPath:   filepath.Join(dir, "zoo.cfg"),
		LogPath:      filepath.Join(dir, "zookeeper.log"),
		name:         "zookeeper",
		startTimeout: opts.StartTimeout,
	}
	cfg := append([]string{
		"tickTime=" + strconv.Itoa(tick),
		"initLimit=10",
		"syncLimit=5",
		"dataDir=" + dataDir,
		"clientPort=" + strconv.Itoa(port),
		"clientPortAddress=127.0.0.1",
		"4lw.commands.whitelist=*",
		"admin.enableServer=false",
	}, opts.ExtraConfig...)
	if err := writeConfig(p.ConfigPath, cfg); err != nil {
		t.Fatal(err)
	}
	log4j := filepath.Join(dir, "log4j.properties")
	if err := os.WriteFile(log4j, []byte(log4jConfig), 0o644); err != nil {
		t.Fatalf("zktest: write log4j config: %v", err)
	}

	argv := append([]string{java}, jvmFlags(opts.ProductionJVM)...)
	argv = append(argv,
		"-Dlog4j.configuration=file:"+log4j,
		"-Dzookeeper.jmx.log4j.disable=true",
		"-Dzookeeper.admin.enableServer=false",
		"-Dzookeeper.extendedTypesEnabled=true",
		"-Dzookeeper.DigestAuthenticationProvider.superDigest="+SuperDigest,
	)
	argv = append(argv, opts.JVMFlags...)
	argv = append(argv, "-cp", strings.Join(classpath, string(os.PathListSeparator)), zooKeeperMain, p.ConfigPath)
	p.argv = argv
	return newProcess(t, p)
}

// log4jConfig sends ZooKeeper's log to stdout, which goes to the log file.
const log4jConfig = `log4j.rootLogger=INFO, CONSOLE
log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} %-5p [%t:%C{1}@%L] - %m%n
`

// findJava returns the java launcher to use.
func findJava(java string) (string, error) {
	if java != "" {
		return java, nil
	}
	if path, err := exec.LookPath("java"); err == nil {
		return path, nil
	}
	if _, err := os.Stat("/usr/bin/java"); err != nil {
		return "", fmt.Errorf("zktest: no java on PATH or at /usr/bin/java: %w", err)
	}
	return "/usr/bin/java", nil
}

// zooKeeperRuntime returns the java launcher and the checked classpath that
// start Apache ZooKeeper (the defaults when java or classpath is empty), and
// fails t if either is missing.
func zooKeeperRuntime(t testing.TB, java string, classpath []string) (string, []string) {
	t.Helper()
	java, err := findJava(java)
	if err != nil {
		t.Fatal(err)
	}
	if len(classpath) == 0 {
		classpath = DefaultZKClasspath()
	}
	for _, jar := range classpath {
		if _, err := os.Stat(jar); err != nil {
			t.Fatalf("zktest: Apache ZooKeeper classpath entry: %v (install Debian's zookeeper package or set the options' Classpath)", err)
		}
	}
	return java, classpath
}
