package tree

// Written is what SetData writes of a node: its data, mzxid, mtime and
// version.
type Written struct {
	Data    []byte
	Mzxid   int64
	Mtime   int64
	Version int32
}

// configShown is what ShowConfig put in place of /zookeeper/config's
// replicated data, mzxid, mtime and version.
type configShown struct {
	node       *Node   // the node at ConfigPath, which cannot be deleted
	replicated Written // what the replicated state holds in its place
}

// ShowConfig makes /zookeeper/config show data, an ensemble member's own
// configuration, with mzxid and mtime as given and version -1: what
// ZooKeeper's ZKDatabase.initConfigInZKDatabase writes there (DataTree.setData
// with version -1, the configuration's version as the zxid, the wall clock
// as the time) when a member starts and whenever a learner syncs with a
// leader. It replaces what ShowConfig showed before.
//
// What it shows is the member's view, not replicated state, and it fires no
// watch: Replicated still returns the node's replicated fields, which the
// state machine decides by; AppendSnapshot and the snapshot streams write
// those; only DataSize, Stat and the node's own fields (which clients read)
// show the configuration. A SetData of the node (a committed write) replaces
// what it showed, as ZooKeeper's does until its next initConfigInZKDatabase.
// The tree leaves the configuration shown out of its snapshots, so a tree
// restored from one (DecodeSnapshot) shows its replicated state until
// ShowConfig is called again.
func (t *Tree) ShowConfig(data []byte, mzxid, mtime int64) {
	n := t.Get(ConfigPath)
	if n == nil {
		return // every tree has it (New; snapshots hold it)
	}
	t.preserve(n)
	if t.config == nil {
		t.config = &configShown{node: n, replicated: Written{Data: n.Data, Mzxid: n.Mzxid, Mtime: n.Mtime, Version: n.Version}}
	}
	t.dataSize += int64(len(data) - len(n.Data))
	n.Data, n.Mzxid, n.Mtime, n.Version = data, mzxid, mtime, -1
}

// ConfigShown returns what ShowConfig made /zookeeper/config show, and false
// when the node shows its replicated state (ShowConfig was not called since
// the tree was made or restored, or a SetData of the node replaced it).
func (t *Tree) ConfigShown() (data []byte, mzxid, mtime int64, ok bool) {
	if t.config == nil {
		return nil, 0, 0, false
	}
	n := t.config.node
	return n.Data, n.Mzxid, n.Mtime, true
}

// Replicated returns n's data, mzxid, mtime and version as the replicated
// state holds them: n's own fields, except for /zookeeper/config while it
// shows a member's configuration (ShowConfig). Everything that decides what
// an entry does (version checks, quota byte counts, undo) must read these,
// so that every member, and a replay of the log, decides alike whatever its
// configuration node shows.
func (t *Tree) Replicated(n *Node) Written {
	if c := t.config; c != nil && c.node == n {
		return c.replicated
	}
	return Written{Data: n.Data, Mzxid: n.Mzxid, Mtime: n.Mtime, Version: n.Version}
}

// writing is called before SetData changes n: a write of the
// configuration node replaces what ShowConfig made it show.
func (t *Tree) writing(n *Node) {
	if c := t.config; c != nil && c.node == n {
		t.config = nil
	}
}

// snapshotNode returns the node a snapshot writes for live, the tree's
// node, whose state at the snapshot's start is st (live itself, or a copy
// a stream saved), given c, what ShowConfig made the configuration node
// show at that start (nil when nothing): st, or for the configuration node
// a copy of st with the replicated data, mzxid, mtime and version.
func snapshotNode(live, st *Node, c *configShown) *Node {
	if c == nil || c.node != live {
		return st
	}
	cp := *st
	cp.Data, cp.Mzxid, cp.Mtime, cp.Version = c.replicated.Data, c.replicated.Mzxid, c.replicated.Mtime, c.replicated.Version
	return &cp
}
