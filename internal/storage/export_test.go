package storage

// SegmentPaths returns the paths of the WAL's segments, oldest first.
func (w *WAL) SegmentPaths() []string {
	var ps []string
	for _, s := range w.segs {
		ps = append(ps, s.path)
	}
	return ps
}
