package zktest_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
)

// cleanupRecorder keeps the cleanups and errors of a starter instead of
// handing them to the real test, which runs them when the test wants.
type cleanupRecorder struct {
	testing.TB
	cleanups []func()
	errs     []string
}

func (r *cleanupRecorder) Helper()           {}
func (r *cleanupRecorder) Cleanup(f func())  { r.cleanups = append(r.cleanups, f) }
func (r *cleanupRecorder) Error(args ...any) { r.errs = append(r.errs, fmt.Sprint(args...)) }
func (r *cleanupRecorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *cleanupRecorder) runCleanups() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	r.cleanups = nil
}

// TestCleanupStopsPausedServer ends a test while its server is paused (a
// t.Fatal before Resume, say): the cleanup still stops the server at once
// and reports nothing, as the ensembles' cleanup does.
func TestCleanupStopsPausedServer(t *testing.T) {
	rec := &cleanupRecorder{TB: t}
	p := zktest.StartPaddock(rec, zktest.PaddockOptions{})
	pid := p.Pid()
	defer syscall.Kill(pid, syscall.SIGKILL) // should the cleanup leave it
	if err := p.Pause(); err != nil {
		rec.runCleanups()
		t.Fatal(err)
	}
	start := time.Now()
	rec.runCleanups()
	took := time.Since(start)
	if len(rec.errs) > 0 {
		t.Errorf("the cleanup of a paused server reported %q", rec.errs)
	}
	if took > 5*time.Second {
		t.Errorf("the cleanup of a paused server took %v", took)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("pid %d still exists after the cleanup", pid)
	}
}
