package datatool

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/paddockhq/paddock/internal/fsm"
	"github.com/paddockhq/paddock/internal/storage"
	"github.com/paddockhq/paddock/internal/tree"
)

// VerifyOptions tune Verify.
type VerifyOptions struct {
	// FSM must match the server's (extendedTypesEnabled), or the replay of
	// a TTL create differs from what the server did.
	FSM fsm.Options
}

// Problem is one thing wrong with a data directory.
type Problem struct {
	File    string `json:"file,omitempty"`
	Offset  int64  `json:"offset"` // byte offset in File, -1 when none applies
	Index   uint64 `json:"index,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Offset >= 0 {
			fmt.Fprintf(&b, " at byte offset %d", p.Offset)
		}
		b.WriteString(": ")
	}
	if p.Index != 0 {
		fmt.Fprintf(&b, "index %d: ", p.Index)
	}
	b.WriteString(p.Message)
	return b.String()
}

// SnapshotCheck is the verdict on one snapshot file.
type SnapshotCheck struct {
	Path  string `json:"path"`
	Index uint64 `json:"index"`
	Term  uint64 `json:"term"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// Replayable: the WAL holds every entry after this snapshot.
	Replayable bool `json:"replayable"`
}

// WALCheck sums up the WAL.
type WALCheck struct {
	Segments int    `json:"segments"`
	Records  int    `json:"records"`
	Entries  int    `json:"entries"`
	First    uint64 `json:"firstIndex"` // the oldest segment's first index
	Last     uint64 `json:"lastIndex"`  // index of the last entry (or snapshot marker)
	// Replaced counts entries written again at an index (a new leader
	// truncated the log): the later one wins.
	Replaced  int                    `json:"replaced"`
	HardState storage.HardState      `json:"hardState"`
	Marker    storage.SnapshotMarker `json:"snapshotMarker"`
	TornTail  *TornTailReport        `json:"tornTail,omitempty"`
}

// TornTailReport is storage.TornTail for reports.
type TornTailReport struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"`
	Bytes  int64  `json:"bytes"`
	Reason string `json:"reason"`
}

// ReplayResult is the state rebuilt from the newest valid snapshot and the
// WAL after it.
type ReplayResult struct {
	Snapshot      string `json:"snapshot,omitempty"` // "" when replayed from an empty state
	SnapshotIndex uint64 `json:"snapshotIndex"`
	Applied       int    `json:"applied"` // entries replayed
	Dropped       int    `json:"dropped"` // entries applied as empty (committed in a later term than proposed)
	// Uncommitted counts replayed entries above the hard state's commit
	// index: durable, not known to be committed (a standalone server
	// commits them when it starts; an ensemble may truncate them).
	Uncommitted int    `json:"uncommitted"`
	LastZxid    uint64 `json:"lastZxid"`
	Znodes      int    `json:"znodes"`
	Ephemerals  int    `json:"ephemerals"`
	Sessions    int    `json:"sessions"`
	DataSize    int64  `json:"approxDataSize"`
	// Digest is a SHA-256 of the replayed state (every znode's path, data,
	// stored Stat and ACL, and every session's id and timeout) in Paddock's
	// own layout: two members whose digests at the same last zxid differ
	// have diverged.
	Digest string `json:"digest"`
}

// VerifyReport is what Verify found.
type VerifyReport struct {
	SnapDir   string          `json:"snapDir"`
	WALDir    string          `json:"walDir"`
	Snapshots []SnapshotCheck `json:"snapshots"`
	WAL       *WALCheck       `json:"wal,omitempty"`
	Replay    *ReplayResult   `json:"replay,omitempty"`
	Problems  []Problem       `json:"problems"`
	Warnings  []string        `json:"warnings"`
}

// OK reports whether nothing is wrong. A torn tail is a warning, not a
// problem: the server truncates it at start.
func (r *VerifyReport) OK() bool { return len(r.Problems) == 0 }

func (r *VerifyReport) problem(file string, offset int64, index uint64, format string, args ...any) {
	r.Problems = append(r.Problems, Problem{File: file, Offset: offset, Index: index, Message: fmt.Sprintf(format, args...)})
}

// problemFromError records err, with its file and offset when storage
// named them.
func (r *VerifyReport) problemFromError(err error) {
	if path, off, ok := corruptLocation(err); ok {
		var ce *storage.CorruptError
		errors.As(err, &ce)
		r.problem(path, off, 0, "%v", ce.Err)
		return
	}
	r.problem("", -1, 0, "%v", err)
}

// walEntry is an entry kept for the replay, with where it was read.
type walEntry struct {
	storage.WALEntry
	file   string
	offset int64
}

