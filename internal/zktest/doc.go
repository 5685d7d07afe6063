// Package zktest starts ZooKeeper-compatible servers as child processes for
// tests: Apache ZooKeeper 3.8 from the Debian packages installed on the test
// machine, and Paddock built from ./cmd/paddock of this module.
//
// # Contract
//
// The package is for tests only. Every starter takes a testing.TB, writes its
// zoo.cfg, data and log into t.TempDir(), and listens on a free 127.0.0.1
// port. It returns only once the server answers the "ruok" four-letter word
// with "imok", "srvr" no longer says it is starting (Apache ZooKeeper
// answers ruok before it serves requests) and "conf", if whitelisted, names
// the server's own data directory (not that of another server that took
// the port meanwhile); otherwise it fails the test with
// the tail of the server's log. It registers a t.Cleanup that stops the
// process by PID (SIGCONT should it be paused, SIGTERM, then SIGKILL after
// a grace period) and waits for it. Both servers are configured alike:
//
//   - 4lw.commands.whitelist=* (kazoo's server_version needs "envi"),
//   - extended types (TTL nodes) enabled,
//   - the super user "super" with password "test", given as
//     DigestAuthenticationProvider.superDigest=[SuperDigest],
//   - the AdminServer disabled, so nothing listens beyond the client port.
//
// A [Process] can be killed, stopped and restarted with the same
// configuration, port and data directory, to test persistence and session
// recovery. Its methods are safe for concurrent use.
//
// [BuildPaddock] builds the server binary once per test binary (the
// binary is left in a temporary directory named after the test binary's
// pid, which later builds remove once that process has exited). The
// package keeps no other state between tests and reads no environment
// variables besides PATH (to find java and go).
//
// Paths of the Apache ZooKeeper installation default to Debian's layout
// (java on PATH or /usr/bin/java, jars in /usr/share/java); [ZKOptions] can
// override them.
package zktest
