// Package difftest runs the same operation scripts against Apache
// ZooKeeper and Paddock and compares what the two servers answer.
//
// # Pieces
//
//   - [Client] is a raw protocol connection built only on package proto
//     and net: it performs the handshake (with or without the readOnly
//     byte, new session or reattach), sends any request with any xid (many
//     may be in flight) or raw bytes, and hands back every frame in arrival
//     order, so notifications keep their place among replies.
//   - [ParseScenarios] and [LoadCorpus] read the script format described in
//     testdata/README.md: "== name" headers, then one step per line such as
//     "c1 create /a data persistent open".
//   - [Run] executes one scenario against one server and returns its
//     transcript: one line per step ("<step> -> <result>") plus one line per
//     notification, normalized by [Transcript] so that two servers (or two
//     runs of one) can be compared line by line.
//   - [GenerateScript] writes a seeded random scenario in the same
//     language (clients, every create mode, versions, watches, multi,
//     ACLs and auth, reconnects with setWatches), keeping out what the
//     transcripts cannot compare and the documented 3.9-style
//     differences; TestRandomDifferential runs a fixed set of seeds
//     (-random-seeds or $PADDOCK_DIFF_SEEDS for more) against both
//     servers, and TestDiffScript -script runs a file or seeds:<list>
//     and prints both transcripts, for reducing a difference.
//   - [GenerateEnsembleScript] writes such scenarios for ensembles:
//     clients on different members (client cN on member (N-1) mod 3 + 1,
//     reattaches often elsewhere), so that writes are forwarded, sessions
//     are created and closed through followers, and watches set (or
//     re-set with setWatches) on one member fire for writes through
//     another. Such a script is deterministic under replication because
//     it keeps to ZooKeeper's rule for cross-client consistency: a client
//     syncs before its next step once another client may have changed
//     the tree, and the sync's reply comes after the notifications of
//     every txn committed before it. TestRandomDifferentialEnsemble
//     (-ensemble-seeds or $PADDOCK_DIFF_ENSEMBLE_SEEDS for more) runs
//     them against a three-member ZooKeeper 3.8 ensemble and a
//     three-member Paddock ensemble; ZooKeeper's clients use only its
//     two followers (see ensembleRunOptions for why), and "settle" after
//     a setACL waits until every member, the leader included, has
//     applied it. TestDiffScript -diff-ensemble reduces a difference.
//   - [GenerateQuotaScript] writes random scenarios that also put quotas
//     on their own paths ("%/a/zookeeper_limits" is the limits node of a
//     quota on the root's /a) and write under them around the limits;
//     TestRandomQuotaDifferential (-quota-seeds or
//     $PADDOCK_DIFF_QUOTA_SEEDS) runs them against both servers with
//     enforceQuota=true, TestDiffScript -diff-quota reduces a difference.
//
// # Normalization
//
// Paths under the scenario root are printed relative to it. Zxids are
// replaced by their rank among the positive zxids the scenario observed
// (z1 is the smallest; z0 is zxid 0). Times are checked rather than
// ranked: ctime and mtime are printed as t<rank of czxid/mzxid> when they
// are consistent (one time per txn, non-decreasing with zxid, within the
// run's wall-clock window), else as t!<reason>; ranking raw millisecond
// values would be flaky because two txns often share a millisecond.
// Session ids are named s1, s2... in order of first appearance. Children
// and ephemeral lists are sorted. Reply-header zxids are not printed: they
// expose server-internal txns (session creation and closing, failed
// writes) that are not part of the client-visible contract; they are
// still tracked per client as the "last zxid seen" for setWatches and
// reconnects. Everything else (versions, cversion, lengths, error codes,
// event types and order, connection closes) is printed exactly.
//
// # Concurrency
//
// A Client must be used by one goroutine; Run may be called concurrently
// for different scenarios (each uses its own root and connections).
package difftest
