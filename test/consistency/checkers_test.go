package consistency_test

import (
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// The tests of this file feed each checker of the fault tests hand-made
// histories, good and bad, so that a pass of the fault tests means
// something: a checker that accepted everything would pass them all.

// TestKVCheckerHistories checks histories through checkKVHistory, as
// checkKV does: the settling of unknown outcomes, their return after
// everything else, then porcupine.
func TestKVCheckerHistories(t *testing.T) {
	const unknown = unknownReturn
	op := func(client int, call, ret int64, in kvInput, out kvOutput) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Call: call, Return: ret, Input: in, Output: out}
	}
	write := func(key int, v int64) kvInput { return kvInput{op: opWrite, key: key, value: v} }
	cas := func(key int, expect int32, v int64) kvInput {
		return kvInput{op: opCAS, key: key, value: v, version: expect}
	}
	read := func(key int) kvInput { return kvInput{op: opRead, key: key} }
	ok := func(version int32) kvOutput { return kvOutput{result: resOK, version: version} }
	saw := func(value int64, version int32) kvOutput {
		return kvOutput{result: resOK, value: value, version: version}
	}
	bad := kvOutput{result: resBadVersion}
	lost := kvOutput{result: resUnknown}
	a, b, c := kvValue(0, 1), kvValue(1, 1), kvValue(2, 1)

	for _, tc := range []struct {
		name    string
		history []porcupine.Operation
		want    porcupine.CheckResult
	}{
		{"good: writes, compare-and-sets, reads, closed by final reads", []porcupine.Operation{
			op(0, 0, 10, write(0, a), ok(1)),
			op(1, 5, 15, read(0), saw(0, 0)), // concurrent with the write
			op(1, 20, 30, cas(0, 1, b), ok(2)),
			op(2, 25, 35, cas(0, 1, c), bad), // lost the race
			op(0, 40, 50, read(0), saw(b, 2)),
			op(0, 60, 70, write(1, c), ok(1)),
			op(3, 100, 110, read(0), saw(b, 2)),
			op(3, 120, 130, read(1), saw(c, 1)),
		}, porcupine.Ok},
		{"bad: stale read after an acknowledged write", []porcupine.Operation{
			op(0, 0, 10, write(0, a), ok(1)),
			op(1, 20, 30, read(0), saw(0, 0)),
		}, porcupine.Illegal},
		{"bad: acknowledged write lost, overwritten at its version", []porcupine.Operation{
			op(0, 0, 10, write(0, a), ok(1)),
			op(1, 20, unknown, write(0, b), lost),
			op(3, 100, 110, read(0), saw(b, 1)),
		}, porcupine.Illegal},
		{"bad: acknowledged write lost, the final read misses it", []porcupine.Operation{
			op(0, 0, 10, write(0, a), ok(1)),
			op(1, 0, 10, write(0, b), ok(2)),
			op(3, 100, 110, read(0), saw(a, 1)),
		}, porcupine.Illegal},
		{"bad: synced read goes back in time", []porcupine.Operation{
			op(0, 0, 50, write(0, a), ok(1)),
			op(1, 10, 20, read(0), saw(a, 1)),
			op(2, 30, 40, read(0), saw(0, 0)),
		}, porcupine.Illegal},
		{"bad: two acknowledged writes made the same version", []porcupine.Operation{
			op(0, 0, 10, write(0, a), ok(1)),
			op(1, 0, 10, write(0, b), ok(1)),
			op(3, 100, 110, read(0), saw(b, 1)),
		}, porcupine.Illegal},
		{"bad: compare-and-set on an old version succeeded", []porcupine.Operation{
			op(0, 0, 10, write(0, a), ok(1)),
			op(1, 20, 30, cas(0, 0, b), ok(2)),
		}, porcupine.Illegal},
		{"bad: compare-and-set on the current version refused", []porcupine.Operation{
			op(0, 0, 10, write(0, a), ok(1)),
			op(1, 20, 30, cas(0, 1, b), bad),
			op(3, 100, 110, read(0), saw(a, 1)),
		}, porcupine.Illegal},
		{"bad: a value nobody wrote", []porcupine.Operation{
			op(0, 0, 10, write(0, a), ok(1)),
			op(3, 100, 110, read(0), saw(c, 1)),
		}, porcupine.Illegal},
		{"bad: unknown write seen before its call", []porcupine.Operation{
			op(1, 0, 10, read(0), saw(a, 1)),
			op(0, 20, unknown, write(0, a), lost),
		}, porcupine.Illegal},
		{"bad: unknown compare-and-set on a version it cannot match, seen", []porcupine.Operation{
			op(0, 0, 10, write(0, a), ok(1)),
			op(1, 20, unknown, cas(0, 0, b), lost),
			op(3, 100, 110, read(0), saw(b, 2)),
		}, porcupine.Illegal},
		// A write of unknown outcome may take effect at any time after
		// its call: after the error that left it unknown (here at 15,
		// which is not recorded), and after later operations of its own
		// client.
		{"good: unknown write takes effect after its error", []porcupine.Operation{
			op(0, 0, unknown, write(0, a), lost),
			op(0, 20, 30, read(0), saw(0, 0)),
			op(1, 40, 50, read(0), saw(a, 1)),
			op(3, 100, 110, read(0), saw(a, 1)),
		}, porcupine.Ok},
		{"good: unknown write takes effect after the last read", []porcupine.Operation{
			op(0, 0, unknown, write(0, a), lost),
			op(1, 0, 10, write(0, b), ok(1)),
			op(3, 100, 110, read(0), saw(b, 1)),
		}, porcupine.Ok},
		{"good: unknown write never applied", []porcupine.Operation{
			op(0, 0, unknown, write(0, a), lost),
			op(1, 20, 30, write(0, b), ok(1)),
			op(3, 100, 110, read(0), saw(b, 1)),
		}, porcupine.Ok},
		{"good: unknown write needed by an acknowledged version (not dropped)", []porcupine.Operation{
			op(0, 0, unknown, write(0, a), lost),
			op(1, 20, 30, write(0, b), ok(2)),
			op(3, 100, 110, read(0), saw(b, 2)),
		}, porcupine.Ok},
		{"good: unknown compare-and-set applied", []porcupine.Operation{
			op(0, 0, 10, write(0, a), ok(1)),
			op(1, 20, unknown, cas(0, 1, b), lost),
			op(3, 100, 110, read(0), saw(b, 2)),
		}, porcupine.Ok},
		// Only an unknown write applied before it explains the refusal;
		// no read follows that would show the version it made.
		{"good: a refused compare-and-set explained by an unknown write", []porcupine.Operation{
			op(0, 0, 10, write(0, a), ok(1)),
			op(1, 20, unknown, write(0, b), lost),
			op(2, 40, 50, cas(0, 1, c), bad),
			op(3, 30, 35, read(0), saw(a, 1)),
		}, porcupine.Ok},
		{"good: a refused compare-and-set, unknown write never read", []porcupine.Operation{
			op(1, 0, unknown, write(0, b), lost),
			op(2, 10, 20, cas(0, 0, c), bad),
		}, porcupine.Ok},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := checkKVHistory(tc.history, 10*time.Second)
			if c.result != tc.want {
				t.Errorf("porcupine: %s, want %s", c.result, tc.want)
			}
			if err := c.err(); (err == nil) != (tc.want == porcupine.Ok) {
				t.Errorf("err() = %v for a history that is %s", err, tc.want)
			}
		})
	}
}

