package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddockhq/paddock/zk"
)

// Phases of a run.
const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseStop
)

// Bounds of the setup, cleanup and connection steps.
const (
	connectTimeout  = 15 * time.Second // one session's Connect
	connectParallel = 16               // sessions connecting at once
	setupInflight   = 256              // creates in flight while setting up
	cleanupInflight = 8                // multi deletes in flight while cleaning up
	cleanupBatch    = 500              // deletes per multi
	cleanupTimeout  = 5 * time.Minute  // the whole cleanup
	adminMaxBuffer  = 256 << 20        // largest reply the admin session accepts
)

// runner is the state of one Run.
type runner struct {
	cfg   Config
	root  string
	value []byte
	keys  []string // root/k-<i>, for the workloads that use keys
	proc  procReader

	// callCtx is the context of the benchmark's calls: the caller's
	// context without its cancellation, so that an interrupt stops issuing
	// calls and lets those in flight complete instead of failing them.
	callCtx context.Context

	t0           time.Time     // the base of the monotonic clock below
	phase        atomic.Int32  // phaseWarmup, phaseMeasure, phaseStop
	measureStart atomic.Int64  // ns after t0; set before phaseMeasure
	stopAt       atomic.Int64  // ns after t0: the end of a window timed by Duration, set before phaseStop
	stopCh       chan struct{} // closed once phaseStop is set at the window's end
	opsMode      bool          // the window ends after cfg.Ops calls
	tickets      atomic.Int64  // measured calls still to issue in opsMode

	calls      atomic.Int64 // completed calls, warm-up included, for progress
	ops        atomic.Int64 // measured successful calls, for progress
	errs       atomic.Int64 // measured failed calls, for progress
	warmupErrs atomic.Int64

	chains   sync.WaitGroup // every loop issuing calls
	loopRecs []*recorder    // sessions workload: one per worker
	cpu0     cpuSample      // server CPU at the start of the window
	cpu1     cpuSample      // and at its end
	self0    time.Duration  // this process's CPU at the start of the window
	self1    time.Duration  // and at its end
	selfOK   bool           // both were sampled
	rss      []int64        // server RSS at its end
	window   time.Duration  // the measured window's length
	samples  []sample       // the measured calls, with Config.Samples
	popIdx   atomic.Int64   // populate: next znode index
}

// session is one bench session and what it recorded.
type session struct {
	id      int
	conn    *zk.Conn
	rec     *recorder
	counter atomic.Int64 // names of created znodes
}

// recorder collects one session's measured latencies and errors.
type recorder struct {
	mu   sync.Mutex
	hist *Histogram
	// sendLate and lessLate (open loops, else nil: a histogram is 188 KB):
	// how late after it could have the load generator sent each call, and
	// the call's latency less that (Result.SendLate,
	// Result.LatencyLessSendLate). See trackLateness.
	sendLate, lessLate *Histogram
	errors             map[string]int64
	samples            []sample // with Config.Samples
}

// sample is one measured call for Config.Samples.
type sample struct{ startUs, latencyUs int64 }

func newRecorder() *recorder {
	return &recorder{hist: NewHistogram(), errors: map[string]int64{}}
}

// trackLateness makes rec keep an open loop's send lateness.
func (rec *recorder) trackLateness() {
	rec.sendLate, rec.lessLate = NewHistogram(), NewHistogram()
}

// opFunc issues one asynchronous call and arranges for done to be called
// exactly once with its outcome.
type opFunc func(done func(err error))

// Run runs the benchmark cfg describes and returns what it measured. When
// ctx is cancelled it stops early and returns the partial Result with an
// error wrapping ctx's; any other error means there is no Result.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Workload == WorkloadPopulate {
		cfg.Warmup, cfg.Ops = 0, cfg.Znodes
	}
	r := &runner{
		cfg:     cfg,
		root:    fmt.Sprintf("/bench-%016x", rand.Uint64()),
		value:   make([]byte, cfg.ValueSize),
		proc:    newProcReader(cfg.ProcDir),
		callCtx: context.WithoutCancel(ctx),
		opsMode: cfg.Ops > 0,
	}
	for i := range r.value {
		r.value[i] = 'a' + byte(i%26)
	}
	r.tickets.Store(cfg.Ops)
	if _, err := r.proc.sampleCPU(cfg.ServerPIDs); err != nil {
		return nil, fmt.Errorf("bench: %w", err) // before touching the servers
	}
	return r.run(ctx)
}

