package datatool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/paddockhq/paddock/internal/storage"
)

// The storage functions that read a directory, variables so that tests can
// make a file disappear at the moment a running server would.
var (
	listSnapshots = storage.ListSnapshots
	scanWAL       = storage.ScanWAL
)

// Subdirectories a server keeps under dataDir and dataLogDir
// (internal/server: dataDir/snap for snapshots, dataLogDir/wal for the WAL).
const (
	SnapSubdir = "snap"
	WALSubdir  = "wal"
)

// Dirs are the two directories a server's durable state lives in.
type Dirs struct {
	Snap string // snapshot files
	WAL  string // WAL segments
}

// DataDirs returns the directories of a server configured with dataDir
// and dataLogDir (empty means dataDir, as in zoo.cfg).
func DataDirs(dataDir, dataLogDir string) Dirs {
	if dataLogDir == "" {
		dataLogDir = dataDir
	}
	return Dirs{Snap: filepath.Join(dataDir, SnapSubdir), WAL: filepath.Join(dataLogDir, WALSubdir)}
}

// check fails unless at least one of the directories exists.
func (d Dirs) check() error {
	if isDir(d.Snap) || isDir(d.WAL) {
		return nil
	}
	return fmt.Errorf("datatool: neither %s nor %s exists: not a Paddock data directory (pass the server's dataDir, and --data-log-dir if dataLogDir differs)", d.Snap, d.WAL)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// ResolveWALDir returns the WAL directory for p: p/wal when p is a data
// (log) directory, else p itself.
func ResolveWALDir(p string) (string, error) {
	if !isDir(p) {
		return "", fmt.Errorf("datatool: %s is not a directory", p)
	}
	if sub := filepath.Join(p, WALSubdir); isDir(sub) {
		return sub, nil
	}
	return p, nil
}

// ResolveSnapshot returns the snapshot file p names: p itself when it is a
// file, else the newest snapshot of p/snap (or of p when it has no snap
// subdirectory).
func ResolveSnapshot(p string) (storage.SnapshotInfo, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return storage.SnapshotInfo{}, fmt.Errorf("datatool: %w", err)
	}
	if !fi.IsDir() {
		return storage.SnapshotInfoFromPath(p)
	}
	dir := p
	if sub := filepath.Join(p, SnapSubdir); isDir(sub) {
		dir = sub
	}
	infos, err := storage.ListSnapshots(dir)
	if err != nil {
		return storage.SnapshotInfo{}, err
	}
	if len(infos) == 0 {
		return storage.SnapshotInfo{}, fmt.Errorf("datatool: no snapshot files in %s: %w", dir, storage.ErrNoSnapshot)
	}
	return infos[len(infos)-1], nil
}

// corruptLocation extracts the file and offset of a storage corruption
// error, if err is one.
func corruptLocation(err error) (path string, offset int64, ok bool) {
	var ce *storage.CorruptError
	if errors.As(err, &ce) {
		return ce.Path, ce.Offset, true
	}
	return "", 0, false
}

// vanished reports whether the file at path is gone. A running server
// deletes the snapshots and WAL segments it no longer needs; it renames
// each one first, then shrinks it under any reader that has it open
// (storage's removeInSteps), so a tool that listed the file before reads
// it short, or not at all: that is not damage.
func vanished(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}

// vanishedError says that path disappeared while the tool read it, which
// made reading it fail with err.
func vanishedError(path string, err error) error {
	return fmt.Errorf("datatool: %s disappeared while being read (a running server removed it; run again): %v", path, err)
}

// explainVanished returns err, an error reading the file at path (or the
// file a *storage.CorruptError names), as a vanishedError when that file is
// gone, and err itself otherwise.
func explainVanished(path string, err error) error {
	if err == nil {
		return nil
	}
	if p, _, ok := corruptLocation(err); ok {
		path = p
	}
	if path != "" && vanished(path) {
		return vanishedError(path, err)
	}
	return err
}