// TestKVCheckerGivesUp checks that a history porcupine could not decide
// in time fails the check: it was not checked.
func TestKVCheckerGivesUp(t *testing.T) {
	// Many concurrent writes of unknown outcome, none settled: each may be
	// applied or not, anywhere, and a read of a version none of them can
	// make leaves no linearization to find.
	var ops []porcupine.Operation
	for i := range 24 {
		ops = append(ops, porcupine.Operation{ClientId: i, Call: 0, Return: unknownReturn,
			Input: kvInput{op: opWrite, value: kvValue(i, 1)}, Output: kvOutput{result: resUnknown}})
	}
	ops = append(ops, porcupine.Operation{ClientId: 30, Call: 10, Return: 20,
		Input: kvInput{op: opRead}, Output: kvOutput{result: resOK, value: 0, version: 30}})
	c := checkKVHistory(ops, time.Millisecond)
	if c.result != porcupine.Unknown {
		t.Skipf("porcupine decided %s within %v: nothing to test", c.result, c.timeout)
	}
	if err := c.err(); err == nil {
		t.Error("a history porcupine gave up on passes the check")
	} else if !strings.Contains(err.Error(), "not checked") {
		t.Errorf("err() = %v, want it to say the history was not checked", err)
	}
}

// TestSessionOrder feeds the session-order checker of the unsynced reads.
func TestSessionOrder(t *testing.T) {
	type obs struct {
		write   bool
		key     int
		version int32
	}
	r := func(key int, v int32) obs { return obs{key: key, version: v} }
	w := func(key int, v int32) obs { return obs{write: true, key: key, version: v} }
	for _, tc := range []struct {
		name string
		obs  []obs
		bad  int // index of the violating observation, or -1
	}{
		{"good: versions go up, keys apart", []obs{r(0, 0), r(0, 2), r(1, 0), r(0, 2), w(0, 3), r(0, 3), r(0, 5), w(1, 1), r(1, 1)}, -1},
		{"bad: read goes back in time", []obs{r(0, 3), r(0, 4), r(0, 2)}, 2},
		{"bad: read below the session's own write", []obs{w(0, 4), r(0, 3)}, 1},
		{"bad: own write at a version already seen", []obs{r(0, 4), w(0, 4)}, 1},
		{"bad: own write below a version seen", []obs{r(2, 6), r(1, 0), w(2, 5)}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o sessionOrder
			for i, ob := range tc.obs {
				var v string
				if ob.write {
					v = o.wrote(ob.key, ob.version)
				} else {
					v = o.read(ob.key, ob.version)
				}
				if got := v != ""; got != (i == tc.bad) {
					t.Errorf("observation %d %+v: violation %q, want one: %v", i, ob, v, i == tc.bad)
				}
			}
		})
	}
}

