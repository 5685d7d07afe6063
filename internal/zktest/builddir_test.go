package zktest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/paddockhq/paddock/internal/zktest"
)

func TestRemoveStaleBuildDirs(t *testing.T) {
	// A pid that certainly belonged to a process that has exited.
	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	dead := strconv.Itoa(done.Process.Pid)
	live := strconv.Itoa(os.Getpid())

	tests := []struct {
		name     string
		keep     bool
		describe string
	}{
		{zktest.BuildDirPrefix + dead + "-123", false, "directory of an exited process"},
		{zktest.BuildDirPrefix + live + "-456", true, "directory of a running process"},
		{zktest.BuildDirPrefix + "789", true, "name without a pid"},
		{zktest.BuildDirPrefix + "x-1", true, "name with a non-numeric pid"},
		{"unrelated-" + dead + "-1", true, "unrelated directory"},
	}
	tmp := t.TempDir()
	for _, tc := range tests {
		if err := os.MkdirAll(filepath.Join(tmp, tc.name, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	zktest.RemoveStaleBuildDirs(tmp)
	for _, tc := range tests {
		_, err := os.Stat(filepath.Join(tmp, tc.name))
		if kept := err == nil; kept != tc.keep {
			t.Errorf("%s (%s): kept = %v, want %v", tc.describe, tc.name, kept, tc.keep)
		}
	}
}
