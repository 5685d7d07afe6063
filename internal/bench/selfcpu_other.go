//go:build !unix

package bench

import "time"

// selfCPU reports that this platform gives no CPU time of the process.
func selfCPU() (time.Duration, bool) { return 0, false }
