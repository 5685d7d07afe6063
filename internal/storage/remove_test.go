package storage

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestRemoveInSteps checks that a file is renamed out of the way, cut a
// step at a time with a pause after each cut, and then deleted.
func TestRemoveInSteps(t *testing.T) {
	tests := []struct {
		name      string
		size      int64
		step      int64
		wantSizes []int64 // the dropped file's size at each pause
	}{
		{"several steps", 20 << 10, 8 << 10, []int64{12 << 10, 4 << 10}},
		{"exact multiple", 16 << 10, 8 << 10, []int64{8 << 10}},
		{"smaller than a step", 5 << 10, 8 << 10, nil},
		{"empty", 0, 8 << 10, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "0000000000000001-0000000000000001.snap")
			if err := os.WriteFile(p, make([]byte, tt.size), 0o640); err != nil {
				t.Fatal(err)
			}
			var sizes []int64
			sleep := func(d time.Duration) {
				if d != removePause {
					t.Errorf("paused %v, want %v", d, removePause)
				}
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the file keeps its name while it is freed: %v", err)
				}
				fi, err := os.Stat(p + dropSuffix)
				if err != nil {
					t.Fatalf("while freeing: %v", err)
				}
				sizes = append(sizes, fi.Size())
			}
			if err := removeInSteps(p, tt.step, sleep); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sizes, tt.wantSizes) {
				t.Errorf("sizes at each pause %v, want %v", sizes, tt.wantSizes)
			}
			des, err := os.ReadDir(dir)
			if err != nil || len(des) != 0 {
				t.Fatalf("directory after removal: %v, %v; want it empty", des, err)
			}
		})
	}
	if err := removeInSteps(filepath.Join(t.TempDir(), "missing"), removeStep, time.Sleep); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("removing a missing file: %v, want ErrNotExist", err)
	}
}

// TestRemoveInStepsSyncsRenameFirst checks that the rename out of the log
// is durable (the directory synced) before the file is cut or unlinked:
// otherwise a crash could leave a cut WAL segment under its own name,
// which OpenWAL refuses as corruption, or the removal of a later segment
// durable while an earlier one's is not, a missing segment.
func TestRemoveInStepsSyncsRenameFirst(t *testing.T) {
	for _, size := range []int64{20 << 10, 5 << 10} {
		dir := t.TempDir()
		p := filepath.Join(dir, "0000000000000001-0000000000000001.wal")
		if err := os.WriteFile(p, make([]byte, size), 0o640); err != nil {
			t.Fatal(err)
		}
		var events []string
		orig := syncRenamed
		syncRenamed = func(d string) error {
			fi, err := os.Stat(p + dropSuffix)
			if err != nil || fi.Size() != size || d != dir {
				t.Errorf("directory %s synced with the dropped file at %v, %v; want it renamed and whole in %s", d, fi, err, dir)
			}
			events = append(events, "sync")
			return orig(d)
		}
		sleep := func(time.Duration) { events = append(events, "cut") }
		err := removeInSteps(p, 8<<10, sleep)
		syncRenamed = orig
		if err != nil {
			t.Fatal(err)
		}
		if len(events) == 0 || events[0] != "sync" {
			t.Errorf("%d-byte file: events %v, want the directory synced after the rename, before any cut", size, events)
		}
	}
}
