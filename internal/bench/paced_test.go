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
	r, slot, rec := pacedSetup(rate, ops, callTime)
	r.chains.Go(func() { r.paced([]chan idleCall{slot}, []*recorder{rec}) })
	r.chains.Wait()
	return rec, time.Since(r.t0)
}

// pacedSetup makes a runner issuing rate calls a second, measuring ops
// calls from its start, and one session's idle call, which takes callTime.
func pacedSetup(rate float64, ops int64, callTime time.Duration) (*runner, chan idleCall, *recorder) {
	r := &runner{cfg: Config{Rate: rate, Ops: ops}, opsMode: true}
	r.tickets.Store(ops)
	r.measureStart.Store(1)
	r.phase.Store(phaseMeasure)
	rec := newRecorder()
	rec.trackLateness()
	slot := make(chan idleCall, 1)
	slot <- idleCall{op: func(done func(error)) {
		if callTime == 0 {
			done(nil)
			return
		}
		time.AfterFunc(callTime, func() { done(nil) })
	}}
	r.t0 = time.Now()
	return r, slot, rec
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

// TestPacedSendLateIsTheGenerators: calls the load generator sends after
// their due times while their session had an idle call are late by the
// generator's doing. Here the schedule starts 60 ms in the past (as if the
// generator's timer had fired that late), one call due every ms, each
// answered at once: the first call's latency from its due time is at least
// 60 ms and so is its send lateness, while the latency less the send
// lateness is the call's own, nowhere near 60 ms.
func TestPacedSendLateIsTheGenerators(t *testing.T) {
	r, slot, rec := pacedSetup(1000, 20, 0)
	r.t0 = r.t0.Add(-time.Second)
	s := schedule{start: time.Since(r.t0) - 60*time.Millisecond, interval: float64(time.Millisecond)}
	r.pacedSession(s, 0, 1, slot, rec)
	r.chains.Wait()
	lat, late, less := rec.hist.Percentiles(), rec.sendLate.Percentiles(), rec.lessLate.Percentiles()
	if n := rec.sendLate.Count(); n != 20 || rec.lessLate.Count() != 20 {
		t.Fatalf("send lateness of %d calls, latency less it of %d, want 20 each", n, rec.lessLate.Count())
	}
	if lat.Max < 60_000 || late.Max < 60_000 {
		t.Errorf("max latency %d µs, max send lateness %d µs, want both at least 60000", lat.Max, late.Max)
	}
	if less.Max >= 60_000 {
		t.Errorf("max latency less send lateness %d µs: the generator's lateness was counted as the server's", less.Max)
	}
}

// TestPacedSlotWaitIsTheServers: a call that waits for its session's idle
// call waits on the server, which is not the generator's lateness: as in
// TestPacedCountsFromDueTime, the last of 20 calls of 5 ms each, one due
// every ms, has a latency of at least 81 ms, less send lateness too.
func TestPacedSlotWaitIsTheServers(t *testing.T) {
	rec, _ := pacedRun(t, 1000, 20, 5*time.Millisecond)
	if less := rec.lessLate.Percentiles(); less.Max < 81_000 {
		t.Errorf("max latency less send lateness %d µs, want at least 81000: the wait for an idle call was taken for the generator's", less.Max)
	}
	if late := rec.sendLate.Percentiles(); late.Max >= 60_000 {
		t.Errorf("max send lateness %d µs, want far below the 81 ms wait for an idle call", late.Max)
	}
}
