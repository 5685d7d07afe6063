package storage

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestMkdirAllDurableSyncsParents: every directory MkdirAllDurable creates
// has its parent synced, outermost first, and one that exists already
// costs nothing.
func TestMkdirAllDurableSyncsParents(t *testing.T) {
	var synced []string
	old := syncCreated
	syncCreated = func(dir string) error { synced = append(synced, dir); return syncDir(dir) }
	t.Cleanup(func() { syncCreated = old })

	root := t.TempDir()
	dir := filepath.Join(root, "a", "b", "c")
	if err := MkdirAllDurable(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("%s not created: %v", dir, err)
	}
	want := []string{root, filepath.Join(root, "a"), filepath.Join(root, "a", "b")}
	if !slices.Equal(synced, want) {
		t.Fatalf("synced %q, want %q", synced, want)
	}
	synced = nil
	if err := MkdirAllDurable(dir, 0o750); err != nil || len(synced) != 0 {
		t.Fatalf("again: err %v, synced %q; want nothing to do", err, synced)
	}
}
