package fsm

// SnapshotMagic is the int32 that opens a snapshot payload ("PDSM"), the
// format AppendSnapshot writes (see SnapshotFormat). Offline readers that
// stream a snapshot instead of restoring it (internal/datatool) check it.
const SnapshotMagic = snapshotMagic
