package sidebyside

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/zktest"
)

const (
	sessions  = 64
	valueSize = 100
)

// Flags of BenchmarkOps. With the defaults each session has one caller
// making one synchronous call at a time, as fast as it can (a closed loop).
var (
	// inflight is how many goroutines share each session, each making one
	// synchronous call at a time: more than one is a Go program sharing its
	// session among goroutines, the client pipelining their requests on the
	// one connection.
	inflight = flag.Int("sidebyside.inflight", 1, "concurrent callers per session in BenchmarkOps")
	// rate, when set, paces the callers to that many operations per second
	// in all, so that both servers are measured at the same load; latency
	// then counts from when an operation was due, so a stalled caller's
	// late operations count their wait (no coordinated omission).
	rate = flag.Float64("sidebyside.rate", 0, "total operations per second in BenchmarkOps; 0 means as fast as possible")
	// serverCPUs, when set, pins both servers (every thread) to those
	// CPUs, so that with the benchmark itself started under taskset on
	// the other CPUs the clients do not take the servers' CPU time:
	// taskset -c 0 sbs.test -sidebyside.servercpus 1 ...
	serverCPUs = flag.String("sidebyside.servercpus", "", "comma-separated CPUs to pin the servers to (for example 1); empty leaves them unpinned")
)

// pin sets the CPU affinity of every thread of process pid to the CPUs
// -sidebyside.servercpus names (threads created later inherit it from
// their creator). It does nothing when the flag is empty.
func pin(b *testing.B, pid int) {
	b.Helper()
	if *serverCPUs == "" {
		return
	}
	var set unix.CPUSet
	for _, f := range strings.Split(*serverCPUs, ",") {
		cpu, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || cpu < 0 {
			b.Fatalf("-sidebyside.servercpus %q: %q is not a CPU number", *serverCPUs, f)
		}
		set.Set(cpu)
	}
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		// A thread may exit between the listing and the call.
		if err := unix.SchedSetaffinity(tid, &set); err != nil && !errors.Is(err, unix.ESRCH) {
			b.Fatalf("pin thread %d of pid %d to CPUs %s: %v", tid, pid, *serverCPUs, err)
		}
	}
}

var acl = zk.WorldACL(zk.PermAll)

// servers holds one server of each kind for the whole benchmark binary.
var servers struct {
	once sync.Once
	zk   *zktest.Process
	pd   *zktest.Process
}

type serverKind struct {
	name  string
	start func(b *testing.B) *zktest.Process
}

func kinds() []serverKind {
	return []serverKind{
		{"zookeeper", func(b *testing.B) *zktest.Process {
			return zktest.StartZooKeeper(b, zktest.ZKOptions{ProductionJVM: true, JVMFlags: []string{"-Xmx8g"},
				ExtraConfig: []string{"maxClientCnxns=0"}})
		}},
		{"paddock", func(b *testing.B) *zktest.Process {
			return zktest.StartPaddock(b, zktest.PaddockOptions{ExtraConfig: []string{"maxClientCnxns=0"}})
		}},
	}
}

func connect(b *testing.B, addr string, n int) []*zk.Conn {
	b.Helper()
	conns := make([]*zk.Conn, n)
	for i := range conns {
		c, ev, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false))
		if err != nil {
			b.Fatal(err)
		}
		deadline := time.After(10 * time.Second)
	wait:
		for {
			select {
			case e := <-ev:
				if e.State == zk.StateHasSession {
					break wait
				}
			case <-deadline:
				b.Fatalf("session %d to %s not established", i, addr)
			}
		}
		go func() {
			for range ev {
			}
		}()
		conns[i] = c
	}
	b.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	return conns
}

// cpuTicks returns a process's user+system CPU time in clock ticks
// (/proc/PID/stat fields 14 and 15).
func cpuTicks(b *testing.B, pid int) int64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The command name (field 2) may contain spaces: split after its ')'.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return utime + stime
}