// Verify checks the data of a server: the checksum of every snapshot and
// every WAL record, that the WAL continues the newest valid snapshot
// without gaps, and that replaying the WAL onto that snapshot in a fresh
// state machine succeeds. It only reads. The report lists each problem
// with the file and offset or index it concerns; err is set only when the
// directories cannot be used at all.
func Verify(dirs Dirs, opts VerifyOptions) (*VerifyReport, error) {
	if err := dirs.check(); err != nil {
		return nil, err
	}
	r := &VerifyReport{SnapDir: dirs.Snap, WALDir: dirs.WAL, Snapshots: []SnapshotCheck{}, Problems: []Problem{}, Warnings: []string{}}

	// 1. Snapshots: every checksum; the newest valid one is replayed.
	listed, err := listSnapshots(dirs.Snap)
	if err != nil {
		return nil, err
	}
	var infos []storage.SnapshotInfo
	base := -1 // index into infos of the snapshot to replay from
	for _, info := range listed {
		c := SnapshotCheck{Path: info.Path, Index: info.Index, Term: info.Term}
		sr, err := storage.OpenSnapshot(info)
		switch {
		case err != nil && vanished(info.Path):
			// Purged by a running server since the listing: no longer
			// part of the data.
			r.Warnings = append(r.Warnings, fmt.Sprintf("snapshot %s disappeared while being checked (a running server purged it)", info.Path))
			continue
		case err != nil:
			c.Error = err.Error()
			r.problemFromError(err)
		default:
			_ = sr.Close()
			c.OK = true
			base = len(infos)
		}
		infos = append(infos, info)
		r.Snapshots = append(r.Snapshots, c)
	}
	if base >= 0 && base < len(infos)-1 {
		r.problem(infos[len(infos)-1].Path, -1, 0, "the newest snapshot is damaged: a server would start from the older %s", infos[base].Path)
	}
	var snap storage.SnapshotInfo
	if base >= 0 {
		snap = infos[base]
	}

	// 2. WAL: every record; continuity; entries after the snapshot.
	if !isDir(dirs.WAL) {
		r.problem(dirs.WAL, -1, 0, "no WAL directory: the log after the snapshot (and raft's hard state) is missing")
		return r, nil
	}
	wc := &WALCheck{}
	r.WAL = wc
	var ents []walEntry
	last, curSeg, started, gap := uint64(0), "", false, false
	// hole is the highest index the WAL lacks below entries it holds (a
	// snapshot received from the leader, or a gap): no snapshot below it
	// can be replayed.
	hole := uint64(0)
	segs, torn, err := scanWAL(dirs.WAL, func(rec *storage.WALRecord) error {
		wc.Records++
		if rec.Segment.Path != curSeg {
			curSeg = rec.Segment.Path
			first := rec.Segment.FirstIndex
			if started && first > 0 && first-1 > last {
				r.problem(curSeg, 0, 0, "segment starts at index %d but the log before it ends at %d: entries %d..%d missing", first, last, last+1, first-1)
				hole = max(hole, first-1)
			}
			if first > 0 {
				last = first - 1
			}
			started = true
		}
		switch rec.Kind {
		case storage.RecordHardState:
			wc.HardState = rec.HardState
		case storage.RecordSnapshotMarker:
			wc.Marker = rec.Marker
			if rec.Marker.Index > last {
				hole = max(hole, rec.Marker.Index) // entries up to it were never logged here
			}
			last = max(last, rec.Marker.Index)
		case storage.RecordEntry:
			wc.Entries++
			e := rec.Entry
			if e.Index > last+1 {
				r.problem(rec.Segment.Path, rec.Offset, e.Index, "entry follows index %d: entries %d..%d missing", last, last+1, e.Index-1)
				hole = max(hole, e.Index-1)
			}
			if e.Index <= last {
				wc.Replaced++
			}
			last = e.Index
			if e.Index <= snap.Index {
				// Everything above the snapshot written before e is superseded.
				ents, gap = ents[:0], false
				return nil
			}
			if n := len(ents); n > 0 && e.Index <= ents[n-1].Index {
				ents = ents[:e.Index-ents[0].Index] // rewritten: drop it and everything after it
			}
			next := snap.Index + 1
			if n := len(ents); n > 0 {
				next = ents[n-1].Index + 1
			}
			if e.Index != next {
				gap = true // reported above, or below when the WAL starts too late
				return nil
			}
			if !gap {
				ents = append(ents, walEntry{WALEntry: e, file: rec.Segment.Path, offset: rec.Offset})
			}
		}
		return nil
	})
	wc.Segments, wc.Last = len(segs), last
	if len(segs) > 0 {
		wc.First = segs[0].FirstIndex
	}
	if path, _, ok := corruptLocation(err); ok && vanished(path) {
		// Released by a running server and shrunk while being read.
		r.problem(path, -1, 0, "disappeared while being read (a running server released it); run again")
	} else if err != nil {
		r.problemFromError(err)
	}
	if torn != nil {
		wc.TornTail = &TornTailReport{Path: torn.Path, Offset: torn.Offset, Bytes: torn.Bytes, Reason: torn.Reason.Error()}
		r.Warnings = append(r.Warnings, fmt.Sprintf("torn tail: %s at byte offset %d: the last %d bytes are not a whole record (%v); "+
			"a crash (or a server writing right now) leaves this, and the server truncates it at start", torn.Path, torn.Offset, torn.Bytes, torn.Reason))
	}
	if len(segs) == 0 && err == nil {
		r.problem(dirs.WAL, -1, 0, "the WAL directory has no segments")
	}
	if err != nil || len(segs) == 0 {
		return r, nil
	}

	// 3. Continuity with the snapshots and the hard state.
	for i := range r.Snapshots {
		c := &r.Snapshots[i]
		c.Replayable = c.OK && wc.First > 0 && wc.First-1 <= c.Index && hole <= c.Index
	}
	if wc.First > 0 && wc.First-1 > snap.Index {
		what := "there is no snapshot"
		if base >= 0 {
			what = fmt.Sprintf("the newest valid snapshot is at index %d", snap.Index)
		}
		r.problem(segs[0].Path, -1, 0, "the WAL starts at index %d but %s: entries %d..%d missing", wc.First, what, snap.Index+1, wc.First-1)
	}
	if hs := wc.HardState; hs.Commit > max(last, snap.Index) {
		r.problem(dirs.WAL, -1, 0, "the hard state commits index %d but the last entry is %d", hs.Commit, max(last, snap.Index))
	}
	if m := wc.Marker; m.Index > snap.Index {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the WAL records a snapshot at index %d, but the newest valid snapshot file is at index %d", m.Index, snap.Index))
	}

	// 4. Replay.
	if gap {
		r.problem(dirs.WAL, -1, 0, "not replayed: entries after index %d are missing", snap.Index)
		return r, nil
	}
	r.Replay = replay(r, snap, base >= 0, ents, wc.HardState.Commit, opts)
	return r, nil
}

