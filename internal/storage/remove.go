package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// dropSuffix marks a file that removeInSteps is deleting. The WAL's open
// and RemoveTempSnapshots delete such files, left over by a crash: they are
// released segments and purged snapshots, already judged unneeded.
const dropSuffix = ".drop"

// How removeInSteps frees a file: removeStep bytes at a time, with
// removePause after each step.
const (
	removeStep  = 8 << 20
	removePause = 5 * time.Millisecond
)

// removeInSteps deletes the file at path a step of bytes at a time: it
// renames the file to path+dropSuffix and syncs the directory (so that
// neither the WAL nor the snapshot list takes a half-freed file for a real
// one after a crash), cuts its length by step, calling sleep after each
// cut, and unlinks what is left. The caller syncs the directory once the
// file is gone. Unlike an unlinked file, a file
// freed this way shrinks under a reader that has it open: a snapshot
// being sent to a follower when it is purged (only snapshots older than the
// retained ones are) fails its checksummed transfer, which raft reports as
// failed and sends again from the newest snapshot.
//
// Freeing hundreds of megabytes at once (an old snapshot of a million
// znodes, the WAL segments a snapshot releases) has the filesystem release
// all their blocks in one go (and, on a disk mounted with discard, trim
// them), and every fsync on that disk waits behind it, the WAL's among
// them, which every write waits for. On this project's benchmark machine
// (ext4 with discard on a virtual disk) unlinking a 200 MB file stalled a
// concurrent loop of 4 KiB writes and fdatasyncs for 33-44 ms; cutting it
// by 8 MiB every 5 ms first kept every fdatasync under 3.2 ms, and
// BenchmarkFsyncDuringRemove measures the same for 128 MiB
// (docs/benchmarks.md, thirteenth session).
func removeInSteps(path string, step int64, sleep func(time.Duration)) error {
	drop := path + dropSuffix
	if err := os.Rename(path, drop); err != nil {
		return err
	}
	// The rename must reach the disk before the first cut: a crash must
	// not leave a cut file under its own name (a WAL segment cut short
	// before the last one is corruption to OpenWAL), nor a later
	// segment's removal durable while an earlier one's is not (a missing
	// segment).
	if err := syncRenamed(filepath.Dir(path)); err != nil {
		return err
	}
	f, err := os.OpenFile(drop, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	for size := fi.Size(); size > step; {
		size -= step
		if err := f.Truncate(size); err != nil {
			f.Close()
			return fmt.Errorf("freeing %s in steps: %w", drop, err)
		}
		sleep(removePause)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Remove(drop)
}

// syncRenamed is syncDir; a test replaces it to see when it runs.
var syncRenamed = syncDir

// removeDropped deletes the files of dir that a removeInSteps interrupted
// by a crash left behind, and reports how many it deleted.
func removeDropped(dir string) (int, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, nil
		}
		return 0, err
	}
	n := 0
	for _, de := range des {
		if !strings.HasSuffix(de.Name(), dropSuffix) || !de.Type().IsRegular() {
			continue
		}
		if err := os.Remove(filepath.Join(dir, de.Name())); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
