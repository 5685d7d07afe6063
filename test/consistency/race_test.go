//go:build race

package consistency_test

// raceEnabled shortens the workloads under the race detector, which slows
// every member and client several times over.
const raceEnabled = true
