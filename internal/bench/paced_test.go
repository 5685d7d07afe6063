package bench

import (
	"testing"
	"time"
)

// pacedRun runs paced over one session with one idle call whose calls take
// callTime each, until ops calls are measured, and returns the recorder and
// the time the run took.
func pacedRun(t *testing.T, rate float64, ops int64, callTime time.Duration) (*recorder, time.Duration) {
	t.Helper()
	r := &runner{cfg: Config{Rate: rate, Ops: ops}, opsMode: true}
	r.tickets.Store(ops)
	r.measureStart.Store(1)
	r.phase.Store(phaseMeasure)
	rec := newRecorder()
	slot := make(chan opFunc, 1)
	slot <- func(done func(error)) {
		if callTime == 0 {
			done(nil)
			return
		}
		time.AfterFunc(callTime, func() { done(nil) })
	}
	r.t0 = time.Now()
	r.chains.Go(func() { r.paced([]chan opFunc{slot}, []*recorder{rec}) })
	r.chains.Wait()
	return rec, time.Since(r.t0)
}

// TestPacedKeepsToSchedule: calls that complete at once are still issued no
// faster than the rate (call k is due k/rate after the start).
func TestPacedKeepsToSchedule(t *testing.T) {
	const rate, ops = 1000, 50
	rec, took := pacedRun(t, rate, ops, 0)
	if n := rec.hist.Count(); n != ops {
		t.Fatalf("%d calls measured, want %d", n, ops)
	}
	if min := time.Duration(ops-1) * time.Second / rate; took < min {
		t.Errorf("%d calls at %d/s took %v, want at least %v (the last call's due time)", ops, rate, took, min)
	}
}

// TestPacedCountsFromDueTime: when the server falls behind the schedule, a
// call's latency includes the time it waited past its due time. With one
// call outstanding at a time, 5 ms each and one due every 1 ms, call k
// cannot complete before 5(k+1) ms although it was due at k ms, so the last
// of 20 has a latency of at least 81 ms; timed from its issue it would be
// about 5 ms.
func TestPacedCountsFromDueTime(t *testing.T) {
	rec, _ := pacedRun(t, 1000, 20, 5*time.Millisecond)
	p := rec.hist.Percentiles()
	if rec.hist.Count() != 20 {
		t.Fatalf("%d calls measured, want 20", rec.hist.Count())
	}
	if p.Max < 81_000 {
		t.Errorf("max latency %d µs, want at least 81000: the wait behind the schedule is not counted", p.Max)
	}
}
