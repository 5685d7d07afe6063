package zktest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// EnsembleOptions configures StartPaddockEnsemble and
// StartZooKeeperEnsemble. The zero value is usable: three voting members.
type EnsembleOptions struct {
	// Members is the number of voting members; 0 means 3. (One member and
	// no observers makes a single server line, which Paddock runs
	// standalone.)
	Members int
	// Observers is the number of observers (non-voting members), which get
	// the server ids after the voting members'.
	Observers int
	// TickTime is zoo.cfg's tickTime in milliseconds; 0 means
	// DefaultTickTime.
	TickTime int
	// ExtraConfig holds additional zoo.cfg lines ("key=value") for every
	// member, written after the defaults so that they override them.
	ExtraConfig []string
	// StartTimeout bounds the wait for each member to serve; 0 means
	// DefaultStartTimeout.
	StartTimeout time.Duration

	// Binary is the paddock executable (StartPaddockEnsemble only); ""
	// means BuildPaddock(t).
	Binary string

	// JVMFlags, ProductionJVM, Java and Classpath are as in ZKOptions
	// (StartZooKeeperEnsemble only).
	JVMFlags      []string
	ProductionJVM bool
	Java          string
	Classpath     []string

	// pickPorts returns n distinct ports that look free; nil means
	// distinctFreePorts. Tests set it (export_test.go).
	pickPorts func(n int) ([]int, error)
}

// Ensemble is a replicated ensemble of server processes started by
// StartPaddockEnsemble or StartZooKeeperEnsemble. Its methods are safe for
// concurrent use.
type Ensemble struct {
	// Members are the servers; Members[i] has server id i+1 and the
	// observers come last. Each can be killed, stopped, paused and
	// restarted on its own (Process.Restart waits until the member serves,
	// so the rest of a quorum must be running).
	Members []*Process
	// PeerPorts[i] is Members[i]'s quorum port (server.N's first port,
	// which carries Paddock's raft traffic).
	PeerPorts []int

	voters int
}

// MemberStatus is what a member's srvr four-letter word says.
type MemberStatus struct {
	// Mode is "leader", "follower" or "observer".
	Mode string
	// Zxid is the last zxid the member has applied.
	Zxid int64
	// NodeCount is the number of znodes.
	NodeCount int
}

// Member modes as srvr prints them.
const (
	ModeLeader   = "leader"
	ModeFollower = "follower"
	ModeObserver = "observer"
)

// ensembleProbeTimeout bounds one srvr exchange while looking for the
// leader: a paused member accepts the connection but never answers.
const ensembleProbeTimeout = time.Second

// StartPaddockEnsemble starts opts.Members voting Paddock servers and
// opts.Observers observers on 127.0.0.1, each with its own zoo.cfg (the
// keys StartPaddock writes, plus one server.N line per member and
// peerType=observer for observers) and a myid file in its data directory.
// It returns once every member serves (srvr reports a Mode), and registers
// a cleanup that resumes paused members and stops them all.
func StartPaddockEnsemble(t testing.TB, opts EnsembleOptions) *Ensemble {
	t.Helper()
	bin := opts.Binary
	if bin == "" {
		bin = BuildPaddock(t)
	}
	return startEnsemble(t, opts, "paddock", func(p *Process, base []string) {
		cfg := append(base,
			"extendedTypesEnabled=true",
			"DigestAuthenticationProvider.superDigest="+SuperDigest,
		)
		if err := writeConfig(p.ConfigPath, append(cfg, opts.ExtraConfig...)); err != nil {
			t.Fatal(err)
		}
		p.argv = []string{bin, "server", "--config", p.ConfigPath}
	})
}

// StartZooKeeperEnsemble starts an Apache ZooKeeper 3.8 ensemble
// (QuorumPeerMain with server.N lines and a myid file per member) of
// opts.Members voting members and opts.Observers observers on 127.0.0.1,
// configured as StartZooKeeper configures a standalone server. It returns
// once every member serves, and registers a cleanup that stops them.
func StartZooKeeperEnsemble(t testing.TB, opts EnsembleOptions) *Ensemble {
	t.Helper()
	java, classpath := zooKeeperRuntime(t, opts.Java, opts.Classpath)
	return startEnsemble(t, opts, "zookeeper", func(p *Process, base []string) {
		if err := writeConfig(p.ConfigPath, append(base, opts.ExtraConfig...)); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Dir(p.ConfigPath)
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
		p.argv = append(argv, "-cp", strings.Join(classpath, string(os.PathListSeparator)), zooKeeperMain, p.ConfigPath)
	})
}

