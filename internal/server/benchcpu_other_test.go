//go:build !unix

package server

import "time"

// processCPU returns 0: the process's CPU time is read on unix only.
func processCPU() time.Duration { return 0 }
