package storage

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
)

// FuzzParseRecord feeds arbitrary payloads, sealed with a valid checksum,
// to the record decoders: bytes on disk whose checksum matches (a bug of an
// older build, or a collision) must give an error, never a panic.
func FuzzParseRecord(f *testing.F) {
	e := raftpb.Entry{Term: 1, Index: 2, Type: raftpb.EntryConfChange, Data: []byte("x")}
	b, _ := e.Marshal()
	f.Add(recordEntry, b)
	hs := raftpb.HardState{Term: 1, Vote: 2, Commit: 3}
	b, _ = hs.Marshal()
	f.Add(recordHardState, b)
	f.Add(recordSnapshot, make([]byte, markerLen))
	f.Fuzz(func(t *testing.T, typ byte, payload []byte) {
		rec := make([]byte, recordHeaderLen+len(payload))
		copy(rec[recordHeaderLen:], payload)
		sealRecord(rec, typ)
		data := append(encodeSegmentHeader(0, 1), rec...)
		_, _, _ = walkSegment(segment{path: "fuzz"}, data, func(_ int, r *record) error {
			if r.typ == recordEntry {
				we := WALEntry{Index: r.entry.Index, Type: EntryType(r.entry.Type), Data: r.entry.Data}
				_, _, _ = we.Membership()
			}
			return nil
		})
	})
}

// FuzzReadSnapshot checks that reading any file named as a snapshot gives
// a snapshot or an error, never a panic, through both readers.
func FuzzReadSnapshot(f *testing.F) {
	dir := f.TempDir()
	p, err := SaveSnapshot(dir, raftpb.SnapshotMetadata{Index: 1, Term: 1, ConfState: raftpb.ConfState{Voters: []uint64{1}}},
		func(w io.Writer) error { _, err := w.Write([]byte("body")); return err })
	if err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(p)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Fuzz(func(t *testing.T, data []byte) {
		info := SnapshotInfo{Path: filepath.Join(t.TempDir(), snapshotName(1, 1)), Index: 1, Term: 1}
		if err := os.WriteFile(info.Path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if s, err := ReadSnapshot(info); err == nil {
			s.Close()
		}
		if r, err := OpenSnapshot(info); err == nil {
			_ = r.Close()
		}
	})
}
