// Package tree is Paddock's in-memory data tree: znodes, their Stat metadata
// as Apache ZooKeeper keeps it, interned ACL lists, and the indexes the server
// needs (ephemeral nodes per session, containers, TTL nodes).
//
// The tree is a plain data structure: it does no I/O, keeps no clock, starts
// no goroutines, fires no watches and takes no locks. Package fsm owns the one
// Tree of a server, mutates it only while applying committed log entries, and
// guards it with its own lock. Mutations here never fail halfway: callers
// validate first (path, existence, versions, ACLs) and then mutate.
package tree
