package zktest

import (
	"errors"
	"fmt"
	"io/fs"
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

// paddockBuild is the one build of ./cmd/paddock per test binary.
var paddockBuild struct {
	once sync.Once
	path string
	err  error
}

// BuildPaddock builds ./cmd/paddock of the module containing the current
// directory, once per test binary, into a temporary directory shared by the
// whole process, and returns the binary's path. It fails t if the build
// fails. The directory outlives the test binary; the next BuildPaddock
// removes the directories of test binaries that have exited.
func BuildPaddock(t testing.TB) string {
	t.Helper()
	paddockBuild.once.Do(func() {
		paddockBuild.path, paddockBuild.err = buildPaddock()
	})
	if paddockBuild.err != nil {
		t.Fatal(paddockBuild.err)
	}
	return paddockBuild.path
}

func buildPaddock() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("zktest: build paddock: %w", err)
	}
	root, err := ModuleRoot(wd)
	if err != nil {
		return "", fmt.Errorf("zktest: build paddock: %w", err)
	}
	goCmd, err := goTool()
	if err != nil {
		return "", err
	}
	dir, err := buildDir()
	if err != nil {
		return "", fmt.Errorf("zktest: build paddock: %w", err)
	}
	bin := filepath.Join(dir, "paddock")
	cmd := exec.Command(goCmd, "build", "-o", bin, "./cmd/paddock")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("zktest: go build ./cmd/paddock in %s: %w\n%s", root, err, out)
	}
	return bin, nil
}

// buildDirPrefix starts the name of every build directory; the test
// binary's pid follows, so that later runs can remove the directories of
// binaries that have exited.
const buildDirPrefix = "zktest-paddock-"

// buildDir creates this process's build directory after removing those left
// behind by test binaries that have exited.
func buildDir() (string, error) {
	tmp := os.TempDir()
	removeStaleBuildDirs(tmp)
	return os.MkdirTemp(tmp, buildDirPrefix+strconv.Itoa(os.Getpid())+"-")
}

// removeStaleBuildDirs removes, best effort, the build directories in tmp
// whose owning process no longer exists.
func removeStaleBuildDirs(tmp string) {
	matches, err := filepath.Glob(filepath.Join(tmp, buildDirPrefix+"*"))
	if err != nil {
		return
	}
	for _, m := range matches {
		pidStr, _, ok := strings.Cut(strings.TrimPrefix(filepath.Base(m), buildDirPrefix), "-")
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid <= 0 || pid == os.Getpid() || processExists(pid) {
			continue
		}
		os.RemoveAll(m)
	}
}

// processExists reports whether a process with this pid exists.
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// goTool returns the go command on PATH.
func goTool() (string, error) {
	p, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("zktest: build paddock: no go command on PATH: %w", err)
	}
	return p, nil
}

// maxModuleDepth bounds the walk up to go.mod.
const maxModuleDepth = 64

// ModuleRoot returns the nearest directory at or above dir that holds a
// go.mod file.
func ModuleRoot(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("zktest: module root of %s: %w", dir, err)
	}
	for range maxModuleDepth {
		_, err := os.Stat(filepath.Join(d, "go.mod"))
		if err == nil {
			return d, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("zktest: module root of %s: %w", dir, err)
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return "", fmt.Errorf("zktest: module root of %s: no go.mod found in it or above", dir)
}

// PaddockOptions configures StartPaddock. The zero value is usable.
type PaddockOptions struct {
	// Binary is the paddock executable; "" means BuildPaddock(t).
	Binary string
	// DataDir is the data directory; "" means a new directory under
	// t.TempDir().
	DataDir string
	// TickTime is zoo.cfg's tickTime in milliseconds; 0 means
	// DefaultTickTime.
	TickTime int
	// ExtraConfig holds additional zoo.cfg lines ("key=value"), written
	// after the defaults so that they override them.
	ExtraConfig []string
	// ExtraArgs are appended to "paddock server --config <zoo.cfg>".
	ExtraArgs []string
	// StartTimeout bounds the wait for "imok"; 0 means
	// DefaultStartTimeout.
	StartTimeout time.Duration

	// firstPort is the client port to try first; 0 picks a free one.
	// Tests set it (export_test.go).
	firstPort int
}

// StartPaddock writes a zoo.cfg (a free client port on 127.0.0.1, all
// four-letter words, extended types, the super digest [SuperDigest]), runs
// "paddock server --config <zoo.cfg>", waits until it answers "ruok" with
// "imok", and registers a cleanup that stops it.
func StartPaddock(t testing.TB, opts PaddockOptions) *Process {
	t.Helper()
	bin := opts.Binary
	if bin == "" {
		bin = BuildPaddock(t)
	}
	dir := t.TempDir()
	dataDir := opts.DataDir
	if dataDir == "" {
		dataDir = filepath.Join(dir, "data")
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		t.Fatalf("zktest: create Paddock data dir: %v", err)
	}
	tick := opts.TickTime
	if tick == 0 {
		tick = DefaultTickTime
	}
	port := opts.firstPort
	if port == 0 {
		port = FreePort(t)
	}
	p := &Process{
		Addr:         "127.0.0.1:" + strconv.Itoa(port),
		Port:         port,
		DataDir:      dataDir,
		ConfigPath:   filepath.Join(dir, "zoo.cfg"),
		LogPath:      filepath.Join(dir, "paddock.log"),
		name:         "paddock",
		startTimeout: opts.StartTimeout,
	}
	cfg := append([]string{
		"tickTime=" + strconv.Itoa(tick),
		"dataDir=" + dataDir,
		"clientPort=" + strconv.Itoa(port),
		"clientPortAddress=127.0.0.1",
		"4lw.commands.whitelist=*",
		"extendedTypesEnabled=true",
		"DigestAuthenticationProvider.superDigest=" + SuperDigest,
		"admin.enableServer=false",
	}, opts.ExtraConfig...)
	if err := writeConfig(p.ConfigPath, cfg); err != nil {
		t.Fatal(err)
	}
	p.argv = append([]string{bin, "server", "--config", p.ConfigPath}, opts.ExtraArgs...)
	return newProcess(t, p)
}
