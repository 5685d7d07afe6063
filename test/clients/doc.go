// Package clients holds scripted sessions of real ZooKeeper clients, run by
// its tests against Apache ZooKeeper and (when enabled) Paddock.
//
// # Contract
//
// Each session takes a server address, exercises every feature its client
// supports, prints a readable transcript, and fails with a clear message on
// the first unexpected result:
//
//   - kazoo_session.py: kazoo (Python), run with /usr/bin/python3;
//   - zkcli_session.sh: Apache ZooKeeper's Java shell zkCli.sh;
//   - cli_mt_session.sh: the C client's shell cli_mt (lib.sh is the
//     expect-like driver shared with zkcli_session.sh);
//   - gozk_session_test.go: github.com/go-zookeeper/zk.
//
// The scripts can be run by hand against any server (for example
// "bash zkcli_session.sh 127.0.0.1:2181"). They assume the server has all
// four-letter words enabled, extended types (TTL nodes) on and the super
// digest for super:test, as internal/zktest configures it. Each session
// works under its own randomly named root node and deletes it at the end, so
// sessions may share a server.
//
// TestClients starts each enabled target server with internal/zktest and
// runs every session against it. The package has no non-test code.
package clients
