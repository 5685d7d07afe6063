// Command failover measures how long a ZooKeeper ensemble (Paddock or Apache
// ZooKeeper) takes to accept writes again after its leader is killed with
// SIGKILL. scripts/bench-vs-zookeeper.sh runs it in its failover phase; it
// can also be run by hand against any ensemble on this machine:
//
//	go run ./scripts/failover -servers 127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183 -pids 4242,4243,4244
//
// -servers lists the members' client addresses and -pids their process ids,
// in the same order (member 1 first). The command
//
//  1. creates /failover-<random> with one znode per writer;
//  2. starts -writers sessions, each connected first to member
//     (writer mod members) and moving round the others in order when its
//     connection drops, each writing its own znode with synchronous setData
//     calls one after another;
//  3. once every writer has written and -warmup has passed, asks every member
//     for "srvr", picks the one whose Mode is leader and kills it
//     (kill -9 by its pid);
//  4. measures from the moment just before the kill: leader_s, until a
//     surviving member answers srvr with Mode: leader; first_write_s,
//     until the first write issued after the kill was acknowledged;
//     all_writers_s, until every writer had a write issued after the kill
//     acknowledged (writer_s has each writer's time); -1 for what did not
//     happen within -timeout;
//  5. stops the writers, deletes its znodes and prints one JSON object.
//
// Writes issued before the kill do not count even if acknowledged after it:
// they may have been committed by the old leader. The killed member is left
// dead; the caller restarts it. Exit status 1 when the ensemble does not
// recover within -timeout (the JSON is printed anyway, with "recovered":
// false), 2 for bad flags.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/paddockhq/paddock/zk"
)

// Result is the JSON the command prints.
type Result struct {
	Members          int       `json:"members"`
	Writers          int       `json:"writers"`
	SessionTimeoutS  float64   `json:"session_timeout_s"`
	WarmupS          float64   `json:"warmup_s"`
	KilledMember     int       `json:"killed_member"` // 1-based, in -servers order
	KilledPID        int       `json:"killed_pid"`
	WritersOnLeader  int       `json:"writers_on_leader"` // connected to the killed leader at the kill
	Recovered        bool      `json:"recovered"`
	NewLeaderMember  int       `json:"new_leader_member,omitempty"`
	LeaderS          float64   `json:"leader_s"`
	FirstWriteS      float64   `json:"first_write_s"`
	AllWritersS      float64   `json:"all_writers_s"`
	WriterS          []float64 `json:"writer_s"`
	WritesBeforeKill int64     `json:"writes_before_kill"`
	WritesAfterKill  int64     `json:"writes_after_kill"`
	// ErrorsAfterKill counts failed writes issued after the kill, by cause.
	ErrorsAfterKill map[string]int64 `json:"errors_after_kill,omitempty"`
	Error           string           `json:"error,omitempty"`
}

func main() {
	servers := flag.String("servers", "", "members' client addresses, comma-separated, member 1 first")
	pidList := flag.String("pids", "", "members' process ids, comma-separated, in the order of -servers")
	writers := flag.Int("writers", 8, "writing sessions")
	warmup := flag.Duration("warmup", 2*time.Second, "writing before the kill, once every writer has written")
	timeout := flag.Duration("timeout", 60*time.Second, "longest wait for the ensemble to recover after the kill")
	sessionTimeout := flag.Duration("session-timeout", 10*time.Second, "session timeout the writers ask for")
	callTimeout := flag.Duration("call-timeout", 10*time.Second, "longest wait for one write")
	flag.Parse()

	addrs := splitList(*servers)
	var pids []int
	for _, s := range splitList(*pidList) {
		p, err := strconv.Atoi(s)
		if err != nil || p < 1 {
			usage("-pids: %q is not a process id", s)
		}
		pids = append(pids, p)
	}
	switch {
	case len(addrs) < 3:
		usage("-servers: want at least 3 members, got %d", len(addrs))
	case len(pids) != len(addrs):
		usage("-pids: %d pids for %d servers", len(pids), len(addrs))
	case *writers < 1:
		usage("-writers: want at least 1")
	case *timeout <= 0 || *sessionTimeout <= 0 || *callTimeout <= 0 || *warmup < 0:
		usage("durations must be positive")
	}

	m := &measurement{
		addrs: addrs, pids: pids, writers: *writers, warmup: *warmup, timeout: *timeout,
		sessionTimeout: *sessionTimeout, callTimeout: *callTimeout,
	}
	res, err := m.run()
	if err != nil {
		res.Error = err.Error()
	}
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
	if err != nil {
		fmt.Fprintln(os.Stderr, "failover:", err)
		os.Exit(1)
	}
}

func usage(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "failover: "+format+"\n", args...)
	flag.Usage()
	os.Exit(2)
}

