package fourlw_test

import "syscall"

// sysProcAttr makes Linux kill a server this package started if the test
// binary dies without running its cleanups.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