// startEnsemble lays out the members (directories, ports, myid, the common
// zoo.cfg lines), lets configure write each member's zoo.cfg and argv,
// starts every member and waits until all of them serve.
func startEnsemble(t testing.TB, opts EnsembleOptions, kind string, configure func(p *Process, base []string)) *Ensemble {
	t.Helper()
	voters := opts.Members
	if voters == 0 {
		voters = 3
	}
	if voters < 1 || opts.Observers < 0 {
		t.Fatalf("zktest: ensemble of %d members and %d observers", voters, opts.Observers)
	}
	n := voters + opts.Observers
	tick := opts.TickTime
	if tick == 0 {
		tick = DefaultTickTime
	}
	for attempt := 1; ; attempt++ {
		e := layOutEnsemble(t, voters, n, tick, kind, opts, configure)
		err := e.start(e.Members...)
		if err == nil {
			return e
		}
		_ = e.KillAll()
		if attempt == startAttempts || !portTaken(err) {
			t.Fatal(err)
		}
		t.Logf("zktest: a port picked for the %s ensemble was taken before its member bound it; starting it again on other ports", kind)
	}
}

// startAttempts is how many times startEnsemble lays out and starts an
// ensemble whose members could not bind the ports picked for them.
const startAttempts = 3

// portTaken reports whether a start failed because a port picked as free
// was taken meanwhile (by another test's server, or as the local port of
// some connection) before the member bound it: the member's log, which the
// error quotes, says so (Go's "bind: address already in use", Java's
// "java.net.BindException: Address already in use").
func portTaken(err error) bool {
	return strings.Contains(strings.ToLower(err.Error()), "address already in use")
}

// layOutEnsemble picks the members' ports, writes their directories, myid
// files and configurations, and registers the cleanups that stop them.
func layOutEnsemble(t testing.TB, voters, n, tick int, kind string, opts EnsembleOptions,
	configure func(p *Process, base []string)) *Ensemble {
	t.Helper()
	pick := opts.pickPorts
	if pick == nil {
		pick = distinctFreePorts
	}
	ports, err := pick(3 * n)
	if err != nil {
		t.Fatal(err)
	}
	e := &Ensemble{voters: voters, PeerPorts: make([]int, n)}
	var servers []string
	for i := range n {
		client, peer, election := ports[3*i], ports[3*i+1], ports[3*i+2]
		e.PeerPorts[i] = peer
		line := fmt.Sprintf("server.%d=127.0.0.1:%d:%d", i+1, peer, election)
		if i >= voters {
			line += ":observer"
		}
		servers = append(servers, line)
		dir := t.TempDir()
		e.Members = append(e.Members, &Process{
			Addr:         "127.0.0.1:" + strconv.Itoa(client),
			Port:         client,
			DataDir:      filepath.Join(dir, "data"),
			ConfigPath:   filepath.Join(dir, "zoo.cfg"),
			LogPath:      filepath.Join(dir, kind+".log"),
			name:         fmt.Sprintf("%s member %d", kind, i+1),
			startTimeout: opts.StartTimeout,
		})
	}
	for i, p := range e.Members {
		if err := os.MkdirAll(p.DataDir, 0o755); err != nil {
			t.Fatalf("zktest: create %s data dir: %v", p.name, err)
		}
		if err := os.WriteFile(filepath.Join(p.DataDir, "myid"), []byte(strconv.Itoa(i+1)+"\n"), 0o644); err != nil {
			t.Fatalf("zktest: write %s myid: %v", p.name, err)
		}
		base := []string{
			"tickTime=" + strconv.Itoa(tick),
			"initLimit=10",
			"syncLimit=5",
			"dataDir=" + p.DataDir,
			"clientPort=" + strconv.Itoa(p.Port),
			"clientPortAddress=127.0.0.1",
			"4lw.commands.whitelist=*",
			"admin.enableServer=false",
		}
		base = append(base, servers...)
		if i >= voters {
			base = append(base, "peerType=observer")
		}
		configure(p, base)
		if p.startTimeout <= 0 {
			p.startTimeout = DefaultStartTimeout
		}
	}
	for _, p := range e.Members {
		t.Cleanup(func() {
			p.Resume() // a stopped process would ignore SIGTERM
			if err := p.Stop(); err != nil {
				t.Errorf("zktest: cleanup: %v", err)
			}
		})
	}
	return e
}