func splitList(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

type measurement struct {
	addrs                       []string
	pids                        []int
	writers                     int
	warmup, timeout             time.Duration
	sessionTimeout, callTimeout time.Duration

	mu       sync.Mutex
	killAt   time.Time   // zero until the kill
	before   int64       // successful writes issued before the kill
	after    int64       // successful writes issued after it
	okBefore []bool      // writer has written before the kill
	firstOK  []time.Time // writer's first acknowledged write issued after the kill
	errs     map[string]int64
	changed  chan struct{} // signalled (non-blocking) after each first success
}

func (m *measurement) run() (*Result, error) {
	res := &Result{
		Members: len(m.addrs), Writers: m.writers,
		SessionTimeoutS: m.sessionTimeout.Seconds(), WarmupS: m.warmup.Seconds(),
		LeaderS: -1, FirstWriteS: -1, AllWritersS: -1,
	}
	m.okBefore = make([]bool, m.writers)
	m.firstOK = make([]time.Time, m.writers)
	m.errs = map[string]int64{}
	m.changed = make(chan struct{}, 1)

	ctx := context.Background()
	connectString := strings.Join(m.addrs, ",")
	admin, err := m.connect(ctx, 0)
	if err != nil {
		return res, fmt.Errorf("connect to %s: %w", connectString, err)
	}
	defer admin.Close()
	root := fmt.Sprintf("/failover-%016x", rand.Uint64())
	if _, err := admin.Create(ctx, root, nil, zk.OpenACL, zk.ModePersistent); err != nil {
		return res, fmt.Errorf("create %s: %w", root, err)
	}
	defer m.cleanup(admin, root)
	for i := range m.writers {
		if _, err := admin.Create(ctx, m.path(root, i), []byte("0"), zk.OpenACL, zk.ModePersistent); err != nil {
			return res, fmt.Errorf("create %s: %w", m.path(root, i), err)
		}
	}

	conns := make([]*zk.Conn, m.writers)
	for i := range conns {
		c, err := m.connect(ctx, i%len(m.addrs))
		if err != nil {
			closeAll(conns)
			return res, fmt.Errorf("writer %d: connect: %w", i, err)
		}
		conns[i] = c
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() { m.write(c, m.path(root, i), i, stop) })
	}
	defer func() {
		close(stop)
		wg.Wait()
		closeAll(conns)
	}()

	// Every writer must have written before the warm-up counts.
	deadline := time.Now().Add(m.timeout)
	for !m.allWroteBeforeKill() {
		if time.Now().After(deadline) {
			return res, errors.New("not every writer could write before the kill")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(m.warmup)

	leader, err := m.findLeader(nil, 10*time.Second)
	if err != nil {
		return res, err
	}
	res.KilledMember, res.KilledPID = leader+1, m.pids[leader]
	for _, c := range conns {
		if c.Server() == m.addrs[leader] {
			res.WritersOnLeader++
		}
	}

	m.mu.Lock()
	m.killAt = time.Now()
	killAt := m.killAt
	m.mu.Unlock()
	if err := syscall.Kill(m.pids[leader], syscall.SIGKILL); err != nil {
		return res, fmt.Errorf("kill -9 %d (member %d, the leader): %w", m.pids[leader], leader+1, err)
	}

	// A new leader, seen by srvr on the surviving members.
	leaderDone := make(chan struct{})
	go func() {
		defer close(leaderDone)
		if nl, err := m.findLeader(func(i int) bool { return i != leader }, m.timeout); err == nil {
			d := time.Since(killAt)
			m.mu.Lock()
			res.NewLeaderMember, res.LeaderS = nl+1, d.Seconds()
			m.mu.Unlock()
		}
	}()

	// Every writer acknowledged after the kill.
	end := time.NewTimer(m.timeout)
	defer end.Stop()
	for !m.allWroteAfterKill() {
		select {
		case <-m.changed:
		case <-end.C:
			<-leaderDone
			m.fill(res)
			return res, fmt.Errorf("not every writer could write within %v of the kill", m.timeout)
		}
	}
	<-leaderDone
	m.fill(res)
	res.Recovered = res.NewLeaderMember != 0
	if !res.Recovered {
		return res, fmt.Errorf("no surviving member answered srvr as leader within %v", m.timeout)
	}
	return res, nil
}

func (m *measurement) path(root string, i int) string { return fmt.Sprintf("%s/w-%d", root, i) }

// connect opens a session that tries the members in order from first.
func (m *measurement) connect(ctx context.Context, first int) (*zk.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return zk.Connect(ctx, strings.Join(m.addrs, ","),
		zk.WithSessionTimeout(m.sessionTimeout),
		zk.WithHostProvider(func(hosts []string) zk.HostProvider { return newOrderedHosts(hosts, first) }))
}

// write makes synchronous writes one after another until stop is closed.
func (m *measurement) write(c *zk.Conn, path string, i int, stop <-chan struct{}) {
	data := make([]byte, 100)
	for {
		select {
		case <-stop:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), m.callTimeout)
		start := time.Now()
		_, err := c.Set(ctx, path, data, -1)
		done := time.Now()
		cancel()
		m.record(i, start, done, err)
		if err != nil {
			// Calls made while disconnected wait for the next connection
			// attempt; this only stops a server that fails writes at once
			// from turning the loop into a spin.
			time.Sleep(time.Millisecond)
		}
	}
}

func (m *measurement) record(i int, start, done time.Time, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	afterKill := !m.killAt.IsZero() && !start.Before(m.killAt)
	switch {
	case err != nil && afterKill:
		m.errs[errorCause(err)]++
	case err != nil:
	case !afterKill:
		m.before++
		m.okBefore[i] = true
	default:
		m.after++
		if m.firstOK[i].IsZero() {
			m.firstOK[i] = done
			select {
			case m.changed <- struct{}{}:
			default:
			}
		}
	}
}

// errorCause names an error without its operation and path.
func errorCause(err error) string {
	for _, e := range []error{zk.ErrConnectionLoss, zk.ErrSessionExpired, zk.ErrSessionMoved, context.DeadlineExceeded} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	return err.Error()
}

func (m *measurement) allWroteBeforeKill() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !slices.Contains(m.okBefore, false)
}

