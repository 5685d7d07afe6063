package bench

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/paddockhq/paddock/zk"
)

// Paths under the run's root.
func (r *runner) keyPath(i int) string            { return r.root + "/k-" + strconv.Itoa(i) }
func (r *runner) sessionDir(id int) string        { return r.root + "/s" + strconv.Itoa(id) }
func (r *runner) populateDir(i int64) string      { return r.root + "/p-" + strconv.FormatInt(i, 10) }
func (r *runner) fanoutPath() string              { return r.root + "/w" }
func childPath(parent string, name string) string { return parent + "/" + name }

// usesKeys reports whether the workload picks keys at random.
func usesKeys(w string) bool {
	switch w {
	case WorkloadSet, WorkloadGet, WorkloadExists, WorkloadChildren, WorkloadMixed, WorkloadMulti:
		return true
	}
	return false
}

// setup creates the run's root and what the workload needs under it.
func (r *runner) setup(ctx context.Context, c *zk.Conn) error {
	paths := []string{r.root}
	data := map[string][]byte{}
	w := r.cfg.Workload
	if usesKeys(w) {
		r.keys = make([]string, r.cfg.Keys)
		for i := range r.keys {
			r.keys[i] = r.keyPath(i)
			paths = append(paths, r.keys[i])
			data[r.keys[i]] = r.value
		}
	}
	switch w {
	case WorkloadChildren:
		for _, k := range r.keys {
			for j := range childrenPerKey {
				paths = append(paths, childPath(k, "c-"+strconv.Itoa(j)))
			}
		}
	case WorkloadCreate, WorkloadEphemeralChurn:
		for i := range r.cfg.Sessions {
			paths = append(paths, r.sessionDir(i))
		}
	case WorkloadPopulate:
		for i := range (r.cfg.Znodes + populateFanout - 1) / populateFanout {
			paths = append(paths, r.populateDir(i))
		}
	case WorkloadWatchFanout:
		paths = append(paths, r.fanoutPath())
	}
	return r.createAll(ctx, c, paths, data)
}

// createAll creates paths in order (parents first), many in flight at once
// on one session, which the server answers in order. data gives a znode's
// data; others get none.
func (r *runner) createAll(ctx context.Context, c *zk.Conn, paths []string, data map[string][]byte) error {
	sem := make(chan struct{}, setupInflight)
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	for _, p := range paths {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return context.Cause(ctx)
		}
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed {
			break
		}
		wg.Add(1)
		c.CreateAsync(r.callCtx, p, data[p], zk.OpenACL, zk.ModePersistent, func(_ string, err error) {
			if err != nil {
				mu.Lock()
				first = firstErr(first, err)
				mu.Unlock()
			}
			<-sem
			wg.Done()
		})
	}
	wg.Wait()
	return first
}

// firstErr returns a if it is not nil, else b.
func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// chainOp returns the call that chain number chain of session s repeats.
func (r *runner) chainOp(s *session, chain int) opFunc {
	c, ctx := s.conn, r.callCtx
	key := func() string { return r.keys[rand.IntN(len(r.keys))] }
	errOnly := func(done func(error)) func(*zk.Stat, error) {
		return func(_ *zk.Stat, err error) { done(err) }
	}
	get := func(done func(error)) {
		c.GetAsync(ctx, key(), nil, func(_ []byte, _ *zk.Stat, err error) { done(err) })
	}
	set := func(done func(error)) { c.SetAsync(ctx, key(), r.value, -1, errOnly(done)) }

	switch r.cfg.Workload {
	case WorkloadCreate:
		dir := r.sessionDir(s.id)
		return func(done func(error)) {
			p := dir + "/n-" + strconv.FormatInt(s.counter.Add(1), 10)
			c.CreateAsync(ctx, p, r.value, zk.OpenACL, zk.ModePersistent, func(_ string, err error) { done(err) })
		}
	case WorkloadSet:
		return set
	case WorkloadGet:
		return get
	case WorkloadExists:
		return func(done func(error)) {
			c.ExistsAsync(ctx, key(), nil, func(_ bool, _ *zk.Stat, err error) { done(err) })
		}
	case WorkloadChildren:
		return func(done func(error)) {
			c.ChildrenAsync(ctx, key(), nil, func(_ []string, _ *zk.Stat, err error) { done(err) })
		}
	case WorkloadMixed:
		return func(done func(error)) {
			if rand.Float64() < r.cfg.ReadRatio {
				get(done)
			} else {
				set(done)
			}
		}
	case WorkloadMulti:
		return func(done func(error)) {
			ops := make([]zk.Op, r.cfg.MultiOps)
			for i := range ops {
				ops[i] = &zk.SetDataOp{Path: key(), Data: r.value, Version: -1}
			}
			c.MultiAsync(ctx, ops, func(_ []zk.OpResult, err error) { done(err) })
		}
	case WorkloadEphemeralChurn:
		// Create an ephemeral znode, then delete it: two calls, each
		// measured. The chain's callbacks run one at a time, so pending
		// needs no lock.
		dir := r.sessionDir(s.id)
		pending := ""
		return func(done func(error)) {
			if pending != "" {
				p := pending
				pending = ""
				c.DeleteAsync(ctx, p, -1, done)
				return
			}
			p := dir + "/e-" + strconv.Itoa(chain) + "-" + strconv.FormatInt(s.counter.Add(1), 10)
			c.CreateAsync(ctx, p, r.value, zk.OpenACL, zk.ModeEphemeral, func(_ string, err error) {
				if err == nil {
					pending = p
				}
				done(err)
			})
		}
	case WorkloadPopulate:
		return func(done func(error)) {
			i := r.popIdx.Add(1) - 1
			p := r.populateDir(i/populateFanout) + "/n-" + strconv.FormatInt(i%populateFanout, 10)
			c.CreateAsync(ctx, p, r.value, zk.OpenACL, zk.ModePersistent, func(_ string, err error) { done(err) })
		}
	}
	panic("bench: no chain op for workload " + r.cfg.Workload) // Validate admits no other
}

