package zktest

import (
	"runtime"
	"runtime/debug"
)

// BytesAllocatedPerCall runs f once to warm up, then n times with the
// garbage collector off (so that no collection empties the sync.Pools a
// test may be checking), and returns the heap bytes the process allocated
// per call, averaged over the n calls.
func BytesAllocatedPerCall(n int, f func()) uint64 {
	f()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(n)
}
