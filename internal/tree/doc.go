// Package tree is Paddock's in-memory data tree: znodes, their Stat metadata
// as Apache ZooKeeper keeps it, interned ACL lists, and the indexes the server
// needs (ephemeral nodes per session, containers, TTL nodes, quotas).
//
// The tree is a plain data structure: it does no I/O, keeps no clock, starts
// no goroutines, fires no watches and takes no locks. Package fsm owns the one
// Tree of a server, mutates it only while applying committed log entries (and
// to show the member's configuration, ShowConfig), and guards it with its own
// lock. Mutations here never fail halfway: callers
// validate first (path, existence, versions, ACLs) and then mutate.
//
// A new tree matches a fresh Apache ZooKeeper DataTree: "/", /zookeeper,
// /zookeeper/quota and /zookeeper/config with empty data and zero Stat,
// except that /zookeeper/config is world-readable only with aversion -1.
// An ensemble member's own configuration can be shown at /zookeeper/config
// (ShowConfig), as ZooKeeper's members keep their membership there; that is
// the member's view, not replicated state: snapshots hold the node's
// replicated fields, and Replicated returns them for the state machine to
// decide by.
// Tree.Stat returns what clients see (DataNode.copyStat): cversion derived
// from the persisted child-creation counter, ephemeralOwner 0 for container
// and TTL nodes. Data keeps the difference between null and empty.
//
// A node lists its children (Node.Children, Node.EachChild) in an order
// that depends only on the creates, deletes and Reinserts made under it,
// never on hashing or on when it is read: a child created goes last, a
// deleted child's place goes to the last one. Replicas that applied the
// same entries list the same order; a tree from DecodeSnapshot starts
// with each node's children in name order.
//
// Whether an ephemeralOwner with the top byte 0xFF marks a TTL node or is a
// session (of a server with myid 255) depends on ZooKeeper's
// extendedTypesEnabled, which reaches the tree as Options when it is made
// (New) or restored (DecodeSnapshot); Tree.Kind and Tree.Stat classify
// under it, and so do the indexes. Node.Kind and Node.Stat classify as with
// extended types on, for tools that read nodes without a tree.
package tree