// TestSeqViolations feeds the sequential-create checker one member's
// listing.
func TestSeqViolations(t *testing.T) {
	acked := map[string]string{"/seq/n-0000000000": "c0-0", "/seq/n-0000000002": "c1-0", "/seq/n-0000000003": "c0-2"}
	maybe := map[string]bool{"c0-1": true, "c1-1": true}
	for _, tc := range []struct {
		name  string
		names []string
		data  []string
		want  []string // a piece of each violation, in order
	}{
		{"good: the acknowledged creates and one of unknown outcome",
			[]string{"n-0000000000", "n-0000000001", "n-0000000002", "n-0000000003"},
			[]string{"c0-0", "c0-1", "c1-0", "c0-2"}, nil},
		{"bad: an acknowledged create is missing",
			[]string{"n-0000000000", "n-0000000003"},
			[]string{"c0-0", "c0-2"}, []string{"n-0000000002 (\"c1-0\") is missing"}},
		{"bad: a create applied twice",
			[]string{"n-0000000000", "n-0000000002", "n-0000000003", "n-0000000004"},
			[]string{"c0-0", "c1-0", "c0-2", "c0-2"}, []string{"applied twice", "n-0000000004 holds \"c0-2\", which no create"}},
		{"bad: a create of unknown outcome applied twice",
			[]string{"n-0000000000", "n-0000000001", "n-0000000002", "n-0000000003", "n-0000000004"},
			[]string{"c0-0", "c1-1", "c1-0", "c0-2", "c1-1"}, []string{"applied twice"}},
		{"bad: an acknowledged name holds other data",
			[]string{"n-0000000000", "n-0000000002", "n-0000000003"},
			[]string{"c0-0", "c1-1", "c0-2"}, []string{"n-0000000002 holds \"c1-1\", want \"c1-0\""}},
		{"bad: data no create wrote",
			[]string{"n-0000000000", "n-0000000002", "n-0000000003", "n-0000000004"},
			[]string{"c0-0", "c1-0", "c0-2", "c9-9"}, []string{"which no create"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := seqViolations(acked, maybe, tc.names, tc.data)
			if len(got) != len(tc.want) {
				t.Fatalf("violations %q, want %d", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("violation %q, want it to say %q", got[i], w)
				}
			}
		})
	}
}

