// Package consistency holds fault-scenario tests of a replicated Paddock
// ensemble run in-process with paddocktest: it has no code of its own, only
// tests (package consistency_test) that drive several zk clients, most
// through followers, while a seeded nemesis kills and restarts the leader or
// a follower, isolates a member, cuts a link between two members or pauses a
// member, one fault at a time, healing each and waiting (at most 10 s) for
// every member to serve again before the next. The multi-process tests of
// test/ensemble cover what needs real processes (SIGKILL, SIGSTOP, a full
// restart).
//
// What the tests pin down:
//
//   - linearizability (workload_test.go, kv_test.go, model_test.go):
//     writes, compare-and-set writes (Set with a version) and reads after a
//     Sync on a few keys, by six clients on a three- and a five-member
//     ensemble, form a history that porcupine finds linearizable against a
//     register with ZooKeeper's data version. A write that fails with
//     connection loss or a timeout has an unknown outcome: it may take
//     effect at any time after its call, or never (what the history itself
//     settles about such writes is settled first, see resolveUnknown). The
//     final state, read through every member, closes the history. A
//     history porcupine cannot decide in time fails: it was not checked;
//   - sessions never go back in time (monotonic_test.go): reads without Sync
//     never see a version of a key lower than one the session saw before or
//     wrote, and a session's write gets a version above all it saw;
//   - sequential creates (seq_test.go): every acknowledged create is present
//     at the end, once, under its name and with its data, on every member,
//     and no create is applied twice;
//   - sessions (session_test.go): a client cut off without closing its
//     session loses its ephemeral only once its session can have timed out,
//     exactly once, even when the leader or its own member is isolated
//     meanwhile; a client whose member is stopped, paused or isolated moves
//     to another with its session, ephemeral and watches;
//   - a lock recipe written on zk's API (lock_test.go): an ephemeral
//     sequential child of /lock per waiter, Sync before listing, a watch on
//     the predecessor only, and a holder that gives the lock up as soon as
//     its session reports Disconnected: never two holders, under the nemesis
//     and when a holder's member freezes for longer than its session timeout.
//
// Each checker is also fed hand-made histories, good and bad
// (checkers_test.go, model_test.go), so that it is known to be able to
// fail; and each fault test fails when its workload did too little to
// tell anything.
//
// The nemesis and the clients draw from random sources seeded by -seed (a
// new seed each run by default); every test that uses them logs its seed.
// What a fault hits (which member leads when it strikes) also depends on
// timing, so a replay repeats the schedule, not the exact interleaving.
//
// A failing linearizability check writes the history and porcupine's HTML
// visualization, with the faults marked, and every failing test the
// members' logs, to a directory under os.TempDir that it names (t.TempDir
// would be removed with the test). The package runs in about 45 s on two
// cores; under the race detector, or with -short, the workloads are shorter.
package consistency
