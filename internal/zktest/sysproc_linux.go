package zktest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// sysProcAttr asks Linux to kill the server if the test binary dies without
// running its cleanups, so no server outlives the test run.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// waitStopped waits until every thread of process pid is stopped (state T
// in /proc), since SIGSTOP takes effect only when each thread next runs:
// a thread in the middle of answering a request could otherwise finish it
// after Pause returned.
func waitStopped(pid int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		stopped, err := allThreadsStopped(pid)
		if err != nil || stopped {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pid %d not stopped after %v", pid, timeout)
		}
		time.Sleep(time.Millisecond) // polling /proc: there is no event to wait on
	}
}

func allThreadsStopped(pid int) (bool, error) {
	stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(stats) == 0 {
		return false, fmt.Errorf("threads of pid %d: %v", pid, err)
	}
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread exited
		}
		// The state follows the parenthesised command name.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) {
			return false, fmt.Errorf("%s: unexpected format", f)
		}
		if st := b[i+2]; st != 'T' && st != 't' {
			return false, nil
		}
	}
	return true, nil
}