// TestSeqOrderViolations feeds the check that a client's acknowledged
// creates are numbered in the order it made them.
func TestSeqOrderViolations(t *testing.T) {
	for _, tc := range []struct {
		name       string
		acked      map[string]string
		violations int
	}{
		{"good: each client's creates in order, interleaved",
			map[string]string{"/seq/n-0000000000": "c0-0", "/seq/n-0000000001": "c1-0", "/seq/n-0000000005": "c0-3", "/seq/n-0000000007": "c1-1"}, 0},
		{"bad: a later create numbered before an earlier one",
			map[string]string{"/seq/n-0000000004": "c0-0", "/seq/n-0000000001": "c1-0", "/seq/n-0000000002": "c0-3"}, 1},
		{"bad: two clients out of order",
			map[string]string{"/seq/n-0000000004": "c0-0", "/seq/n-0000000002": "c0-1", "/seq/n-0000000009": "c1-0", "/seq/n-0000000003": "c1-1"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := seqOrderViolations(tc.acked); len(got) != tc.violations {
				t.Fatalf("violations %q, want %d", got, tc.violations)
			}
		})
	}
}

// TestLockSharedExclusion feeds the lock checker takes and gives.
func TestLockSharedExclusion(t *testing.T) {
	type step struct {
		take bool
		id   int
	}
	take := func(id int) step { return step{true, id} }
	give := func(id int) step { return step{false, id} }
	for _, tc := range []struct {
		name       string
		steps      []step
		violations int
	}{
		{"good: one holder at a time", []step{take(0), give(0), take(1), give(1), take(0), give(0), take(2)}, 0},
		{"bad: two holders at once", []step{take(0), take(1)}, 1},
		{"bad: a third while two hold", []step{take(0), give(0), take(1), take(2), give(1), take(0)}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &lockShared{clock: newClock()}
			for _, st := range tc.steps {
				if st.take {
					s.take(st.id, "n")
				} else {
					s.give(st.id)
				}
			}
			if got := s.violations(); len(got) != tc.violations {
				t.Errorf("violations %q, want %d", got, tc.violations)
			}
		})
	}
}

// TestExpiryTime feeds the check of when a cut-off session's ephemeral
// went.
func TestExpiryTime(t *testing.T) {
	const timeout = 4 * time.Second
	opened := time.Now()
	cut := opened.Add(50 * time.Millisecond) // just after the ephemeral was created
	for _, tc := range []struct {
		name    string
		deleted time.Time
		ok      bool
	}{
		{"good: a timeout after the last contact", opened.Add(timeout + 100*time.Millisecond), true},
		{"good: a new leader's whole timeout later", cut.Add(2 * timeout), true},
		{"bad: two thirds of a timeout after the cut", cut.Add(timeout * 7 / 10), false},
		{"bad: right after the cut", cut.Add(10 * time.Millisecond), false},
		{"bad: never expired in time", cut.Add(3*timeout + time.Second), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := checkExpiryTime(opened, cut, tc.deleted, timeout); (err == nil) != tc.ok {
				t.Errorf("checkExpiryTime: %v, want ok %v", err, tc.ok)
			}
		})
	}
}
