package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/paddockhq/paddock/zk"
)

// errFanoutTimeout ends a watch-fanout run whose round did not complete.
var errFanoutTimeout = errors.New("watch-fanout: a round did not complete within the session timeout")

// fanout is the watch-fanout workload: cfg.Watchers sessions keep a one-time
// data watch (exists) on one znode; a writer session sets its data; a round
// ends when every watcher has been notified and has set its watch again.
// Rounds run one after another.
type fanout struct {
	r        *runner
	path     string
	writer   *session
	watchers []*session
	rec      *recorder // the writes

	mu         sync.Mutex
	fanoutHist *Histogram // per round: write to last notification
	notifyHist *Histogram // per notification: write to that notification
	roundHist  *Histogram // per round: write to the round's end
	measured   bool       // the round's write is measured
	t0         time.Time  // when the round's write was issued
	last       time.Time  // the round's latest notification so far
	end        time.Time  // when the round was complete
	notified   int        // notifications this round
	armed      int        // watches set (again) this round
	wrote      bool       // the write's callback ran
	writeErr   error
	roundErrs  []error
	done       chan struct{} // closed when the round is complete
}

// openFanout opens the watching sessions and the writer.
func (r *runner) openFanout(ctx context.Context) (*fanout, error) {
	ss, err := r.openSessions(ctx, r.cfg.Watchers+1)
	if err != nil {
		return nil, err
	}
	return &fanout{
		r:          r,
		path:       r.fanoutPath(),
		writer:     ss[0],
		watchers:   ss[1:],
		rec:        ss[0].rec,
		fanoutHist: NewHistogram(),
		notifyHist: NewHistogram(),
		roundHist:  NewHistogram(),
	}, nil
}

func (f *fanout) close() {
	closeSessions(append([]*session{f.writer}, f.watchers...))
}

// arm sets watcher w's watch; the callback counts it.
func (f *fanout) arm(w *session) {
	var watcher zk.WatcherFunc
	watcher = func(e zk.Event) {
		if e.Type == zk.EventNone {
			return // a session state change
		}
		f.notify(w, e)
	}
	w.conn.ExistsAsync(f.r.callCtx, f.path, watcher, func(_ bool, _ *zk.Stat, err error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if err != nil {
			f.roundErrs = append(f.roundErrs, fmt.Errorf("set watch: %w", err))
		}
		f.armed++
		f.checkLocked()
	})
}

// notify records one notification and sets the watch again.
func (f *fanout) notify(w *session, e zk.Event) {
	now := time.Now()
	f.mu.Lock()
	if e.Type != zk.EventNodeDataChanged {
		f.roundErrs = append(f.roundErrs, fmt.Errorf("watcher %d: unexpected event %v", w.id, e.Type))
	}
	f.notified++
	// Watchers' notifications take the lock in any order: keep the latest.
	if now.After(f.last) {
		f.last = now
	}
	if f.measured {
		f.notifyHist.Record(now.Sub(f.t0))
	}
	f.mu.Unlock()
	f.arm(w)
}

// checkLocked ends the round once everything it waits for has happened.
func (f *fanout) checkLocked() {
	n := len(f.watchers)
	complete := f.armed == n && f.wrote && (f.writeErr != nil || f.notified == n)
	if complete && f.done != nil {
		f.end = time.Now()
		close(f.done)
		f.done = nil
	}
}

// run sets the first watches, then runs rounds until admit says stop.
func (f *fanout) run(r *runner) {
	// The first round only sets the watches.
	f.mu.Lock()
	done := make(chan struct{})
	f.done, f.wrote = done, true
	f.notified = len(f.watchers)
	f.mu.Unlock()
	for _, w := range f.watchers {
		f.arm(w)
	}
	if !f.wait(done) {
		return
	}
	for {
		measured, ok := r.admit()
		if !ok {
			return
		}
		f.mu.Lock()
		done := make(chan struct{})
		f.done, f.measured = done, measured
		f.notified, f.armed, f.wrote, f.writeErr = 0, 0, false, nil
		t0 := time.Now()
		f.t0 = t0
		f.mu.Unlock()
		f.writer.conn.SetAsync(r.callCtx, f.path, r.value, -1, func(_ *zk.Stat, err error) {
			r.record(f.rec, t0, measured, err)
			f.mu.Lock()
			defer f.mu.Unlock()
			f.wrote, f.writeErr = true, err
			if err != nil {
				// No notification comes; the watches are still set.
				f.notified, f.armed = len(f.watchers), len(f.watchers)
			}
			f.checkLocked()
		})
		if !f.wait(done) {
			return
		}
		f.mu.Lock()
		if measured && f.writeErr == nil {
			f.fanoutHist.Record(f.last.Sub(f.t0))
			f.roundHist.Record(f.end.Sub(f.t0))
		}
		writeErr := f.writeErr
		f.mu.Unlock()
		if final(writeErr) {
			// The writer's session is over: every later round would fail
			// at once. The rounds stop, as a closed loop stops on such an
			// error (the run then ends early and fails).
			return
		}
	}
}

// wait waits for a round to complete and counts its errors (always as
// measured ones, warm-up or not: a failed round ends the run). It returns
// false, and stops the run, when the round does not complete within the
// session timeout or a watch went wrong.
func (f *fanout) wait(done chan struct{}) bool {
	r := f.r
	t := time.NewTimer(r.cfg.SessionTimeout)
	defer t.Stop()
	var timeout error
	select {
	case <-done:
	case <-t.C:
		timeout = errFanoutTimeout
	}
	f.mu.Lock()
	errs := append(f.roundErrs, timeout)
	f.roundErrs = nil
	f.mu.Unlock()
	failed := false
	for _, err := range errs {
		if err != nil {
			r.record(f.rec, time.Now(), true, err)
			failed = true
		}
	}
	if failed {
		f.r.phase.Store(phaseStop)
	}
	return !failed
}
