//go:build !linux

package zktest

import (
	"syscall"
	"time"
)

// sysProcAttr has nothing to add outside Linux.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{}
}

// waitStopped cannot look at thread states outside Linux; it waits a
// moment for SIGSTOP to take effect.
func waitStopped(pid int, timeout time.Duration) error {
	time.Sleep(min(timeout, 50*time.Millisecond))
	return nil
}
