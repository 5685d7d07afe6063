//go:build unix

package bench

import (
	"syscall"
	"time"
)

// selfCPU returns the user+system CPU time this process has used so far
// (getrusage(RUSAGE_SELF), microsecond resolution), and whether it could.
func selfCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