func (m *measurement) allWroteAfterKill() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !slices.ContainsFunc(m.firstOK, time.Time.IsZero)
}

// fill puts the writers' figures into res.
func (m *measurement) fill(res *Result) {
	m.mu.Lock()
	defer m.mu.Unlock()
	res.WritesBeforeKill, res.WritesAfterKill = m.before, m.after
	if len(m.errs) > 0 {
		res.ErrorsAfterKill = m.errs
	}
	res.WriterS = make([]float64, len(m.firstOK))
	res.FirstWriteS, res.AllWritersS = -1, -1
	all := true
	for i, t := range m.firstOK {
		if t.IsZero() {
			res.WriterS[i], all = -1, false
			continue
		}
		d := t.Sub(m.killAt).Seconds()
		res.WriterS[i] = d
		if res.FirstWriteS < 0 || d < res.FirstWriteS {
			res.FirstWriteS = d
		}
		res.AllWritersS = max(res.AllWritersS, d)
	}
	if !all {
		res.AllWritersS = -1
	}
}

// findLeader polls srvr on the members accepted by keep (all when nil) until
// exactly one says it is the leader, and returns its index.
func (m *measurement) findLeader(keep func(int) bool, timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	for {
		leaders, modes := m.modes(keep)
		if len(leaders) == 1 {
			return leaders[0], nil
		}
		if time.Now().After(deadline) {
			return -1, fmt.Errorf("no single leader within %v: %s", timeout, strings.Join(modes, "; "))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// modes asks the members for srvr at once.
func (m *measurement) modes(keep func(int) bool) (leaders []int, modes []string) {
	out := make([]string, len(m.addrs))
	var wg sync.WaitGroup
	for i, a := range m.addrs {
		if keep != nil && !keep(i) {
			out[i] = "(skipped)"
			continue
		}
		wg.Go(func() {
			mode, err := srvrMode(a)
			if err != nil {
				out[i] = err.Error()
				return
			}
			out[i] = mode
		})
	}
	wg.Wait()
	for i, mode := range out {
		if mode == "leader" {
			leaders = append(leaders, i)
		}
		modes = append(modes, fmt.Sprintf("member %d: %s", i+1, mode))
	}
	return leaders, modes
}

// srvrMode returns the Mode line of addr's answer to srvr.
func srvrMode(addr string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := io.WriteString(conn, "srvr"); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(conn, 64<<10))
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		return "", err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if mode, ok := strings.CutPrefix(line, "Mode: "); ok {
			return strings.TrimSpace(mode), nil
		}
	}
	return "", fmt.Errorf("not serving (%q)", strings.TrimSpace(string(b)))
}

func (m *measurement) cleanup(admin *zk.Conn, root string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range m.writers {
		_ = zk.Retry(ctx, func(ctx context.Context) error {
			err := admin.Delete(ctx, m.path(root, i), -1)
			if errors.Is(err, zk.ErrNoNode) {
				return nil
			}
			return err
		})
	}
	_ = zk.Retry(ctx, func(ctx context.Context) error {
		err := admin.Delete(ctx, root, -1)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		return err
	})
}

func closeAll(conns []*zk.Conn) {
	var wg sync.WaitGroup
	for _, c := range conns {
		if c != nil {
			wg.Go(func() { c.Close() })
		}
	}
	wg.Wait()
}

// orderedHosts is a zk.HostProvider that goes round the hosts in order,
// starting at a given one, so that each writer's first server and the
// server it moves to are known.
type orderedHosts struct {
	mu    sync.Mutex
	hosts []string
	next  int
	tried int
}

func newOrderedHosts(hosts []string, first int) *orderedHosts {
	return &orderedHosts{hosts: hosts, next: first % len(hosts)}
}

func (p *orderedHosts) Next(context.Context) (string, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	addr := p.hosts[p.next]
	p.next = (p.next + 1) % len(p.hosts)
	p.tried++
	round := p.tried > len(p.hosts)
	if round {
		p.tried = 1
	}
	return addr, round, nil
}

func (p *orderedHosts) Connected() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tried = 0
}

func (p *orderedHosts) Len() int { return len(p.hosts) }
