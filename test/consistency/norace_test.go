//go:build !race

package consistency_test

const raceEnabled = false