// clockTick is USER_HZ, the unit of /proc/PID/stat CPU times on Linux.
const clockTick = 10 * time.Millisecond

// run spreads b.N calls of op over the sessions and reports throughput,
// latency percentiles, and the CPU time per operation of the server and of
// the clients (this process).
func run(b *testing.B, pid int, conns []*zk.Conn, op func(c *zk.Conn, worker, i int) error) {
	b.Helper()
	cpu0 := cpuTicks(b, pid)
	self0 := selfCPU(b)
	var next atomic.Int64
	workers := len(conns) * max(1, *inflight)
	lat := make([][]time.Duration, workers)
	var errs atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for k := 0; ; k++ {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				t0 := time.Now()
				if *rate > 0 {
					// Worker w's k-th operation is due at start + (k*workers+w)/rate.
					due := start.Add(time.Duration(float64(k*workers+w) / *rate * float64(time.Second)))
					if d := time.Until(due); d > 0 {
						time.Sleep(d)
					}
					t0 = due
				}
				if err := op(conns[w%len(conns)], w, i); err != nil {
					errs.Add(1)
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	cpu := time.Duration(cpuTicks(b, pid)-cpu0) * clockTick
	self := selfCPU(b) - self0
	if n := errs.Load(); n > 0 {
		b.Fatalf("%d of %d operations failed", n, b.N)
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	pct := func(p float64) float64 {
		if len(all) == 0 {
			return 0
		}
		return float64(all[int(p*float64(len(all)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(pct(0.999), "p99.9-ms")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "server-cpu-us/op")
	b.ReportMetric(float64(self.Microseconds())/float64(b.N), "client-cpu-us/op")
}

// selfCPU returns the user+system CPU time this process (the clients) has
// used: on a machine shared by clients and server, the clients' cost per
// operation bounds how far a faster server can raise throughput.
func selfCPU(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func value() []byte { return []byte(strings.Repeat("v", valueSize)) }

// target is one running server with its sessions.
type target struct {
	name  string
	p     *zktest.Process
	conns []*zk.Conn
}

// startTargets starts one server of each kind for the whole benchmark, opens
// the sessions, and warms both up (ZooKeeper's JIT needs it) with a few
// seconds of mixed load, so the measured runs see steady-state servers.
func startTargets(b *testing.B) []*target {
	var out []*target
	for _, k := range kinds() {
		p := k.start(b)
		pin(b, p.Pid())
		t := &target{name: k.name, p: p, conns: connect(b, p.Addr, sessions)}
		warm := fmt.Sprintf("/warm-%d", time.Now().UnixNano())
		if _, err := t.conns[0].Create(warm, value(), 0, acl); err != nil {
			b.Fatal(err)
		}
		deadline := time.Now().Add(warmUp)
		var wg sync.WaitGroup
		for _, c := range t.conns {
			wg.Add(1)
			go func(c *zk.Conn) {
				defer wg.Done()
				for i := 0; time.Now().Before(deadline); i++ {
					if i%4 == 0 {
						c.Set(warm, value(), -1)
					} else {
						c.Get(warm)
					}
				}
			}(c)
		}
		wg.Wait()
		pin(b, p.Pid()) // again: threads started meanwhile by threads that were not pinned yet
		out = append(out, t)
	}
	return out
}

// warmUp is how long each server is warmed up before measuring.
const warmUp = 8 * time.Second

var createSeq atomic.Int64

// BenchmarkOps measures getData, exists, setData and create on both servers,
// started once and warmed up; each workload runs on ZooKeeper, then on
// Paddock.
func BenchmarkOps(b *testing.B) {
	targets := startTargets(b)
	for _, wl := range []string{"get", "exists", "set", "create"} {
		for _, tg := range targets {
			c0 := tg.conns[0]
			root := fmt.Sprintf("/bench-%s-%d", wl, time.Now().UnixNano())
			if _, err := c0.Create(root, nil, 0, acl); err != nil {
				b.Fatal(err)
			}
			keys := make([]string, 1000)
			for i := range keys {
				keys[i] = root + "/k" + strconv.Itoa(i)
				if _, err := c0.Create(keys[i], value(), 0, acl); err != nil {
					b.Fatal(err)
				}
			}
			v := value()
			b.Run(wl+"/"+tg.name, func(b *testing.B) {
				switch wl {
				case "get":
					run(b, tg.p.Pid(), tg.conns, func(c *zk.Conn, _, i int) error { _, _, err := c.Get(keys[i%len(keys)]); return err })
				case "exists":
					run(b, tg.p.Pid(), tg.conns, func(c *zk.Conn, _, i int) error { _, _, err := c.Exists(keys[i%len(keys)]); return err })
				case "set":
					run(b, tg.p.Pid(), tg.conns, func(c *zk.Conn, _, i int) error { _, err := c.Set(keys[i%len(keys)], v, -1); return err })
				case "create":
					run(b, tg.p.Pid(), tg.conns, func(c *zk.Conn, _, _ int) error {
						_, err := c.Create(root+"/c"+strconv.FormatInt(createSeq.Add(1), 10), v, 0, acl)
						return err
					})
				}
			})
		}
	}
}

// rss returns a process's resident set size in bytes.
func rss(b *testing.B, pid int) int64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

// BenchmarkMemory populates ZNODES (default 1,000,000) znodes of 100 bytes,
// then adds one watch per znode up to 960,000, and reports each server's RSS per znode and the
// RSS growth per watch. Run it with -benchtime=1x.
func BenchmarkMemory(b *testing.B) {
	n := 1_000_000
	if s := os.Getenv("ZNODES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	for _, k := range kinds() {
		b.Run(k.name, func(b *testing.B) {
			p := k.start(b)
			conns := connect(b, p.Addr, sessions)
			base := rss(b, p.Pid())
			for i := 0; i < 1000; i++ {
				if _, err := conns[0].Create("/m"+strconv.Itoa(i), nil, 0, acl); err != nil {
					b.Fatal(err)
				}
			}
			v := value()
			var next atomic.Int64
			var wg sync.WaitGroup
			for w := range conns {
				wg.Add(1)
				go func(c *zk.Conn) {
					defer wg.Done()
					for {
						i := int(next.Add(1)) - 1
						if i >= n {
							return
						}
						path := "/m" + strconv.Itoa(i%1000) + "/n" + strconv.Itoa(i)
						if _, err := c.Create(path, v, 0, acl); err != nil {
							b.Error(err)
							return
						}
					}
				}(conns[w])
			}
			wg.Wait()
			full := settledRSS(b, p)
			b.ReportMetric(float64(full)/(1<<20), "rss-MB")
			b.ReportMetric(float64(full-base)/float64(n), "B/znode")
			// Watches: the sessions watch distinct nodes, up to 960,000 in
			// all, so heap noise is small next to what the watches take.
			perSession := min(15000, n/len(conns))
			for w, c := range conns {
				for j := 0; j < perSession; j++ {
					i := w*perSession + j
					if _, _, _, err := c.GetW("/m" + strconv.Itoa(i%1000) + "/n" + strconv.Itoa(i)); err != nil {
						b.Fatal(err)
					}
				}
			}
			withWatches := settledRSS(b, p)
			b.ReportMetric(float64(withWatches-full)/float64(perSession*len(conns)), "B/watch")
		})
	}
}

// settledRSS asks the server to collect garbage where it can and reads RSS:
// for the JVM through a four-letter word is not possible, so both sides are
// simply read after a short quiet period.
func settledRSS(b *testing.B, p *zktest.Process) int64 {
	time.Sleep(3 * time.Second)
	return rss(b, p.Pid())
}
