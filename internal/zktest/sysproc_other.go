//go:build !linux

package zktest

import "syscall"

// sysProcAttr has nothing to add outside Linux.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{}
}
