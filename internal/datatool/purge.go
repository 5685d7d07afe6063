package datatool

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/paddockhq/paddock/internal/storage"
)

// ErrRetainCount is returned by PlanPurge and Purge for a count below
// storage.MinSnapRetain.
var ErrRetainCount = fmt.Errorf("datatool: the number of snapshots to keep must be at least %d", storage.MinSnapRetain)

// PurgePlan is what Purge keeps and removes.
type PurgePlan struct {
	KeepSnapshots   []storage.SnapshotInfo
	RemoveSnapshots []storage.SnapshotInfo
	KeepSegments    []storage.WALSegment
	RemoveSegments  []storage.WALSegment
}

// PlanPurge decides, as zkCleanup.sh -n retain does, which files to delete:
// all but the retain newest snapshots, and the WAL segments that hold only
// entries at or below the oldest snapshot kept (the rule the server's own
// autopurge follows, storage.WAL.ReleaseTo). The newest segment is always
// kept, and so is every segment when there is no snapshot. snaps and segs
// are ordered oldest first, as storage lists them.
func PlanPurge(snaps []storage.SnapshotInfo, segs []storage.WALSegment, retain int) (PurgePlan, error) {
	if retain < storage.MinSnapRetain {
		return PurgePlan{}, fmt.Errorf("%w, not %d", ErrRetainCount, retain)
	}
	var p PurgePlan
	cut := max(len(snaps)-retain, 0)
	p.RemoveSnapshots, p.KeepSnapshots = snaps[:cut], snaps[cut:]
	n := 0
	if len(p.KeepSnapshots) > 0 {
		oldest := p.KeepSnapshots[0].Index
		for n < len(segs)-1 && segs[n+1].FirstIndex-1 <= oldest {
			n++
		}
	}
	p.RemoveSegments, p.KeepSegments = segs[:n], segs[n:]
	return p, nil
}

// PurgeOptions tune Purge.
type PurgeOptions struct {
	Retain int  // snapshots to keep, at least storage.MinSnapRetain
	DryRun bool // only say what would be removed
}

// Purge deletes old snapshots and WAL segments as PlanPurge decides and
// writes what it removed (or, with DryRun, would remove) to w. It holds the
// WAL directory's lock and the snapshot directory's throughout, as a running
// server does, so it refuses, with an error matching storage.ErrLocked,
// while a server uses either directory; and it refuses to
// delete anything when a snapshot it would keep is damaged. Temporary files
// of unfinished snapshots and segments are left to the server.
func Purge(w io.Writer, dirs Dirs, opts PurgeOptions) (*PurgePlan, error) {
	if opts.Retain < storage.MinSnapRetain {
		return nil, fmt.Errorf("%w, not %d", ErrRetainCount, opts.Retain)
	}
	if !isDir(dirs.WAL) {
		return nil, fmt.Errorf("datatool: no WAL directory %s: refusing to purge what may be a running server's data without its lock (pass --data-log-dir when dataLogDir differs from dataDir)", dirs.WAL)
	}
	release, err := storage.LockWALDir(dirs.WAL)
	if err != nil {
		if errors.Is(err, storage.ErrLocked) {
			return nil, fmt.Errorf("datatool: a server is using %s (its lock is held); purge only stopped servers' data, or let the server purge itself (autopurge.snapRetainCount): %w", dirs.WAL, err)
		}
		return nil, err
	}
	defer func() { _ = release() }()
	if isDir(dirs.Snap) { // else there is no snapshot to remove
		releaseSnap, err := storage.LockSnapshotDir(dirs.Snap)
		if err != nil {
			if errors.Is(err, storage.ErrLocked) {
				return nil, fmt.Errorf("datatool: a server is using %s (its lock is held); purge only stopped servers' data, or let the server purge itself (autopurge.snapRetainCount): %w", dirs.Snap, err)
			}
			return nil, err
		}
		defer func() { _ = releaseSnap() }()
	}
	snaps, err := storage.ListSnapshots(dirs.Snap)
	if err != nil {
		return nil, err
	}
	segs, err := storage.ListWALSegments(dirs.WAL)
	if err != nil {
		return nil, err
	}
	plan, err := PlanPurge(snaps, segs, opts.Retain)
	if err != nil {
		return nil, err
	}
	for _, s := range plan.KeepSnapshots {
		sr, err := storage.OpenSnapshot(s)
		if err != nil {
			return nil, fmt.Errorf("datatool: a snapshot to keep is damaged; nothing removed (run paddock data verify): %w", err)
		}
		_ = sr.Close()
	}
	verb := "removed"
	if opts.DryRun {
		verb = "would remove"
	}
	remove := func(path, what string) error {
		if !opts.DryRun {
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("datatool: removing %s: %w", what, err)
			}
		}
		_, err := fmt.Fprintf(w, "%s %s %s\n", verb, what, path)
		return err
	}
	for _, s := range plan.RemoveSnapshots {
		if err := remove(s.Path, "snapshot"); err != nil {
			return nil, err
		}
	}
	if len(plan.RemoveSnapshots) > 0 && !opts.DryRun {
		if err := storage.SyncDir(dirs.Snap); err != nil {
			return nil, err
		}
	}
	for _, s := range plan.RemoveSegments {
		if err := remove(s.Path, "WAL segment"); err != nil {
			return nil, err
		}
	}
	if len(plan.RemoveSegments) > 0 && !opts.DryRun {
		if err := storage.SyncDir(dirs.WAL); err != nil {
			return nil, err
		}
	}
	oldest := "none"
	if len(plan.KeepSnapshots) > 0 {
		oldest = fmt.Sprintf("oldest index %d", plan.KeepSnapshots[0].Index)
	}
	_, err = fmt.Fprintf(w, "kept %d snapshots (%s) and %d WAL segments; %s %d snapshots and %d WAL segments\n",
		len(plan.KeepSnapshots), oldest, len(plan.KeepSegments), verb, len(plan.RemoveSnapshots), len(plan.RemoveSegments))
	return &plan, err
}
