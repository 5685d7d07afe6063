// Package tree is Paddock's in-memory data tree: znodes, their Stat metadata
// as Apache ZooKeeper keeps it, interned ACL lists, and the indexes the server
// needs (ephemeral nodes per session, containers, TTL nodes).
//
// The tree is a plain data structure: it does no I/O, keeps no clock, starts
// no goroutines, fires no watches and takes no locks. Package fsm owns the one
// Tree of a server, mutates it only while applying committed log entries, and
// guards it with its own lock. Mutations here never fail halfway: callers
// validate first (path, existence, versions, ACLs) and then mutate.
//
// A new tree matches a fresh Apache ZooKeeper DataTree: "/", /zookeeper,
// /zookeeper/quota and /zookeeper/config with empty data and zero Stat,
// except that /zookeeper/config is world-readable only with aversion -1.
// Node.Stat returns what clients see (DataNode.copyStat): cversion derived
// from the persisted child-creation counter, ephemeralOwner 0 for container
// and TTL nodes. Data keeps the difference between null and empty.
package tree
