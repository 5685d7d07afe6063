package zktest

// RemoveStaleBuildDirs exposes removeStaleBuildDirs to the tests.
var RemoveStaleBuildDirs = removeStaleBuildDirs

// BuildDirPrefix exposes buildDirPrefix to the tests.
const BuildDirPrefix = buildDirPrefix

// WithPortPicker returns opts with f picking the ensemble's ports.
func WithPortPicker(opts EnsembleOptions, f func(n int) ([]int, error)) EnsembleOptions {
	opts.pickPorts = f
	return opts
}

// DistinctFreePorts exposes distinctFreePorts to the tests.
var DistinctFreePorts = distinctFreePorts

// WithFirstPort returns opts with port as the client port StartPaddock
// tries first.
func WithFirstPort(opts PaddockOptions, port int) PaddockOptions {
	opts.firstPort = port
	return opts
}
