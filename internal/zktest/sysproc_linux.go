package zktest

import "syscall"

// sysProcAttr asks Linux to kill the server if the test binary dies without
// running its cleanups, so no server outlives the test run.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