// cleanupOutcome is what a cleanup did: how many of its calls failed
// (the first failure's error in first), how many znodes it deleted.
type cleanupOutcome struct {
	failed  int64
	first   error
	deleted int64
}

// cleanup deletes the run's root and everything under it, deepest znodes
// first, in multis of cleanupBatch deletes, and says how it went. It runs
// even after an interrupt.
func (r *runner) cleanup(c *zk.Conn) cleanupOutcome {
	ctx, cancel := context.WithTimeout(r.callCtx, cleanupTimeout)
	defer cancel()
	var (
		out   cleanupOutcome
		outMu sync.Mutex
	)
	// note records a call's error, or the deletes of a multi that
	// succeeded.
	note := func(err error, deleted int) {
		outMu.Lock()
		defer outMu.Unlock()
		if err != nil {
			out.first = firstErr(out.first, err)
			return
		}
		out.deleted += int64(deleted)
	}
	levels := [][]string{{r.root}}
	for {
		var next []string
		var mu sync.Mutex
		n := pipeline(ctx, levels[len(levels)-1], setupInflight, func(p string, done func(error)) {
			c.ChildrenAsync(ctx, p, nil, func(names []string, _ *zk.Stat, err error) {
				if errors.Is(err, zk.ErrNoNode) {
					err = nil // the root of a run that failed early
				}
				mu.Lock()
				for _, name := range names {
					next = append(next, childPath(p, name))
				}
				mu.Unlock()
				note(err, 0)
				done(err)
			})
		})
		out.failed += n
		if len(next) == 0 {
			break
		}
		levels = append(levels, next)
	}
	for i := len(levels) - 1; i >= 0; i-- {
		var batches [][]string
		for lv := levels[i]; len(lv) > 0; {
			n := min(len(lv), cleanupBatch)
			batches = append(batches, lv[:n])
			lv = lv[n:]
		}
		out.failed += pipeline(ctx, batches, cleanupInflight, func(b []string, done func(error)) {
			ops := make([]zk.Op, len(b))
			for j, p := range b {
				ops[j] = &zk.DeleteOp{Path: p, Version: -1}
			}
			c.MultiAsync(ctx, ops, func(_ []zk.OpResult, err error) {
				note(err, len(b))
				done(err)
			})
		})
	}
	if out.failed > 0 && out.first == nil {
		// Calls not issued because the cleanup's time ran out.
		out.first = ctx.Err()
	}
	return out
}

// pipeline calls issue for every item with at most limit outstanding, waits
// for all of them, and returns how many failed (or were not issued because
// ctx ended).
func pipeline[T any](ctx context.Context, items []T, limit int, issue func(item T, done func(error))) int64 {
	sem := make(chan struct{}, limit)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed int64
	)
	for i, it := range items {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return failed + int64(len(items)-i)
		}
		wg.Add(1)
		issue(it, func(err error) {
			if err != nil {
				mu.Lock()
				failed++
				mu.Unlock()
			}
			<-sem
			wg.Done()
		})
	}
	wg.Wait()
	return failed
}

// newResult returns a Result describing the configuration.
func (r *runner) newResult() *Result {
	cfg := r.cfg
	res := &Result{
		Workload:  cfg.Workload,
		Servers:   cfg.Servers,
		Sessions:  cfg.Sessions,
		Inflight:  cfg.Inflight,
		Rate:      cfg.Rate,
		ValueSize: cfg.ValueSize,
		WarmupS:   cfg.Warmup.Seconds(),
		Root:      r.root,
		Kept:      cfg.Keep,
	}
	if usesKeys(cfg.Workload) {
		res.Keys = cfg.Keys
	}
	switch cfg.Workload {
	case WorkloadMixed:
		ratio := cfg.ReadRatio
		res.ReadRatio = &ratio
	case WorkloadMulti:
		res.MultiOps = cfg.MultiOps
	case WorkloadWatchFanout:
		res.Watchers = cfg.Watchers
		res.Sessions, res.Inflight = cfg.Watchers+1, 1
	case WorkloadSessions:
		res.Inflight = 1
	case WorkloadPopulate:
		res.Znodes = cfg.Znodes
	}
	return res
}

