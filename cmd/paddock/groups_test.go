package main

import (
	"strings"
	"testing"
)

// TestUnknownSubcommandIsUsageError: a mistyped subcommand of a command
// that only groups others ("paddock data verfy DIR", "paddock completion
// bsh") is a usage error (exit 2), as "paddock foo" is. cobra printed the
// group's help and exited 0, so "paddock data verfy DIR && echo ok" said ok
// without verifying anything.
func TestUnknownSubcommandIsUsageError(t *testing.T) {
	for _, args := range [][]string{
		{"data", "verfy", "/nonexistent"},
		{"snapshot", "inspct", "/nonexistent"},
		{"wal", "dmp", "/nonexistent"},
		{"example", "mastr"},
		{"completion", "bsh"},
	} {
		code, out, errOut := runCmd(t, args...)
		if code != exitUsage {
			t.Errorf("%q: exit %d, want %d; stdout %q", args, code, exitUsage, out)
			continue
		}
		if want := `unknown command "` + args[1] + `"`; !strings.Contains(errOut, want) {
			t.Errorf("%q: stderr %q does not contain %q", args, errOut, want)
		}
	}
	// The group alone still prints its help, and its subcommands work.
	for _, args := range [][]string{{"data"}, {"completion"}, {"data", "--help"}} {
		code, out, errOut := runCmd(t, args...)
		if code != exitOK || !strings.Contains(out, "Usage:") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q: want its help", args, code, out, errOut)
		}
	}
	code, out, errOut := runCmd(t, "completion", "bash")
	if code != exitOK || !strings.Contains(out, "bash completion") {
		t.Errorf("completion bash: exit %d, stderr %q, stdout starts %.60q", code, errOut, out)
	}
}
