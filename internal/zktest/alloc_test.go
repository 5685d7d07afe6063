package zktest_test

import (
	"testing"

	"github.com/paddockhq/paddock/internal/zktest"
)

var allocSink []byte

// TestBytesAllocatedPerCall checks the measurement against known allocations.
func TestBytesAllocatedPerCall(t *testing.T) {
	got := zktest.BytesAllocatedPerCall(10, func() { allocSink = make([]byte, 1<<20) })
	if got < 1<<20 || got > 1<<20+4096 {
		t.Errorf("1 MiB per call measured as %d bytes", got)
	}
	if got := zktest.BytesAllocatedPerCall(10, func() {}); got > 1024 {
		t.Errorf("no allocation measured as %d bytes per call", got)
	}
}