func (r *runner) run(ctx context.Context) (*Result, error) {
	// The admin session lists the children of the run's parents when it
	// cleans up: allow large replies.
	admin, err := r.connect(ctx, zk.WithMaxBufferSize(adminMaxBuffer))
	if err != nil {
		return nil, fmt.Errorf("bench: connect to %s: %w", r.cfg.Servers, err)
	}
	defer admin.Close()
	res := r.newResult()
	err = r.setup(ctx, admin)
	if err != nil {
		err = fmt.Errorf("setup: %w", err)
	} else {
		err = r.load(ctx, res)
	}
	if err != nil || !r.cfg.Keep {
		res.Kept = false
		out := r.cleanup(admin)
		if out.failed > 0 && admin.State() == zk.StateExpired {
			// A stall longer than the session timeout expires the admin
			// session with the others: the server may well be there, so
			// delete the root from a new session rather than leave it.
			again := r.cleanupAgain()
			again.deleted += out.deleted
			out = again
		}
		res.CleanupErrors, res.CleanupDeleted = out.failed, out.deleted
		if out.first != nil {
			res.CleanupError = out.first.Error()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("bench: %w (cleanup errors: %d)", err, res.CleanupErrors)
	}
	if ctx.Err() != nil {
		res.Interrupted = true
		return res, fmt.Errorf("bench: interrupted: %w", context.Cause(ctx))
	}
	return res, nil
}

// cleanupAgain runs cleanup on a new admin session (connected even after
// an interrupt: the calls' context); not connecting counts as one failed
// call.
func (r *runner) cleanupAgain() cleanupOutcome {
	admin, err := r.connect(r.callCtx, zk.WithMaxBufferSize(adminMaxBuffer))
	if err != nil {
		return cleanupOutcome{failed: 1, first: fmt.Errorf("connect: %w", err)}
	}
	defer admin.Close()
	return r.cleanup(admin)
}

// load opens the sessions, runs the warm-up and the measured window, closes
// the sessions and puts the figures in res.
func (r *runner) load(ctx context.Context, res *Result) error {
	var (
		sessions []*session
		fan      *fanout
		err      error
	)
	switch r.cfg.Workload {
	case WorkloadSessions:
		// Each worker opens its own sessions.
	case WorkloadWatchFanout:
		fan, err = r.openFanout(ctx)
	default:
		sessions, err = r.openSessions(ctx, r.cfg.Sessions)
	}
	if err != nil {
		return err
	}
	err = r.measure(ctx, sessions, fan)
	closeSessions(sessions)
	if fan != nil {
		fan.close()
	}
	if err != nil {
		return err
	}
	r.fill(res, sessions, fan)
	r.serverFigures(res)
	r.clientFigures(res)
	return r.writeSamples()
}

// connect opens one session.
func (r *runner) connect(ctx context.Context, opts ...zk.Option) (*zk.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	opts = append([]zk.Option{zk.WithSessionTimeout(r.cfg.SessionTimeout)}, opts...)
	return zk.Connect(ctx, r.cfg.Servers, opts...)
}

// openSessions opens n sessions, a few at a time.
func (r *runner) openSessions(ctx context.Context, n int) ([]*session, error) {
	out := make([]*session, n)
	errs := make([]error, n)
	sem := make(chan struct{}, connectParallel)
	var wg sync.WaitGroup
	for i := range out {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			c, err := r.connect(ctx)
			if err != nil {
				errs[i] = fmt.Errorf("session %d: %w", i, err)
				return
			}
			out[i] = &session{id: i, conn: c, rec: newRecorder()}
		})
	}
	wg.Wait()
	failed, first := 0, error(nil)
	for _, err := range errs {
		if err != nil {
			failed++
			first = firstErr(first, err)
		}
	}
	if failed > 0 {
		closeSessions(out)
		return nil, fmt.Errorf("open %d sessions: %d failed (a server may limit the connections from one "+
			"address: maxClientCnxns, 60 by default); the first: %w", n, failed, first)
	}
	return out, nil
}

