package zktest

// RemoveStaleBuildDirs exposes removeStaleBuildDirs to the tests.
var RemoveStaleBuildDirs = removeStaleBuildDirs

// BuildDirPrefix exposes buildDirPrefix to the tests.
const BuildDirPrefix = buildDirPrefix
