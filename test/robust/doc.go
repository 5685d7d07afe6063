// Package robust holds black-box robustness tests of the Paddock server: it
// has no code of its own, only tests (package robust_test) that run the
// paddock binary as a child process through internal/zktest and talk to it
// over loopback with go-zookeeper/zk and with raw frames built by
// internal/proto.
//
// What the tests pin down:
//
//   - crash safety: every write acknowledged before a SIGKILL is present
//     after a restart on the same data directory, sessions that reconnect
//     within their timeout keep their ephemerals, and sessions that do not
//     come back expire a fresh timeout after the restart
//     (crash_test.go);
//   - WAL damage: a torn tail of the last segment is cut off and the server
//     starts; a damaged record followed by valid ones stops the server with a
//     message naming the file and the byte offset (wal_test.go);
//   - bad input: malformed, oversized, truncated and fuzzed frames and
//     requests close only the offending connection, while a well-behaved
//     client keeps working without a reconnect (badinput_test.go; the
//     fuzz targets FuzzClientStream and FuzzClientStreamEnsemble in
//     internal/server send streams to an in-process server and ensemble,
//     guided by the coverage of the server's code);
//   - limits: maxClientCnxns, jute.maxbuffer and globalOutstandingLimit
//     (limits_test.go);
//   - sessions: timeout negotiation, reattach, session moved, wrong
//     password, closeSession and expiry with their watch events
//     (session_test.go).
//
// Every wait is a bounded poll of a condition with a deadline; every server
// and connection is on 127.0.0.1 and is stopped by the test that started
// it. The tests expect ZooKeeper's behaviour (PROTOCOL.md); a failing test
// here is a server bug to report, not a test to relax.
package robust
