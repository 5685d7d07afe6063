//go:build linux

package server

import "golang.org/x/sys/unix"

// systemElapsedMillis reads the system's monotonic clock (CLOCK_MONOTONIC,
// which HotSpot's System.nanoTime reads on Linux) in milliseconds, or
// returns false if it cannot.
func systemElapsedMillis() (int64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0, false
	}
	return ts.Nano() / 1e6, true
}
