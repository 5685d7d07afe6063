//go:build !linux

package server

// systemElapsedMillis has no system monotonic clock to read here:
// elapsedMillis counts from when the process started.
func systemElapsedMillis() (int64, bool) { return 0, false }
