package bench

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
)

// stallProxy forwards loopback connections to a server and can hold back
// the server's replies for a while: a server stall as the clients see it.
type stallProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	gate  chan struct{} // closed while replies flow
	conns []net.Conn
	wg    sync.WaitGroup
}

func startStallProxy(t *testing.T, target string) *stallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{ln: ln, target: target, gate: make(chan struct{})}
	close(p.gate)
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		ln.Close()
		p.resume()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *stallProxy) addr() string { return p.ln.Addr().String() }

func (p *stallProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		p.wg.Go(func() { io.Copy(s, c); s.Close() })
		p.wg.Go(func() {
			defer c.Close()
			buf := make([]byte, 64<<10)
			for {
				n, err := s.Read(buf)
				if n > 0 {
					p.mu.Lock()
					g := p.gate
					p.mu.Unlock()
					<-g
					if _, werr := c.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		})
	}
}

// stall holds back every reply for d.
func (p *stallProxy) stall(d time.Duration) {
	p.mu.Lock()
	p.gate = make(chan struct{})
	p.mu.Unlock()
	time.AfterFunc(d, p.resume)
}

func (p *stallProxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.gate:
	default:
		close(p.gate)
	}
}

// onFirstWrite is a progress writer that calls f once, on the first
// progress line (one ProgressInterval after the load started).
type onFirstWrite struct {
	once sync.Once
	f    func()
}

func (w *onFirstWrite) Write(b []byte) (int, error) {
	w.once.Do(w.f)
	return len(b), nil
}

// TestPacedStalls: in an open loop a server stall shows as the latency of
// the calls due during it, not as fewer calls or as calls of the warm-up.
func TestPacedStalls(t *testing.T) {
	p := zktest.StartPaddock(t, zktest.PaddockOptions{})
	proxy := startStallProxy(t, p.Addr)
	const rate = 1000
	base := func() Config {
		cfg := DefaultConfig(proxy.addr(), WorkloadGet)
		cfg.Sessions, cfg.Inflight, cfg.Keys = 2, 4, 10
		cfg.Rate = rate
		cfg.ProgressInterval = 20 * time.Millisecond
		return cfg
	}

	t.Run("stall at the end of the window", func(t *testing.T) {
		// The replies stop from about 300 ms into a 600 ms window until
		// after its end: the calls due in its second half wait, and count.
		cfg := base()
		cfg.Duration = 600 * time.Millisecond
		cfg.Progress = &onFirstWrite{f: func() { time.AfterFunc(280*time.Millisecond, func() { proxy.stall(600 * time.Millisecond) }) }}
		res, err := Run(testCtx(t), cfg)
		if err != nil {
			t.Fatal(err)
		}
		due := int64(rate * cfg.Duration.Seconds())
		if res.Ops < due*9/10 || res.Errors != 0 {
			t.Errorf("%d calls measured (%d errors), want about %d: the %.0f calls/s due during the window's %v",
				res.Ops, res.Errors, due, cfg.Rate, cfg.Duration)
		}
		if res.Latency.Max < 300_000 {
			t.Errorf("max latency %d µs, want the stall's (at least 300 ms)", res.Latency.Max)
		}
	})

	t.Run("stall in the warm-up", func(t *testing.T) {
		// The replies stop from about 20 ms into a 300 ms warm-up until
		// 70 ms after its end: the calls due in the warm-up are not
		// measured, even those sent after it.
		cfg := base()
		cfg.Warmup, cfg.Duration = 300*time.Millisecond, 300*time.Millisecond
		cfg.Progress = &onFirstWrite{f: func() { proxy.stall(350 * time.Millisecond) }}
		res, err := Run(testCtx(t), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if most := int64(rate*res.DurationS) + 2; res.Ops > most || res.Errors != 0 {
			t.Errorf("%d calls measured (%d errors) in a %.3f s window at %d calls/s: want at most %d, those due in it",
				res.Ops, res.Errors, res.DurationS, rate, most)
		}
	})
}

// TestPacedSessionsIndependent: a call waits only for its own session's cap.
// Session 0's calls take 40 ms, session 1's none; with one call each
// outstanding and one due every 2 ms (to the sessions in turn), session 0
// falls behind, but session 1's calls go out when due: their latency stays
// near zero instead of growing with session 0's backlog (about 36 ms more
// per call, some 350 ms at the median, if one session's cap holds up the
// schedule of all).
func TestPacedSessionsIndependent(t *testing.T) {
	const ops = 40
	r := &runner{cfg: Config{Rate: 500, Ops: ops}, opsMode: true}
	r.tickets.Store(ops)
	r.measureStart.Store(1)
	r.phase.Store(phaseMeasure)
	recs := []*recorder{newRecorder(), newRecorder()}
	slots := []chan idleCall{make(chan idleCall, 1), make(chan idleCall, 1)}
	slots[0] <- idleCall{op: func(done func(error)) { time.AfterFunc(40*time.Millisecond, func() { done(nil) }) }}
	slots[1] <- idleCall{op: func(done func(error)) { done(nil) }}
	r.t0 = time.Now()
	r.chains.Go(func() { r.paced(slots, recs) })
	r.chains.Wait()
	if n := recs[0].hist.Count() + recs[1].hist.Count(); n != ops {
		t.Fatalf("%d calls measured, want %d", n, ops)
	}
	if p := recs[1].hist.Percentiles(); p.P50 > 100_000 {
		t.Errorf("the fast session's latencies %+v µs: its calls waited for the slow session", p)
	}
	if p := recs[0].hist.Percentiles(); p.Max < 300_000 {
		t.Errorf("the slow session's latencies %+v µs: want its backlog counted (max at least 300 ms)", p)
	}
}