// closeSessions closes every session at once.
func closeSessions(ss []*session) {
	var wg sync.WaitGroup
	for _, s := range ss {
		if s != nil {
			wg.Go(func() { s.conn.Close() })
		}
	}
	wg.Wait()
}

// measure runs the warm-up and the measured window and returns once every
// call has completed.
func (r *runner) measure(ctx context.Context, sessions []*session, fan *fanout) error {
	r.t0 = time.Now()
	r.stopCh = make(chan struct{})
	if r.cfg.Warmup == 0 {
		if err := r.beginWindow(); err != nil {
			return err
		}
	}
	switch {
	case fan != nil:
		r.chains.Go(func() { fan.run(r) })
	case r.cfg.Workload == WorkloadSessions:
		for range r.cfg.Sessions {
			rec := newRecorder()
			r.loopRecs = append(r.loopRecs, rec)
			r.chains.Go(func() { r.sessionsLoop(rec) })
		}
	case r.cfg.Rate > 0:
		slots := make([]chan idleCall, len(sessions))
		recs := make([]*recorder, len(sessions))
		for i, s := range sessions {
			slots[i], recs[i] = make(chan idleCall, r.cfg.Inflight), s.rec
			s.rec.trackLateness()
			for c := range r.cfg.Inflight {
				slots[i] <- idleCall{op: r.chainOp(s, c)}
			}
		}
		r.chains.Go(func() { r.paced(slots, recs) })
	default:
		for _, s := range sessions {
			for c := range r.cfg.Inflight {
				r.startChain(s, r.chainOp(s, c))
			}
		}
	}
	allDone := make(chan struct{})
	go func() { r.chains.Wait(); close(allDone) }()

	stopProgress := r.startProgress()
	defer stopProgress()

	// wait reports whether d passed.
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-ctx.Done():
		case <-allDone:
		}
		return false
	}
	var err error
	if r.cfg.Warmup > 0 {
		wait(r.cfg.Warmup)
		err = r.beginWindow()
	}
	if err == nil && !r.opsMode {
		if wait(r.cfg.Duration) {
			// An open loop still sends the calls due until now.
			r.stopAt.Store(max(int64(time.Since(r.t0)), 1))
		}
	} else if err == nil {
		select {
		case <-ctx.Done():
		case <-allDone:
		}
	}
	if err == nil {
		err = r.endedEarly(ctx, allDone)
	}
	r.phase.Store(phaseStop)
	close(r.stopCh)
	<-allDone
	return errors.Join(err, r.endWindow())
}

// errEndedEarly fails a run whose load stopped on its own before the
// measured window's end.
var errEndedEarly = errors.New("the load stopped before the end of the measured window")

// endedEarly returns an error when every loop has stopped on its own while
// the window was still to run: every session ended (expired, say), or a
// watch-fanout round failed. The figures would then cover a shorter window
// than the one asked for, and look like a good run's. An open loop never
// stops on its own; an interrupt is not this.
func (r *runner) endedEarly(ctx context.Context, allDone <-chan struct{}) error {
	select {
	case <-allDone:
	default:
		return nil
	}
	if ctx.Err() != nil || r.cfg.Rate > 0 || (r.opsMode && r.tickets.Load() <= 0) {
		return nil
	}
	return fmt.Errorf("%w: %v after its start, every session had ended or failed (errors: %d measured, %d in the warm-up)",
		errEndedEarly, (time.Since(r.t0) - time.Duration(r.measureStart.Load())).Round(time.Millisecond),
		r.errs.Load(), r.warmupErrs.Load())
}

// beginWindow samples the servers' CPU and starts the measured window.
func (r *runner) beginWindow() error {
	cpu, err := r.proc.sampleCPU(r.cfg.ServerPIDs)
	if err != nil {
		r.phase.Store(phaseStop)
		return err
	}
	r.cpu0 = cpu
	r.self0, r.selfOK = selfCPU()
	r.measureStart.Store(max(int64(time.Since(r.t0)), 1))
	r.phase.CompareAndSwap(phaseWarmup, phaseMeasure)
	return nil
}

