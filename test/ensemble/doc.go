// Package ensemble holds black-box tests of replicated Paddock ensembles: it
// has no code of its own, only tests (package ensemble_test) that start
// several "paddock server" processes with internal/zktest's
// StartPaddockEnsemble (server.N lines, a myid per member, loopback ports)
// and drive them with Paddock's Go client (package zk) while members are
// killed with SIGKILL, restarted, or frozen with SIGSTOP and SIGCONT.
//
// What the tests pin down:
//
//   - failover under load (failover_test.go): eight writers keep creating
//     sequential znodes while the leader is killed, every member is killed,
//     a follower is killed, a follower or the leader is paused; every
//     acknowledged create is then found exactly once, with the same children
//     on every member (read through each member after a sync), and the time
//     from the kill to the first acknowledged new write is logged;
//   - members (members_test.go): a restarted follower catches up; an
//     observer serves reads, forwards writes and does not count for the
//     quorum; a member that missed more than snapCount entries catches up
//     from a snapshot sent by the leader;
//   - sessions (session_test.go): ephemerals survive a leader change; a
//     client whose connection is cut (no closeSession) loses its ephemerals
//     only after its session timeout, once, even when the leader is killed
//     meanwhile; a client that moves to another member keeps its session,
//     ephemerals and watches;
//   - the configuration node (confignode_test.go): /zookeeper/config holds
//     the membership with the Stat a ZooKeeper 3.8 ensemble gives it, on
//     every member, after a restart, with observers and client addresses,
//     and stays empty on a standalone server (compared with real
//     ZooKeeper ensembles).
//
// Waits are bounded polls of conditions, never sleeps to synchronise. The
// package runs in well under a minute and a half on two cores.
package ensemble
