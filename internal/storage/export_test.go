package storage

// SegmentPaths returns the paths of the WAL's segments, oldest first, after
// waiting for a roll's rename (so that every path exists).
func (w *WAL) SegmentPaths() []string {
	if err := w.finishRoll(); err != nil {
		panic(err)
	}
	return w.SegmentPathsNow()
}

// SpareReady reports whether a filled spare segment is waiting.
func (w *WAL) SpareReady() bool { return w.spare.ready() }

// SpareName is the file a spare segment is filled in.
const SpareName = spareName

// FinishRoll waits for the rename of the last roll into a spare.
func (w *WAL) FinishRoll() error { return w.finishRoll() }

// SegmentPathsNow returns the segment paths without waiting for a rename.
func (w *WAL) SegmentPathsNow() []string {
	var ps []string
	for _, s := range w.segs {
		ps = append(ps, s.path)
	}
	return ps
}

// SetRollHook makes f run on the background goroutine of every roll into a
// spare, before it cuts, closes or renames anything.
func (w *WAL) SetRollHook(f func()) { w.rollHook = f }

// DropSuffix marks a file whose deletion in steps has begun.
const DropSuffix = dropSuffix