// fill adds the measured figures to res.
func (r *runner) fill(res *Result, sessions []*session, fan *fanout) {
	recs := r.loopRecs
	for _, s := range sessions {
		recs = append(recs, s.rec)
	}
	if fan != nil {
		recs = append(recs, fan.rec)
		fp, np, rp := fan.fanoutHist.Percentiles(), fan.notifyHist.Percentiles(), fan.roundHist.Percentiles()
		res.FanoutLatency, res.NotifyLatency, res.RoundLatency = &fp, &np, &rp
	}
	hist, sendLate, lessLate := NewHistogram(), NewHistogram(), NewHistogram()
	var samples []sample
	for _, rec := range recs {
		rec.mu.Lock()
		hist.Merge(rec.hist)
		if rec.sendLate != nil {
			sendLate.Merge(rec.sendLate)
			lessLate.Merge(rec.lessLate)
		}
		samples = append(samples, rec.samples...)
		for k, n := range rec.errors {
			if res.ErrorCounts == nil {
				res.ErrorCounts = map[string]int64{}
			}
			res.ErrorCounts[k] += n
			res.Errors += n
		}
		rec.mu.Unlock()
	}
	r.samples = samples
	res.Ops = hist.Count()
	res.Latency = hist.Percentiles()
	if r.cfg.Rate > 0 {
		sp, lp := sendLate.Percentiles(), lessLate.Percentiles()
		res.SendLate, res.LatencyLessSendLate = &sp, &lp
	}
	res.WarmupErrors = r.warmupErrs.Load()
	window := r.window
	res.DurationS = window.Seconds()
	if window > 0 {
		res.OpsPerS = float64(res.Ops) / window.Seconds()
	}
}

// writeSamples writes the measured calls to Config.Samples, by start time.
func (r *runner) writeSamples() error {
	if r.cfg.Samples == nil {
		return nil
	}
	slices.SortFunc(r.samples, func(a, b sample) int { return cmp.Compare(a.startUs, b.startUs) })
	w := bufio.NewWriter(r.cfg.Samples)
	b := make([]byte, 0, 32)
	for _, s := range r.samples {
		b = strconv.AppendInt(b[:0], s.startUs, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, s.latencyUs, 10)
		b = append(b, '\n')
		w.Write(b)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing samples: %w", err)
	}
	return nil
}

// endWindow closes the measured window once every call has completed: it
// notes its length and samples the servers' CPU time and RSS.
func (r *runner) endWindow() error {
	r.measureStart.CompareAndSwap(0, int64(time.Since(r.t0))) // a run that ended in its warm-up
	r.window = time.Since(r.t0) - time.Duration(r.measureStart.Load())
	if self, ok := selfCPU(); ok && r.selfOK {
		r.self1 = self
	} else {
		r.selfOK = false // the window never began, or no CPU time here
	}
	if len(r.cfg.ServerPIDs) == 0 {
		return nil
	}
	cpu, err := r.proc.sampleCPU(r.cfg.ServerPIDs)
	if err != nil {
		return err
	}
	r.cpu1 = cpu
	if r.cpu0 == nil {
		r.cpu0 = cpu // the window never began
	}
	r.rss = make([]int64, len(r.cfg.ServerPIDs))
	for i, pid := range r.cfg.ServerPIDs {
		if r.rss[i], err = r.proc.rss(pid); err != nil {
			return err
		}
	}
	return nil
}

// clientFigures adds this process's own CPU time over the window per op:
// what the load generator took of a machine it shares with the servers.
func (r *runner) clientFigures(res *Result) {
	if !r.selfOK || res.Ops <= 0 {
		return
	}
	perOp := float64((r.self1 - r.self0).Microseconds()) / float64(res.Ops)
	res.ClientCPUUsPerOp = &perOp
}

// serverFigures adds the server processes' CPU time over the window and
// their RSS at its end.
func (r *runner) serverFigures(res *Result) {
	if r.cpu1 == nil {
		return
	}
	var total time.Duration
	var rssSum int64
	for i, pid := range r.cfg.ServerPIDs {
		d := r.cpu1[i] - r.cpu0[i]
		total += d
		rssSum += r.rss[i]
		res.ServerProcs = append(res.ServerProcs, ServerProc{PID: pid, CPUUs: float64(d.Microseconds()), RSSBytes: r.rss[i]})
	}
	perOp := 0.0
	if res.Ops > 0 {
		perOp = float64(total.Microseconds()) / float64(res.Ops)
	}
	res.ServerCPUUsPerOp, res.ServerRSSBytes = &perOp, &rssSum
}
