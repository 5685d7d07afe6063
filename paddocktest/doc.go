// Package paddocktest runs a replicated Paddock ensemble inside a test
// process, for Paddock's own tests and for anyone testing Go code that uses
// ZooKeeper: N voting members and any number of observers on 127.0.0.1,
// with real TCP between them and to clients, their data in temporary
// directories, and hooks to inject faults.
//
//	func TestMyCode(t *testing.T) {
//		ens := paddocktest.Start(t, paddocktest.Options{})
//		conn, err := zk.Connect(ctx, ens.ConnectString())
//		...
//		leader, _ := ens.Leader(ctx)
//		leader.Kill() // the code under test should ride this out
//	}
//
// Start (or New) returns once every member serves. Close (registered with
// t.Cleanup by Start) stops every member and every goroutine of the package
// and removes the temporary directories.
//
// # Faults
//
// Every link between two members, in each direction, and every member's
// client port goes through a small TCP proxy of the ensemble, so faults are
// made by the proxies, not by the servers:
//
//   - Ensemble.Cut, Heal, Isolate, HealAll: a cut link resets its
//     connections and every new one once accepted, until it is healed
//     (connects succeed, then fail: the members are partitioned, not
//     dead). A member cut off from a quorum stops serving after an
//     election timeout and closes its clients' connections, as a ZooKeeper
//     server that loses its leader does.
//   - Member.Pause, Resume: a paused member's links and client connections
//     stop carrying anything, both ways, but stay open, as a SIGSTOPped
//     process looks to others.
//   - Ensemble.PauseLink, ResumeLink: one direction of one link is frozen
//     (member a's messages to b wait, b's to a flow), then delivered: a
//     message delayed in the network.
//   - Member.Stop (graceful), Member.Kill (abrupt: every connection reset
//     first), Member.Restart (same data, id and addresses). While a
//     member is down its client and peer ports refuse connections, as
//     those of a process that is gone: followers of a killed leader see
//     that and elect a new one at once, without waiting for the election
//     timeout.
//
// # Timing
//
// The default tick is 200 ms: sessions may last from 0.4 s to 4 s, and raft
// elects a leader within a few hundred milliseconds of losing one. Tests
// should wait for conditions (Leader, WaitServing, Mode) with a deadline
// rather than sleep.
//
// # Differences from separate processes
//
// The members share one process: a panic in one fails the test, and
// Pause and Kill cannot stop a member's own goroutines mid-step (see
// their documentation). Faults that need a real process (kill -9 during a
// write, disk full) are for internal/zktest's multi-process tests.
package paddocktest