// admit says whether a loop may issue its next call, and whether that call
// is measured.
func (r *runner) admit() (measured, ok bool) {
	switch r.phase.Load() {
	case phaseWarmup:
		return false, true
	case phaseMeasure:
		if r.opsMode && r.tickets.Add(-1) < 0 {
			return false, false
		}
		return true, true
	}
	return false, false
}

// record counts one completed call issued at start.
func (r *runner) record(rec *recorder, start time.Time, measured bool, err error) {
	r.recordLate(rec, start, -1, measured, err)
}

// recordLate is record for an open loop's call that the load generator
// sent late after it could have (late; negative: not an open loop's
// call): a successful measured call's late and its latency less late go to
// rec's sendLate and lessLate as well.
func (r *runner) recordLate(rec *recorder, start time.Time, late time.Duration, measured bool, err error) {
	lat := time.Since(start)
	r.calls.Add(1)
	if !measured {
		if err != nil {
			r.warmupErrs.Add(1)
		}
		return
	}
	rec.mu.Lock()
	if err != nil {
		rec.errors[errorKey(err)]++
	} else {
		rec.hist.Record(lat)
		if late >= 0 && rec.sendLate != nil {
			rec.sendLate.Record(late)
			rec.lessLate.Record(max(lat-late, 0))
		}
		if r.cfg.Samples != nil {
			rec.samples = append(rec.samples, sample{start.UnixMicro(), lat.Microseconds()})
		}
	}
	rec.mu.Unlock()
	if err != nil {
		r.errs.Add(1)
	} else {
		r.ops.Add(1)
	}
}

// errorKey names an error's cause for ErrorCounts: the operation and the
// ZooKeeper error, without the path or addresses.
func errorKey(err error) string {
	if errors.Is(err, zk.ErrNoServer) {
		return "connect: " + zk.ErrNoServer.Error()
	}
	var me *zk.MultiError
	if errors.As(err, &me) {
		return "multi: " + me.Op + ": " + me.Err.Error()
	}
	var oe *zk.OpError
	if errors.As(err, &oe) {
		return oe.Op + ": " + oe.Err.Error()
	}
	return err.Error()
}

// final reports an error after which a session makes no more calls.
func final(err error) bool {
	return errors.Is(err, zk.ErrSessionExpired) || errors.Is(err, zk.ErrClosed) ||
		errors.Is(err, zk.ErrAuthFailed)
}

// startChain keeps one call of op outstanding on s: each callback records
// its call and issues the next, until admit says stop or the session ends.
func (r *runner) startChain(s *session, op opFunc) {
	r.chains.Add(1)
	var next func()
	next = func() {
		measured, ok := r.admit()
		if !ok {
			r.chains.Done()
			return
		}
		start := time.Now()
		op(func(err error) {
			r.record(s.rec, start, measured, err)
			if final(err) {
				r.chains.Done()
				return
			}
			next()
		})
	}
	next()
}

// schedule is an open loop's timetable (Config.Rate): call k is due
// start + k*interval after the run's t0.
type schedule struct {
	start    time.Duration
	interval float64 // ns
}

func (s schedule) due(k int64) time.Duration {
	return s.start + time.Duration(float64(k)*s.interval)
}

// first returns the first call due at or after at.
func (s schedule) first(at time.Duration) int64 {
	if at <= s.start {
		return 0
	}
	k := int64(float64(at-s.start) / s.interval)
	for s.due(k) < at {
		k++
	}
	for k > 0 && s.due(k-1) >= at {
		k--
	}
	return k
}

// idleCall is a session's call not in flight in an open loop: a chainOp
// (so that a workload's per-chain state is never shared by two outstanding
// calls) and the time its last call completed (zero before its first).
type idleCall struct {
	op   opFunc
	free time.Time
}