// replay rebuilds the state from snap (when has) and ents, as a server
// does at start, recording problems in r.
func replay(r *VerifyReport, snap storage.SnapshotInfo, has bool, ents []walEntry, commit uint64, opts VerifyOptions) *ReplayResult {
	m := fsm.New(opts.FSM)
	res := &ReplayResult{}
	if has {
		res.Snapshot, res.SnapshotIndex = snap.Path, snap.Index
		sr, err := storage.OpenSnapshot(snap)
		if err != nil {
			r.problemFromError(explainVanished(snap.Path, err))
			return nil
		}
		data, err := io.ReadAll(sr.Body())
		_ = sr.Close()
		if err != nil {
			r.problem(snap.Path, -1, 0, "reading: %v", explainVanished(snap.Path, err))
			return nil
		}
		if err := m.Restore(data); err != nil {
			r.problem(snap.Path, -1, 0, "the checksum verifies but the state does not restore: %v", explainVanished(snap.Path, err))
			return nil
		}
		if m.AppliedIndex() != snap.Index {
			r.problem(snap.Path, -1, 0, "the state was taken at index %d, the file says %d", m.AppliedIndex(), snap.Index)
			return nil
		}
	}
	for i := range ents {
		e := &ents[i]
		if err := applyEntry(m, &e.WALEntry, res); err != nil {
			r.problem(e.file, e.offset, e.Index, "%v", err)
			return nil
		}
		res.Applied++
		if e.Index > commit {
			res.Uncommitted++
		}
	}
	t := m.Tree()
	res.LastZxid = uint64(m.LastZxid())
	res.Znodes, res.Ephemerals, res.DataSize = t.NodeCount(), t.EphemeralCount(), t.DataSize()
	res.Sessions = len(m.Sessions())
	res.Digest = stateDigest(m)
	return res
}

// applyEntry applies one raft entry as the server does (internal/server's
// machine.Apply): raft's own entries and entries committed in a later term
// than proposed advance the index only. A panic in apply (an entry the state
// machine refuses) becomes an error.
func applyEntry(m *fsm.Machine, e *storage.WALEntry, res *ReplayResult) (err error) {
	if e.Type != storage.EntryNormal {
		if _, _, err := e.Membership(); err != nil {
			return fmt.Errorf("the checksum matches but the membership change does not decode: %v", err)
		}
		m.ApplyEmpty(e.Index)
		return nil
	}
	if len(e.Data) == 0 {
		m.ApplyEmpty(e.Index)
		return nil
	}
	if t := fsm.PeekTerm(e.Data); t != 0 && t != e.Term {
		m.ApplyEmpty(e.Index)
		res.Dropped++
		return nil
	}
	fe, err := fsm.DecodeEntry(e.Data)
	if err != nil {
		return fmt.Errorf("the checksum matches but the entry does not decode: %v", err)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the state machine refuses the entry: %v", p)
		}
	}()
	m.ApplyEntry(e.Index, fe)
	return nil
}

