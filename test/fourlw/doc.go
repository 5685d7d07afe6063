// Package fourlw checks Paddock's four-letter words against Apache
// ZooKeeper 3.8 and against the tools that parse them.
//
// # Contract
//
// The package has no non-test code. Its tests start Apache ZooKeeper and
// Paddock (internal/zktest, plus a small starter of their own for servers
// with the default whitelist, which zktest cannot wait for because it probes
// with ruok) on free 127.0.0.1 ports, put both in the same state with the same
// requests, and compare every four-letter word's answer after replacing what
// legitimately differs (ports, session ids, zxids, timestamps, latencies,
// packet counts, sizes, versions and data-directory paths) by placeholders.
// Counts that follow from the state (nodes, ephemerals, sessions, watches,
// connections) are compared exactly. Every difference that remains is a
// deliberate one, named in the test that allows it:
//
//   - cons prints a connection without a session, and a session reset by
//     crst, with every field (sid=0x0, lcxid=0x0) where ZooKeeper prints a
//     short form that go-zookeeper's FLWCons cannot parse;
//   - the version's build date uses ZooKeeper 3.4's layout, which
//     go-zookeeper's FLWSrvr requires;
//   - envi reports go.version instead of the JVM's java.* keys;
//   - mntr leaves out the keys Paddock has no value for (see mntrOmitted);
//   - ZooKeeper 3.8.0 counts a persistent recursive watch in both watch
//     tables for zk_watch_count, Paddock (like 3.9) in one;
//   - conf's dataDir and dataLogDir are the configured directories, where
//     ZooKeeper prints their version-2 subdirectory, which Paddock does not
//     have (checkConfDirs).
//
// The packet counts of each session in cons, which normalization hides,
// are compared exactly (the handshake counts as a packet each way), and
// TestCompareHandshake compares what a new, a resumed and a refused
// session count in cons and srvr.
//
// TestCompareEnsemble compares conf on the members of an ensemble of each
// (three voters and an observer), whose quorum keys and membership list
// follow the standalone keys, and srvr and mntr member by role: the
// leader's proposal sizes, the ensemble keys of mntr in ZooKeeper's order
// for each role. Both ensembles keep their membership in
// /zookeeper/config, whose length depends on the ports:
// zk_approximate_data_size is compared less that node's data.
//
// TestWhitelistSeparators checks that both servers split
// 4lw.commands.whitelist on commas only.
//
// Further tests run the real consumers against Paddock: Debian's
// zkServer.sh status, kazoo's server_version (with /usr/bin/python3) and
// go-zookeeper's FLWSrvr, FLWRuok and FLWCons.
package fourlw