// paced issues calls on a fixed schedule (Config.Rate): call k is due
// k/Rate after paced starts and goes to session k mod len(slots), which
// holds the session's idle calls. A call due while its session has none
// idle waits for one; the other sessions' calls do not wait for it.
// Latency is counted from the due time, so a server that falls behind
// shows it as latency (no coordinated omission). The load generator's own
// lateness, from when a call could be sent (due, with an idle call of its
// session) until it was, is recorded apart as well (recorder.sendLate). Whether
// a call is measured depends on its due time, not on when it could be sent:
// the calls due during the warm-up are not measured, even when sent after
// it; those due in the measured window are, even when sent after its end.
// It returns when no more calls are due (pacedAdmit); the calls still
// outstanding complete on their own.
func (r *runner) paced(slots []chan idleCall, recs []*recorder) {
	s := schedule{start: time.Since(r.t0), interval: float64(time.Second) / r.cfg.Rate}
	var wg sync.WaitGroup
	for i := range slots {
		wg.Go(func() { r.pacedSession(s, int64(i), int64(len(slots)), slots[i], recs[i]) })
	}
	wg.Wait()
}

// pacedSession issues calls i, i+n, i+2n, ... of s on one session.
func (r *runner) pacedSession(s schedule, i, n int64, slot chan idleCall, rec *recorder) {
	for k := i; ; k += n {
		due := r.t0.Add(s.due(k))
		if d := time.Until(due); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-r.stopCh:
			}
			t.Stop()
		}
		issue, measured, done := r.pacedAdmit(s, k)
		if done {
			return
		}
		if !issue {
			continue
		}
		c := <-slot
		// The call could be sent at its due time or, when the session had
		// no idle call then, once one completed; any later is the load
		// generator's own lateness (its timer, its scheduling).
		late := time.Since(due)
		if c.free.After(due) {
			late = time.Since(c.free)
		}
		r.chains.Add(1)
		c.op(func(err error) {
			r.recordLate(rec, due, max(late, 0), measured, err)
			slot <- idleCall{op: c.op, free: time.Now()}
			r.chains.Done()
		})
	}
}

// pacedAdmit says whether call k of s, due now or earlier, is issued and
// whether it is measured: it is when it was due in the measured window,
// which begins at measureStart and ends at stopAt (duration) or after
// Config.Ops calls. done says that no later call is issued either: they
// are due after the window, or the run was stopped otherwise (cancelled,
// failed), when calls not yet issued are dropped.
func (r *runner) pacedAdmit(s schedule, k int64) (issue, measured, done bool) {
	phase := r.phase.Load()
	stop := r.stopAt.Load() // stored before phaseStop
	at := s.due(k)
	if stop != 0 && int64(at) >= stop {
		return false, false, true
	}
	ms := r.measureStart.Load()
	measured = ms != 0 && int64(at) >= ms
	switch {
	case phase == phaseStop && stop == 0:
		return false, false, true
	case phase == phaseStop && !measured:
		return false, false, false // a warm-up call found after the window
	case measured && r.opsMode && k >= s.first(time.Duration(ms))+r.cfg.Ops:
		return false, false, true
	}
	return true, measured, false
}

// sessionsLoop connects and closes sessions one after another.
func (r *runner) sessionsLoop(rec *recorder) {
	for {
		measured, ok := r.admit()
		if !ok {
			return
		}
		start := time.Now()
		c, err := r.connect(r.callCtx)
		if err == nil {
			err = c.Close() // a close the server did not confirm fails the cycle
		}
		r.record(rec, start, measured, err)
	}
}

// startProgress prints a progress line every interval until the returned
// function is called, which clears it.
func (r *runner) startProgress() (stop func()) {
	if r.cfg.Progress == nil {
		return func() {}
	}
	every := r.cfg.ProgressInterval
	if every == 0 {
		every = time.Second
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		lastCalls, lastT := int64(0), time.Now()
		for {
			select {
			case <-done:
				fmt.Fprintf(r.cfg.Progress, "\r%-78s\r", "")
				return
			case now := <-t.C:
				calls, ops := r.calls.Load(), r.ops.Load()
				rate := float64(calls-lastCalls) / now.Sub(lastT).Seconds()
				lastCalls, lastT = calls, now
				phase := "run"
				if r.phase.Load() == phaseWarmup {
					phase = "warm-up"
				}
				line := fmt.Sprintf("%s %s %6.1fs  ops %d  %.0f ops/s  errors %d",
					r.cfg.Workload, phase, time.Since(r.t0).Seconds(), ops, rate, r.errs.Load())
				fmt.Fprintf(r.cfg.Progress, "\r%-78s", line)
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
