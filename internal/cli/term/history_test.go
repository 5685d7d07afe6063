package term

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/peterh/liner"
)

// newEditor returns a liner.State for history tests; without a terminal on
// stdin it does not touch the terminal mode.
func newEditor(t *testing.T, lines ...string) *liner.State {
	t.Helper()
	ed := liner.NewLiner()
	t.Cleanup(func() { ed.Close() })
	for _, l := range lines {
		ed.AppendHistory(l)
	}
	return ed
}

func TestSaveAndLoadHistory(t *testing.T) {
	long := strings.Repeat("x", maxHistoryLine+1)
	tests := []struct {
		name  string
		lines []string
		limit int
		want  []string
	}{
		{"all", []string{"ls /", "get /a"}, 10, []string{"ls /", "get /a"}},
		{"last lines kept", []string{"a", "b", "c", "d"}, 2, []string{"c", "d"}},
		{"too long lines skipped", []string{"a", long, "b"}, 10, []string{"a", "b"}},
		{"empty", nil, 10, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "history")
			if err := saveHistory(newEditor(t, tt.lines...), path, tt.limit); err != nil {
				t.Fatal(err)
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if perm := info.Mode().Perm(); perm != 0o600 {
				t.Errorf("mode %v, want 0600", perm)
			}
			ed := newEditor(t)
			if err := loadHistory(ed, path); err != nil {
				t.Fatal(err)
			}
			if got := historyLines(ed); !slices.Equal(got, tt.want) {
				t.Errorf("reloaded %q, want %q", got, tt.want)
			}
			entries, _ := os.ReadDir(filepath.Dir(path))
			if len(entries) != 1 {
				t.Errorf("directory holds %d files, want only the history (no temporary left)", len(entries))
			}
		})
	}
}

func TestSaveHistoryReplacesWideOpenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := saveHistory(newEditor(t, "new"), path, 10); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != "new\n" || info.Mode().Perm() != 0o600 {
		t.Errorf("file = %q mode %v, want \"new\\n\" 0600", data, info.Mode().Perm())
	}
}

func TestLoadHistoryErrors(t *testing.T) {
	dir := t.TempDir()
	if err := loadHistory(newEditor(t), filepath.Join(dir, "missing")); err != nil {
		t.Errorf("missing file: %v, want nil", err)
	}
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("ok\n\xff\xfe\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := loadHistory(newEditor(t), bad); err == nil {
		t.Error("invalid UTF-8 history loaded without error")
	}
	if err := loadHistory(newEditor(t), dir); err == nil {
		t.Error("a directory loaded as history without error")
	}
}

func TestSaveHistoryUnwritable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "dir", "history")
	if err := saveHistory(newEditor(t, "a"), path, 10); err == nil {
		t.Error("saving into a missing directory succeeded")
	}
}

func TestTrimHistory(t *testing.T) {
	ed := newEditor(t)
	for i := range 10 {
		ed.AppendHistory(fmt.Sprint(i))
		trimHistory(ed, 3)
	}
	if got, want := historyLines(ed), []string{"7", "8", "9"}; !slices.Equal(got, want) {
		t.Errorf("history %q, want %q", got, want)
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		ok   bool
	}{
		{"zero", Options{}, true},
		{"limit", Options{HistoryLimit: 10}, true},
		{"negative limit", Options{HistoryLimit: -1}, false},
		{"limit above liner's", Options{HistoryLimit: DefaultHistoryLimit + 1}, false},
		{"negative timeout", Options{CompleteTimeout: -1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.opts.Validate(); (err == nil) != tt.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}
