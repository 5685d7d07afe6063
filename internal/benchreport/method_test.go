package benchreport

import "testing"

// TestMethodNamesPrewarm checks the method line: the pre-warm of each other
// workload appears when the results record one, and older results (without
// the field) read as before.
func TestMethodNamesPrewarm(t *testing.T) {
	for _, tt := range []struct {
		each, want string
	}{
		{"", "10s pre-warm, 3 repetitions, a run measured 8s after 3s of warm-up"},
		{"0s", "10s pre-warm, 3 repetitions, a run measured 8s after 3s of warm-up"},
		{"3s", "10s pre-warm (then 3s of each other workload), 3 repetitions, a run measured 8s after 3s of warm-up"},
	} {
		st := Settings{Prewarm: "10s", PrewarmEach: tt.each, Reps: 3, Duration: "8s", Warmup: "3s"}
		if got := method(st); got != tt.want {
			t.Errorf("PrewarmEach %q: method = %q, want %q", tt.each, got, tt.want)
		}
	}
}
