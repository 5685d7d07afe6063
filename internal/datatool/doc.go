// Package datatool implements Paddock's offline data tools, the logic behind
// "paddock snapshot inspect|dump", "paddock wal dump", "paddock data verify"
// and "paddock data purge" (ZooKeeper's zkSnapShotToolkit, zkTxnLogToolkit
// and zkCleanup.sh, for Paddock's formats). docs/data-tools.md describes the
// commands and their output.
//
// # Formats
//
// The on-disk formats belong to other packages, and this one reuses their
// code: internal/storage reads WAL segments (storage.ScanWAL) and checks
// snapshot files (storage.OpenSnapshot); internal/fsm decodes log entries
// (fsm.DecodeEntry) and replays them (fsm.Machine). The one decoder of its
// own is SnapshotScanner, which reads an fsm snapshot body (the format of
// fsm.Machine.AppendSnapshot and tree.Tree.AppendSnapshot) one znode at a
// time from an io.Reader, so that dumping a snapshot of millions of znodes
// never holds the whole snapshot, or the whole tree, in memory. Tests check
// it against fsm.Machine.Restore.
//
// # Safety
//
// Inspect, DumpSnapshot, DumpWAL and Verify only read: they take no lock and
// repair nothing, so they may run against the directories of a running
// server (a record being appended shows as a torn tail, where they stop).
// Purge deletes files: it takes the WAL directory's lock
// (storage.LockWALDir) and the snapshot directory's
// (storage.LockSnapshotDir), the locks a running server holds, and refuses
// with an error matching storage.ErrLocked while a server uses either.
//
// Functions write their reports to an io.Writer handed in; nothing here
// keeps global state.
package datatool
