//go:build !linux

package fourlw_test

import "syscall"

// sysProcAttr has nothing to add outside Linux.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
