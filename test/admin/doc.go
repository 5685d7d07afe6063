// Package admin checks Paddock's admin HTTP API against Apache ZooKeeper
// 3.8's AdminServer.
//
// # Contract
//
// The package has no non-test code. Its tests start Apache ZooKeeper (with
// Jetty on its classpath and its AdminServer on) and the paddock binary
// (internal/zktest) on free 127.0.0.1 ports, put both in the same state with
// the same requests, and compare, command by command, the set of JSON field
// paths and their value types (null, bool, integer, double, string, array,
// object; a double is a number written with a fraction or an exponent, as
// Jackson writes Java's doubles).
// Keys that are data (session ids, paths, server ids, times) are compared as
// "*". Values are not compared: internal/server's tests check them.
//
// Every difference that remains is a deliberate one, listed with its reason
// in allowedDiffs (and in docs/admin.md); the tests also fail when an allowed
// difference disappears, so that the list stays true. Standalone servers are
// compared on every command Paddock has, ensembles of three on the
// commands whose answer depends on the member's part (leader, voting_view,
// zabstate, mntr, srvr, conf), on the leader and on a follower, then on a
// member left without its quorum (every name of every gated command: status,
// "command" as asked and "error"). The standalone test also compares the
// HTTP side: methods, paths around the command URL, odd command names and
// query parameters (status, media type, "command" and "error").
package admin