// distinctFreePorts returns n distinct ports that were free a moment ago.
func distinctFreePorts(n int) ([]int, error) {
	seen := make(map[int]bool, n)
	out := make([]int, 0, n)
	for len(out) < n {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// Start starts the given members that are not running, then waits until
// every one of them serves (answers srvr with a Mode). Starting all members
// at once is how an ensemble whose quorum is down comes back: no member
// serves until a quorum runs. It fails t if a member exits or does not serve
// within its start timeout.
func (e *Ensemble) Start(t testing.TB, members ...*Process) {
	t.Helper()
	if err := e.start(members...); err != nil {
		t.Fatal(err)
	}
}

// start is Start without the test: it returns what went wrong.
func (e *Ensemble) start(members ...*Process) error {
	for _, p := range members {
		if p.Pid() != 0 {
			continue
		}
		if err := p.start(); err != nil {
			return err
		}
	}
	errs := make([]error, len(members))
	var wg sync.WaitGroup
	for i, p := range members {
		wg.Go(func() { errs[i] = p.waitReady() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// KillAll sends SIGKILL to every running member and waits for them to exit.
func (e *Ensemble) KillAll() error {
	var errs []error
	for _, p := range e.Members {
		errs = append(errs, p.Kill())
	}
	return errors.Join(errs...)
}

// ID returns p's server id (its myid), or 0 if p is not a member.
func (e *Ensemble) ID(p *Process) int {
	for i, m := range e.Members {
		if m == p {
			return i + 1
		}
	}
	return 0
}

// Voters returns the voting members.
func (e *Ensemble) Voters() []*Process { return e.Members[:e.voters] }

// Observers returns the observers.
func (e *Ensemble) Observers() []*Process { return e.Members[e.voters:] }

// Addrs returns the members' client addresses, in server id order.
func (e *Ensemble) Addrs() []string {
	out := make([]string, len(e.Members))
	for i, p := range e.Members {
		out[i] = p.Addr
	}
	return out
}

// ConnectString returns the ZooKeeper connect string naming every member,
// "127.0.0.1:p1,127.0.0.1:p2,...".
func (e *Ensemble) ConnectString() string { return strings.Join(e.Addrs(), ",") }

// Status asks p for srvr and parses its Mode, Zxid and node count. It fails
// if p does not answer within a second, or answers that it is not serving.
func (e *Ensemble) Status(p *Process) (MemberStatus, error) {
	return memberStatus(p.Addr)
}

func memberStatus(addr string) (MemberStatus, error) {
	out, err := fourLetterWordWithin(addr, "srvr", ensembleProbeTimeout)
	if err != nil {
		return MemberStatus{}, err
	}
	return ParseSrvr(out)
}

// ParseSrvr parses the Mode, Zxid and Node count lines of a srvr answer. It
// fails if the answer has no Mode (for instance "This ZooKeeper instance is
// not currently serving requests").
func ParseSrvr(out string) (MemberStatus, error) {
	var st MemberStatus
	var haveMode bool
	for line := range strings.SplitSeq(out, "\n") {
		key, value, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		value = strings.TrimSpace(value)
		switch key {
		case "Mode":
			st.Mode, haveMode = value, true
		case "Zxid":
			z, err := strconv.ParseInt(strings.TrimPrefix(value, "0x"), 16, 64)
			if err != nil {
				return MemberStatus{}, fmt.Errorf("zktest: srvr Zxid %q: %w", value, err)
			}
			st.Zxid = z
		case "Node count":
			c, err := strconv.Atoi(value)
			if err != nil {
				return MemberStatus{}, fmt.Errorf("zktest: srvr Node count %q: %w", value, err)
			}
			st.NodeCount = c
		}
	}
	if !haveMode {
		return MemberStatus{}, fmt.Errorf("zktest: srvr answered without a Mode: %q", strings.TrimSpace(out))
	}
	return st, nil
}

// Statuses asks every member for srvr at once; errs[i] is set for members
// that are down, paused or not serving.
func (e *Ensemble) Statuses() (sts []MemberStatus, errs []error) {
	sts = make([]MemberStatus, len(e.Members))
	errs = make([]error, len(e.Members))
	var wg sync.WaitGroup
	for i, p := range e.Members {
		wg.Go(func() { sts[i], errs[i] = memberStatus(p.Addr) })
	}
	wg.Wait()
	return sts, errs
}

// Leader returns the member that srvr reports as leader, once exactly one
// answering member says so, waiting up to timeout (0 means
// DefaultStartTimeout). Paused or killed members do not count. It fails t
// if no single leader shows within the wait.
func (e *Ensemble) Leader(t testing.TB, timeout time.Duration) *Process {
	t.Helper()
	p, err := e.WaitLeader(timeout, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// WaitLeader is Leader without a testing.TB: it waits up to timeout (0
// means DefaultStartTimeout) for exactly one answering member to report
// leader and, when accept is not nil, for accept to return true for it.
func (e *Ensemble) WaitLeader(timeout time.Duration, accept func(*Process) bool) (*Process, error) {
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	deadline := time.Now().Add(timeout)
	var last string
	for {
		sts, errs := e.Statuses()
		var leaders []*Process
		var modes []string
		for i, p := range e.Members {
			if errs[i] != nil {
				modes = append(modes, fmt.Sprintf("%d: %v", i+1, errs[i]))
				continue
			}
			modes = append(modes, fmt.Sprintf("%d: %s", i+1, sts[i].Mode))
			if sts[i].Mode == ModeLeader {
				leaders = append(leaders, p)
			}
		}
		if len(leaders) == 1 && (accept == nil || accept(leaders[0])) {
			return leaders[0], nil
		}
		last = strings.Join(modes, "; ")
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("zktest: no single accepted leader within %v; members: %s", timeout, last)
		}
		time.Sleep(readyPoll)
	}
}

// WaitServing waits up to timeout (0 means DefaultStartTimeout) until each
// of the given members answers srvr with a Mode.
func (e *Ensemble) WaitServing(timeout time.Duration, members ...*Process) error {
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	deadline := time.Now().Add(timeout)
	for {
		var errs []error
		for _, p := range members {
			if _, err := memberStatus(p.Addr); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", p.name, err))
			}
		}
		if len(errs) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("zktest: members not serving after %v: %w", timeout, errors.Join(errs...))
		}
		time.Sleep(readyPoll)
	}
}

// Pause stops the running server with SIGSTOP, as a machine that hangs
// would: its sockets stay open but it answers nothing. It returns once every
// thread of the process has stopped. Resume continues it.
// Stop and Restart of a paused server wait for the SIGTERM grace period
// (the signal stays pending) and then kill it; Kill works at once.
func (p *Process) Pause() error {
	if err := p.signalRunning(syscall.SIGSTOP, "pause"); err != nil {
		return err
	}
	if r := p.current(); r != nil {
		if err := waitStopped(r.cmd.Process.Pid, 5*time.Second); err != nil {
			return fmt.Errorf("zktest: pause %s: %w", p.name, err)
		}
	}
	return nil
}

// Resume continues a server paused by Pause with SIGCONT. Resuming a server
// that is running normally, or not running, does nothing.
func (p *Process) Resume() error { return p.signalRunning(syscall.SIGCONT, "resume") }

func (p *Process) signalRunning(sig syscall.Signal, what string) error {
	r := p.current()
	if r == nil {
		return nil
	}
	if err := signal(r, sig); err != nil {
		return fmt.Errorf("zktest: %s %s pid %d: %w", what, p.name, r.cmd.Process.Pid, err)
	}
	return nil
}

// fourLetterWordWithin is FourLetterWord with a given timeout.
func fourLetterWordWithin(addr, cmd string, timeout time.Duration) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", fmt.Errorf("zktest: four-letter word %q to %s: %w", cmd, addr, err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return "", fmt.Errorf("zktest: four-letter word %q to %s: %w", cmd, addr, err)
	}
	if _, err := io.WriteString(conn, cmd); err != nil {
		return "", fmt.Errorf("zktest: four-letter word %q to %s: write: %w", cmd, addr, err)
	}
	out, err := io.ReadAll(io.LimitReader(conn, 1<<20))
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		return string(out), fmt.Errorf("zktest: four-letter word %q to %s: read: %w", cmd, addr, err)
	}
	return string(out), nil
}