// stateDigest hashes the state canonically (ACLs by content, not by their
// interned reference).
func stateDigest(m *fsm.Machine) string {
	h := sha256.New()
	var b []byte
	t := m.Tree()
	t.Walk(func(path string, n *tree.Node) {
		b = b[:0]
		b = binary.BigEndian.AppendUint32(b, uint32(len(path)))
		b = append(b, path...)
		if n.Data == nil {
			b = binary.BigEndian.AppendUint32(b, 0xffffffff)
		} else {
			b = binary.BigEndian.AppendUint32(b, uint32(len(n.Data)))
			b = append(b, n.Data...)
		}
		for _, v := range []int64{n.Czxid, n.Mzxid, n.Pzxid, n.Ctime, n.Mtime, n.EphemeralOwner,
			int64(n.Version), int64(n.Cversion), int64(n.Aversion), int64(n.NumChildren())} {
			b = binary.BigEndian.AppendUint64(b, uint64(v))
		}
		acl := t.ACL(n)
		b = binary.BigEndian.AppendUint32(b, uint32(len(acl)))
		for _, a := range acl {
			b = binary.BigEndian.AppendUint32(b, uint32(a.Perms))
			b = binary.BigEndian.AppendUint32(b, uint32(len(a.ID.Scheme)))
			b = append(b, a.ID.Scheme...)
			b = binary.BigEndian.AppendUint32(b, uint32(len(a.ID.ID)))
			b = append(b, a.ID.ID...)
		}
		h.Write(b)
	})
	for _, s := range m.Sessions() {
		b = binary.BigEndian.AppendUint64(b[:0], uint64(s.ID))
		b = binary.BigEndian.AppendUint32(b, uint32(s.Timeout))
		h.Write(b)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// WriteText writes the report for people, ending with "OK" or the
// problems.
func (r *VerifyReport) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "snapshots in %s: %d\n", r.SnapDir, len(r.Snapshots))
	for _, s := range r.Snapshots {
		verdict := "checksum ok"
		if !s.OK {
			verdict = "DAMAGED"
		}
		replay := ""
		if s.OK && !s.Replayable {
			replay = ", not replayable (the WAL does not hold every entry after it)"
		}
		fmt.Fprintf(&b, "  %s  index %d term %d  %s%s\n", s.Path, s.Index, s.Term, verdict, replay)
	}
	if wc := r.WAL; wc != nil {
		fmt.Fprintf(&b, "WAL in %s: %d segments, %d records, %d entries, indexes %d..%d",
			r.WALDir, wc.Segments, wc.Records, wc.Entries, wc.First, wc.Last)
		if wc.Replaced > 0 {
			fmt.Fprintf(&b, " (%d rewritten after a truncation)", wc.Replaced)
		}
		fmt.Fprintf(&b, "\n  hard state term %d vote %d commit %d; last snapshot marker index %d term %d\n",
			wc.HardState.Term, wc.HardState.Vote, wc.HardState.Commit, wc.Marker.Index, wc.Marker.Term)
	}
	if p := r.Replay; p != nil {
		from := "an empty state"
		if p.Snapshot != "" {
			from = fmt.Sprintf("snapshot index %d", p.SnapshotIndex)
		}
		fmt.Fprintf(&b, "replay: from %s, %d entries applied", from, p.Applied)
		if p.Dropped > 0 {
			fmt.Fprintf(&b, " (%d dropped as proposed in an earlier term)", p.Dropped)
		}
		if p.Uncommitted > 0 {
			fmt.Fprintf(&b, " (%d above the commit index)", p.Uncommitted)
		}
		fmt.Fprintf(&b, "\n  last zxid %s, %d znodes (%d ephemeral), %d sessions, approximate data size %d\n  digest %s\n",
			hexID(int64(p.LastZxid)), p.Znodes, p.Ephemerals, p.Sessions, p.DataSize, p.Digest)
	}
	for _, wmsg := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", wmsg)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "PROBLEM: %s\n", p)
	}
	if r.OK() {
		b.WriteString("OK\n")
	} else {
		fmt.Fprintf(&b, "FAILED: %d problems\n", len(r.Problems))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the report as one JSON object.
func (r *VerifyReport) WriteJSON(w io.Writer) error {
	out := struct {
		*VerifyReport
		OK bool `json:"ok"`
	}{r, r.OK()}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
