package difftest

import (
	"fmt"
	"sync"
	"testing"
)

// fakeReporter records what runSeeds reports.
type fakeReporter struct {
	mu     sync.Mutex
	errors []string
}

func (*fakeReporter) Helper()             {}
func (*fakeReporter) Logf(string, ...any) {}
func (f *fakeReporter) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

// TestRunSeedsRetries checks that a seed that differs once is run again
// under another attempt number and passes, and that a seed that differs
// on every attempt fails, after seedAttempts runs.
func TestRunSeedsRetries(t *testing.T) {
	var mu sync.Mutex
	runs := map[uint64][]int{}
	run := func(seed uint64, attempt int) string {
		mu.Lock()
		runs[seed] = append(runs[seed], attempt)
		mu.Unlock()
		switch {
		case seed == 2 && attempt == 1: // a stall: differs once
			return "timeout"
		case seed == 3: // a difference in behaviour: every time
			return "differs"
		}
		return ""
	}
	var r fakeReporter
	runSeeds(&r, []uint64{1, 2, 3}, run)
	if len(r.errors) != 1 || r.errors[0] != "seed 3: differs" {
		t.Errorf("errors %q, want seed 3's alone", r.errors)
	}
	want := map[uint64]int{1: 1, 2: 2, 3: seedAttempts}
	for seed, n := range want {
		if got := runs[seed]; len(got) != n || got[len(got)-1] != n {
			t.Errorf("seed %d ran as attempts %v, want 1..%d", seed, got, n)
		}
	}
}
