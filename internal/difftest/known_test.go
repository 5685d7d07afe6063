package difftest

// knownDifferences lists the scenarios where Paddock deliberately
// answers as Apache ZooKeeper 3.9 does where the 3.8 server of these
// tests answers otherwise, or deliberately does not copy a ZooKeeper
// quirk, with the reason (README.md, "How Paddock differs"). Their Paddock transcripts are
// pinned in testdata/golden/paddock/. Every other scenario must match
// ZooKeeper exactly. Keep each such scenario small, so that it holds
// only the differing behaviour.
//
// One difference applies to every scenario and is handled by
// RunOptions.HideEventZxids instead of this list: 3.8 sends -1 as the
// zxid of every notification, 3.9 (ZOOKEEPER-4655) the zxid of the txn
// that fired it.
var knownDifferences = map[string]string{
	"acl-exists-no-read": "exists needs READ on an existing node since 3.9 (ZOOKEEPER-2590)",
	"acl-ip-ipv6":        "ip ACLs accept IPv6 addresses since 3.9 (ZOOKEEPER-4240)",
	"opcode-delete-container-from-client": "3.9 decodes deleteContainer's body as a DeleteContainerRequest and " +
		"deletes an empty container; 3.8 reads the raw frame bytes as the path (BadArguments)",
	"check-top-level": "a check outside a multi is not a valid request since 3.9: Unimplemented, " +
		"connection closed (3.8 runs it, and never answers one that succeeds)",
	"multi-create2-result": "create2 inside a multi answers with path and Stat since 3.9 (ZOOKEEPER-4026)",
	"multi-unknown-flags-in-create": "a create, create2 or createContainer op in a multi whose flags are " +
		"no CreateMode fails the whole multi with MarshallingError since 3.8.3 and 3.9 (MultiOperationRecord); " +
		"3.8.0 fails the op alone with BadArguments",
	"checkwatches-other-connection": "checkWatches looks only at the caller's watches since 3.9 " +
		"(ZOOKEEPER-4466); 3.8 finds any connection's watch",
	"addwatch-persistent-plus-standard": "a standard and a persistent watch on one path coexist since 3.9 " +
		"(ZOOKEEPER-4466); in 3.8 the later one replaces the other",
	"addwatch-twice-and-mode-change": "persistent and persistent-recursive watches on one path coexist " +
		"since 3.9 (ZOOKEEPER-4466); in 3.8 the later mode replaces the other",
	"addwatch-checkwatches": "since 3.9 (ZOOKEEPER-4466/4472) checkWatches of type data or children " +
		"looks for standard watches only; 3.8 counts a persistent watch as both",
	"request-null-path": "a path sent as a null string (length -1) is read as the empty string; " +
		"ZooKeeper fails with a NullPointerException and answers MarshallingError",
	"multi-only-writes-sent-as-multiread": "ZooKeeper's MarshallingError reply carries a stray 9-byte " +
		"multi terminator after the header; Paddock's error replies carry only the header",
	"path-supplementary-echo": "ZooKeeper echoes a path with a character outside the BMP as two " +
		"separately encoded surrogates (invalid UTF-8); Paddock echoes the bytes it received",
	"addwatch-remove-persistent-with-type": "watcher types 4 (persistent) and 5 (persistent recursive) " +
		"exist since 3.9 (ZOOKEEPER-4472); 3.8 answers MarshallingError",
	"zz2-multi-createcontainer-op-non-container-flags": "a createContainer op in a multi keeps its opcode " +
		"whatever its mode since 3.9 (ZOOKEEPER-4026: Op.create's defaultOpCode), so it makes a container " +
		"and answers with path and Stat; 3.8.0 takes the opcode from the mode (a plain create: an ephemeral " +
		"node for the ephemeral flag, a path-only result)",
	"zz2-watch-on-empty-path": "checkWatches looks the path up in the caller's own watches since 3.9 " +
		"(ZOOKEEPER-4466), so it finds a watch a read left on \"\"; 3.8 walks the path's parents and " +
		"finds nothing for \"\"",
	"zz2-watch-recursive-on-empty-path": "checkWatches finds a persistent recursive watch on \"\" since 3.9 " +
		"(ZOOKEEPER-4466); 3.8 walks the path's parents and finds nothing for \"\"",
	"zz2-watch-on-relative-path": "checkWatches looks the path up as it is since 3.9 (ZOOKEEPER-4466), so " +
		"it finds a watch on a relative path; 3.8 walks the path's parents and fails on a path with no " +
		"'/' (MarshallingError)",
}
