package storage

// SegmentPaths returns the paths of the WAL's segments, oldest first.
func (w *WAL) SegmentPaths() []string {
	var ps []string
	for _, s := range w.segs {
		ps = append(ps, s.path)
	}
	return ps
}

// SpareReady reports whether a filled spare segment is waiting.
func (w *WAL) SpareReady() bool { return w.spare.ready() }

// SpareName is the file a spare segment is filled in.
const SpareName = spareName
