package storage_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/paddockhq/paddock/internal/storage"
)

func meta(index, term uint64) raftpb.SnapshotMetadata {
	return raftpb.SnapshotMetadata{Index: index, Term: term, ConfState: raftpb.ConfState{Voters: []uint64{1, 2, 3}}}
}

func body(index uint64) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("state-at-%d;", index)), 1000)
}

func saveSnap(t testing.TB, dir string, index, term uint64) string {
	t.Helper()
	p, err := storage.SaveSnapshot(dir, meta(index, term), func(w io.Writer) error {
		_, err := w.Write(body(index))
		return err
	})
	if err != nil {
		t.Fatalf("SaveSnapshot(%d): %v", index, err)
	}
	return p
}

// loadNewest loads the newest valid snapshot of dir and checks that
// streaming it (OpenSnapshot, as a leader sends it) gives the same body.
func loadNewest(t testing.TB, dir string) (*storage.Snapshot, []byte) {
	t.Helper()
	s, err := storage.LoadNewestSnapshot(dir, testLogger(t))
	if err != nil {
		t.Fatalf("LoadNewestSnapshot: %v", err)
	}
	r, err := storage.OpenSnapshot(storage.SnapshotInfo{Path: s.Path, Index: s.Meta.Index, Term: s.Meta.Term})
	if err != nil {
		t.Fatalf("OpenSnapshot(%s): %v", s.Path, err)
	}
	defer r.Close()
	streamed, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(streamed, s.Body) {
		t.Fatalf("%s: OpenSnapshot streams %d bytes, LoadNewestSnapshot read a body of %d", s.Path, len(streamed), len(s.Body))
	}
	body := bytes.Clone(s.Body)
	s.Close()
	if s.Body != nil {
		t.Fatal("Close left the body in place")
	}
	s.Close() // twice is harmless
	return s, body
}

func TestSnapshotRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if _, err := storage.LoadNewestSnapshot(dir, nil); !errors.Is(err, storage.ErrNoSnapshot) {
		t.Fatalf("empty directory: %v, want ErrNoSnapshot", err)
	}
	saveSnap(t, dir, 10, 1)
	p := saveSnap(t, dir, 0x1_0000_0005, 7)
	if filepath.Base(p) != "0000000100000005-0000000000000007.snap" {
		t.Fatalf("snapshot file name %s", filepath.Base(p))
	}
	s, b := loadNewest(t, dir)
	if s.Path != p || s.Meta.Index != 0x1_0000_0005 || s.Meta.Term != 7 || len(s.Meta.ConfState.Voters) != 3 {
		t.Fatalf("loaded %s %+v", s.Path, s.Meta)
	}
	if !bytes.Equal(b, body(0x1_0000_0005)) {
		t.Fatalf("body of %d bytes differs", len(b))
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*tmp*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

func TestSnapshotEmptyBody(t *testing.T) {
	dir := t.TempDir()
	if _, err := storage.SaveSnapshot(dir, meta(3, 1), func(io.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	s, b := loadNewest(t, dir)
	if len(b) != 0 || s.Meta.Index != 3 {
		t.Fatalf("got %d bytes, meta %+v", len(b), s.Meta)
	}
}

func TestSnapshotWriteFails(t *testing.T) {
	dir := t.TempDir()
	boom := errors.New("boom")
	_, err := storage.SaveSnapshot(dir, meta(5, 1), func(w io.Writer) error {
		_, _ = w.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("SaveSnapshot = %v, want boom", err)
	}
	if des, _ := os.ReadDir(dir); len(des) != 0 {
		t.Fatalf("files left after a failed snapshot: %v", des)
	}
}

func TestSnapshotFallsBackWhenDamaged(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"flipped body byte", func(t *testing.T, p string) { flipByte(t, p, int(fileSize(t, p)/2)) }},
		{"flipped metadata byte", func(t *testing.T, p string) { flipByte(t, p, 18) }},
		{"flipped checksum", func(t *testing.T, p string) { flipByte(t, p, int(fileSize(t, p)-1)) }},
		{"truncated", func(t *testing.T, p string) { must(t, os.Truncate(p, fileSize(t, p)-100)) }},
		{"cut to the header", func(t *testing.T, p string) { must(t, os.Truncate(p, 10)) }},
		{"empty", func(t *testing.T, p string) { must(t, os.Truncate(p, 0)) }},
		{"renamed to another index", func(t *testing.T, p string) {
			must(t, os.Rename(p, filepath.Join(filepath.Dir(p), "0000000000000063-0000000000000002.snap")))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			saveSnap(t, dir, 50, 1)
			older := saveSnap(t, dir, 80, 2)
			newest := saveSnap(t, dir, 90, 2)
			tt.damage(t, newest)
			s, b := loadNewest(t, dir)
			if s.Path != older || s.Meta.Index != 80 || !bytes.Equal(b, body(80)) {
				t.Fatalf("loaded %s (index %d), want the fallback %s", s.Path, s.Meta.Index, older)
			}
		})
	}
}

func TestSnapshotAllDamaged(t *testing.T) {
	dir := t.TempDir()
	for _, i := range []uint64{1, 2} {
		p := saveSnap(t, dir, i, 1)
		flipByte(t, p, 30)
	}
	_, err := storage.LoadNewestSnapshot(dir, nil)
	var ce *storage.CorruptError
	if !errors.Is(err, storage.ErrCorrupt) || !errors.As(err, &ce) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("LoadNewestSnapshot = %v, want corruption naming the directory", err)
	}
}

func TestPurgeSnapshots(t *testing.T) {
	tests := []struct {
		name     string
		have     int
		retain   int
		wantKept []uint64
	}{
		{"fewer than retained", 2, 3, []uint64{10, 20}},
		{"keeps newest", 6, 3, []uint64{40, 50, 60}},
		{"retain below minimum counts as 3", 6, 1, []uint64{40, 50, 60}},
		{"larger retain", 6, 5, []uint64{20, 30, 40, 50, 60}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for i := 1; i <= tt.have; i++ {
				saveSnap(t, dir, uint64(10*i), 1)
			}
			kept, err := storage.PurgeSnapshots(dir, tt.retain)
			if err != nil {
				t.Fatal(err)
			}
			list, err := storage.ListSnapshots(dir)
			if err != nil {
				t.Fatal(err)
			}
			var keptIdx, listIdx []uint64
			for _, k := range kept {
				keptIdx = append(keptIdx, k.Index)
			}
			for _, k := range list {
				listIdx = append(listIdx, k.Index)
			}
			if fmt.Sprint(keptIdx) != fmt.Sprint(tt.wantKept) || fmt.Sprint(listIdx) != fmt.Sprint(tt.wantKept) {
				t.Fatalf("kept %v, on disk %v, want %v", keptIdx, listIdx, tt.wantKept)
			}
		})
	}
}

// TestRemoveTempSnapshots checks that an unfinished snapshot is deleted and
// reported, and that a purged snapshot whose deletion a crash interrupted
// (renamed and half freed) is deleted too, silently.
func TestRemoveTempSnapshots(t *testing.T) {
	dir := t.TempDir()
	keep := saveSnap(t, dir, 5, 1)
	purged := saveSnap(t, dir, 3, 1)
	must(t, os.Rename(purged, purged+storage.DropSuffix))
	must(t, os.Truncate(purged+storage.DropSuffix, 100))
	tmp := filepath.Join(dir, "0000000000000009-0000000000000001.snap.tmp12345")
	must(t, os.WriteFile(tmp, []byte("half"), 0o640))
	removed, err := storage.RemoveTempSnapshots(dir)
	if err != nil || len(removed) != 1 || removed[0] != tmp {
		t.Fatalf("RemoveTempSnapshots = %v, %v", removed, err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("complete snapshot removed: %v", err)
	}
	if _, err := os.Stat(purged + storage.DropSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("half-deleted snapshot left: %v", err)
	}
	list, err := storage.ListSnapshots(dir)
	if err != nil || len(list) != 1 || list[0].Path != keep {
		t.Fatalf("ListSnapshots = %v, %v; want only %s", list, err, keep)
	}
}
