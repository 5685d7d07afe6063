// Package kazoo runs kazoo's own test suite (Debian's python3-kazoo, in place
// under /usr/lib/python3/dist-packages/kazoo/tests) against Apache ZooKeeper
// and, when enabled, Paddock.
//
// # Contract
//
// run.sh <zookeeper|paddock> runs the suite with kazoo's harness set to a
// single standalone server (ZOOKEEPER_CLUSTER_SIZE=1). The harness starts
// the server with "java ... QuorumPeerMain <zoo.cfg>"; shim/java, first on
// PATH, turns that into Apache ZooKeeper or "paddock server --config
// <zoo.cfg>" without any change to kazoo, and keeps the server on
// 127.0.0.1. Tests that cannot pass with one server (or need SASL, for
// Paddock) are listed, each with its reason, in deselect.txt. pymods/ holds
// stand-ins for the two third-party modules kazoo's tests import that Debian
// does not install.
//
// TestKazooSuiteEnsemble runs the suite once more against a 3-member Paddock
// ensemble (KAZOO_CLUSTER_SIZE=3: kazoo's harness starts the three members
// through the same shim and gives its clients all three addresses), with
// deselect-ensemble.txt listing what cannot pass there and why (reconfig,
// read-only mode, SASL).
//
// TestKazooSuite runs run.sh for each enabled target; it takes about a
// minute and a half against Apache ZooKeeper and is skipped with -short. The
// package has no non-test code.
//
// # Hangs
//
// run.sh stops the suite after KAZOO_SUITE_TIMEOUT seconds, which the Go
// tests set 90 s below their own 8-minute backstop so that run.sh's limit
// fires first. Pytest prints every Python thread's traceback when one test
// runs longer than 240 s (faulthandler_timeout). When pytest fails or times
// out, run.sh sends SIGQUIT to any Paddock server still running (it then
// writes its goroutine stacks to its paddock.log) and prints the tail of
// every paddock.log, goroutine dumps whole; "paddock server" also dumps its
// goroutines itself when its shutdown outlasts --shutdown-timeout by 5 s.
package kazoo
