package fsm

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/javastr"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/tree"
	"github.com/paddockhq/paddock/internal/zpath"
)

// Quota bookkeeping, as ZooKeeper's DataTree keeps it: a path P has a quota
// when /zookeeper/quota/P/zookeeper_limits exists, and the server keeps
// /zookeeper/quota/P/zookeeper_stats holding "count=N,bytes=M" for P's
// subtree (P included), in ZooKeeper's StatsTrack text: other keys a client
// wrote there are kept after them ("count=N,bytes=M=;countHardLimit=10").
// The stats node's data changes without a version or mzxid change, as in
// ZooKeeper. Quotas are soft, exceeding them allowed, unless the write's
// entry carries EntryFlagEnforceQuota (checkQuota).
//
// Which paths have a quota is decided by ZooKeeper's rules for its quota
// trie (DataTree.pTrie, a PathTrie), which are looser than the sentence
// above:
//   - a path's components are its names without those that Java's trim()
//     leaves empty (every character at most U+0020; of those, paths can
//     hold only spaces): "/a/ /b" has the components a and b, and so has
//     "/a/b" (PathTrie.split);
//   - a node named zookeeper_limits whose parent's path starts with the
//     string "/zookeeper/quota" puts a quota on the components of the rest
//     of that path (DataTree.createNode, Quotas.trimQuotaPath): the
//     parents "/zookeeper/quota/a/ ", "/zookeeper/quota /a" and
//     "/zookeeper/quotaa" all put one on a. A parent that leaves no
//     components ("/zookeeper/quota" itself, "/zookeeper/quota/ ") puts none:
//     ZooKeeper throws on the first and marks the trie's root, which no
//     lookup reads, on the second;
//   - a path falls under the quota whose components are the most of its
//     own first ones, and that quota's stats node is named by those
//     components: /zookeeper/quota/a/b/zookeeper_stats for a quota on
//     a, b (PathTrie.findMaxPrefix, Quotas.statPath).
//
// ZooKeeper changes its trie as limits nodes come and go; in Paddock the
// tree keeps its own index of the limits nodes present (Tree.QuotaDepth),
// changed by the tree's create, delete, reinsert and snapshot decoding
// themselves, so that live apply, WAL replay, snapshot restore and a
// multi's rollback agree, and a lookup costs the same however many quotas
// there are and however many children /zookeeper/quota has. The answer is
// ZooKeeper's live one wherever that depends on the tree alone. It does
// not where ZooKeeper's trie depends on history, and there Paddock
// follows the tree:
//   - deleting a zookeeper_limits node removes ZooKeeper's quota even when
//     another limits node still names the same components (under
//     "/zookeeper/quota/a" and "/zookeeper/quota/a/ "); Paddock keeps it
//     while one is left;
//   - ZooKeeper's deleteNode removes a quota for every zookeeper_limits
//     node whose parent starts with "/zookeeper", cutting the parent's
//     first 16 characters off (deleting /zookeeper/abcdeg/zookeeper_limits
//     removes a quota on g; a shorter parent throws); Paddock does not;
//   - on loading a snapshot ZooKeeper rebuilds its trie from the limits
//     nodes below /zookeeper/quota/ that have no children only (cutting a
//     path at its first "/zookeeper_limits") and recomputes their stats
//     nodes; Paddock neither loses those quotas nor rewrites the stats.
const quotaStats = "zookeeper_stats"

// updateQuota adds countDiff nodes and bytesDiff bytes to the stats of the
// quota covering path, if any, recording the undo. The stats are read and
// written back as ZooKeeper's updateQuotaStat does (see parseStats and
// statsTrack.format): keys other than count and bytes are kept, a missing
// count or bytes counts from -1. Where ZooKeeper's StatsTrack cannot read
// the node's data (null data, a pair without a value, a value that is no
// number) its update throws in the middle of applying the transaction,
// and the server stops; Paddock leaves the stats node as it is instead.
func (m *Machine) updateQuota(path string, countDiff, bytesDiff int64) {
	depth := m.tree.QuotaDepth(path)
	if depth == 0 {
		return
	}
	stats := m.quotaNode(path, depth, quotaStats)
	if stats == nil {
		return
	}
	st, ok := parseStats(stats.Data)
	if !ok {
		return
	}
	st.set(statsCount, st.get(statsCount)+countDiff) // wraps, as Java's long does
	st.set(statsBytes, st.get(statsBytes)+bytesDiff)
	m.replaceData(stats, st.format())
}

// quotaNodeCreated handles the creation of a stats node: its data becomes
// the current counts of the quota's subtree (ZooKeeper's updateQuotaForPath).
// As in ZooKeeper, a node named zookeeper_stats anywhere below a path
// starting with /zookeeper/quota is one, and its target is its parent's path
// with that prefix cut off: "" (for /zookeeper/quota/zookeeper_stats) is the
// root, whose counts are the whole tree's; a target that does not exist
// (including one that is no path, "X" for /zookeeper/quotaX/zookeeper_stats)
// has count=0,bytes=0.
func (m *Machine) quotaNodeCreated(path string, n *tree.Node) {
	parent, name := zpath.Parent(path)
	if name != quotaStats || !strings.HasPrefix(parent, tree.QuotaPath) {
		return
	}
	target := parent[len(tree.QuotaPath):]
	var t *tree.Node
	if target == "" {
		t = m.tree.Get("/")
	} else {
		t = m.tree.Get(target)
	}
	var count, bytes int64
	var walk func(n *tree.Node)
	walk = func(n *tree.Node) {
		count++
		bytes += int64(len(m.tree.Replicated(n).Data))
		n.EachChild(func(_ string, c *tree.Node) { walk(c) })
	}
	if t != nil {
		walk(t)
	}
	st := statsTrack{}
	st.set(statsCount, count)
	st.set(statsBytes, bytes)
	m.replaceData(n, st.format())
}

func (m *Machine) replaceData(n *tree.Node, data []byte) {
	old := n.Data
	m.tree.SetData(n, data, n.Version, n.Mzxid, n.Mtime)
	m.record(undoStep{kind: undoData, node: n, data: old})
}

// The keys of a stats node that the server keeps, which are also a
// limits node's soft limits.
const (
	statsCount = "count"
	statsBytes = "bytes"
)

// statsTrack is the text of a zookeeper_stats node as ZooKeeper's
// StatsTrack holds it: values by key. Keys are strings as Java decodes them
// from UTF-8 (see javastr.FromUTF8), so always valid UTF-8.
type statsTrack map[string]int64

// get returns key's value, -1 if it has none (as StatsTrack's getters).
func (st statsTrack) get(key string) int64 {
	if v, ok := st[key]; ok {
		return v
	}
	return -1
}

func (st statsTrack) set(key string, v int64) { st[key] = v }

// parseStats reads data as ZooKeeper's StatsTrack(byte[]) does, and reports
// false where that constructor throws. Java's rules, kept to the letter:
//   - null data throws; empty data has no keys;
//   - the bytes are decoded as UTF-8 with malformed input replaced by
//     U+FFFD (javastr.FromUTF8);
//   - the text is split on runs of ',' and ';' with Java's String.split:
//     a separator at the start gives an empty first pair, trailing empty
//     pairs are dropped (so "count=1," is one pair and ",," none);
//   - each pair is split on every '=' the same way: fewer than two parts
//     ("count", "count=", "=") throws; an empty second part ("count==5")
//     is -1; parts after the second are ignored ("bytes=5=" is 5);
//   - the value is read by Long.parseLong (javastr.ParseLong): no blanks, an
//     optional sign, any decimal digits;
//   - a key given twice keeps the last value; keys are case-sensitive and
//     not trimmed.
func parseStats(data []byte) (statsTrack, bool) {
	if data == nil {
		return nil, false
	}
	st := statsTrack{}
	s := javastr.FromUTF8(data)
	if s == "" {
		return st, true
	}
	for _, pair := range splitJava(s) {
		kv := strings.Split(pair, "=")
		for len(kv) > 0 && kv[len(kv)-1] == "" {
			kv = kv[:len(kv)-1] // Java's split drops trailing empty strings
		}
		if len(kv) < 2 {
			return nil, false
		}
		v := int64(-1)
		if kv[1] != "" {
			n, ok := javastr.ParseLong(kv[1])
			if !ok {
				return nil, false
			}
			v = n
		}
		st[kv[0]] = v
	}
	return st, true
}

// format writes st as StatsTrack.toString does: count and bytes first
// (-1 if absent), then, if there are other keys, a '=' (which readers
// before ZooKeeper 3.5 skip) and each other key as ";key=value", sorted as
// Java sorts strings (by UTF-16 code units). For example
// "count=4,bytes=9=;byteHardLimit=15;countHardLimit=4".
func (st statsTrack) format() []byte {
	b := []byte("count=")
	b = strconv.AppendInt(b, st.get(statsCount), 10)
	b = append(b, ",bytes="...)
	b = strconv.AppendInt(b, st.get(statsBytes), 10)
	var keys []string
	for k := range st {
		if k != statsCount && k != statsBytes {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return b
	}
	slices.SortFunc(keys, compareUTF16)
	b = append(b, '=')
	for _, k := range keys {
		b = append(b, ';')
		b = append(b, k...)
		b = append(b, '=')
		b = strconv.AppendInt(b, st[k], 10)
	}
	return b
}

// splitJava splits s as Java's s.split("[,;]+") does: each run of ','
// and ';' separates two pieces; a run at the start leaves an empty first
// piece, trailing empty pieces are dropped, and s without a separator is
// the one piece.
func splitJava(s string) []string {
	isSep := func(c byte) bool { return c == ',' || c == ';' }
	var parts []string
	seen := false
	from := 0
	for i := 0; i < len(s); {
		if !isSep(s[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && isSep(s[j]) {
			j++
		}
		parts = append(parts, s[from:i])
		seen, from, i = true, j, j
	}
	if !seen {
		return []string{s}
	}
	parts = append(parts, s[from:])
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// compareUTF16 orders strings as Java's String.compareTo does: by UTF-16
// code units, in which a character outside the BMP (a surrogate pair,
// 0xD800-0xDFFF) sorts before U+E000-U+FFFF, unlike in UTF-8 byte order.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return cmp.Compare(utf16Weight(ra), utf16Weight(rb))
		}
		a, b = a[na:], b[nb:]
	}
	return cmp.Compare(len(a), len(b))
}

// utf16Weight maps a rune to a number that orders runes as their UTF-16
// encodings order.
func utf16Weight(r rune) rune {
	switch {
	case r < 0xD800:
		return r
	case r > 0xFFFF:
		return 0xD800 + (r - 0x10000) // between the BMP's two halves
	default:
		return r + 0x100000 // U+E000-U+FFFF after every surrogate pair
	}
}

// The keys of a limits node that set hard limits.
const (
	statsCountHardLimit = "countHardLimit"
	statsByteHardLimit  = "byteHardLimit"
	quotaLimits         = "zookeeper_limits"
)

// checkQuota is ZooKeeper's ZooKeeperServer.checkQuota, made when an
// entry has EntryFlagEnforceQuota: a create (countDiff 1) or setData
// (countDiff 0) at path that adds bytesDiff bytes fails with QUOTAEXCEEDED
// when it would take the quota covering path past a hard limit
// (countHardLimit, byteHardLimit; setquota -N, -B) of its limits node.
// Soft limits (count, bytes; -n, -b) never fail a write. A limits or
// stats node whose data StatsTrack cannot read (null, a pair without a
// value) fails it with MARSHALLINGERROR, as ZooKeeper's request processor
// answers the exception StatsTrack throws (for a multi, the whole multi:
// applyTxn); a quota without its limits or stats node, or no quota,
// passes. ZooKeeper's request processor finds the quota, its limits and
// its stats in the tree as committed, so an op inside a multi is checked
// against the quotas as they were before the multi: three creates under a
// quota with room for one more all pass in one multi, and limits the
// multi itself creates, deletes or changes count only after it
// (quotasBeforeMulti).
func (m *Machine) checkQuota(path string, countDiff, bytesDiff int64) proto.ErrCode {
	var depth int
	if v := m.preMulti; v != nil {
		depth = v.index.QuotaDepth(path)
	} else {
		depth = m.tree.QuotaDepth(path)
	}
	if depth == 0 {
		return proto.ErrOK
	}
	limits, found, ok := m.quotaData(path, depth, quotaLimits)
	if !found || !ok {
		return missingOrUnreadable(ok)
	}
	checkCount := countDiff != 0 && (limits.get(statsCount) > -1 || limits.get(statsCountHardLimit) > -1)
	checkBytes := bytesDiff != 0 && (limits.get(statsBytes) > -1 || limits.get(statsByteHardLimit) > -1)
	if !checkCount && !checkBytes {
		return proto.ErrOK
	}
	stats, found, ok := m.quotaData(path, depth, quotaStats)
	if !found || !ok {
		return missingOrUnreadable(ok)
	}
	// Past a soft limit ZooKeeper only logs (rate-limited); past a hard
	// one it refuses. Sums wrap as Java's longs do.
	if hard := limits.get(statsCountHardLimit); checkCount && hard > -1 && stats.get(statsCount)+countDiff > hard {
		return proto.ErrQuotaExceeded
	}
	if hard := limits.get(statsByteHardLimit); checkBytes && hard > -1 && stats.get(statsBytes)+bytesDiff > hard {
		return proto.ErrQuotaExceeded
	}
	return proto.ErrOK
}

// quotaData reads the data, as before the multi being applied, of the
// child named name of the quota node of path's first depth components:
// found is false when there is no such node, ok false when StatsTrack
// cannot read its data.
func (m *Machine) quotaData(path string, depth int, name string) (st statsTrack, found, ok bool) {
	var data []byte
	if v := m.preMulti; v != nil {
		var comps []string
		for range depth {
			var c string
			c, path = tree.NextQuotaComponent(path)
			comps = append(comps, c)
		}
		data, found = v.nodes[quotaNodePath(comps, name)]
	} else if n := m.quotaNode(path, depth, name); n != nil {
		data, found = m.dataBeforeMulti(n), true
	}
	if !found {
		return nil, false, true
	}
	st, ok = parseStats(data)
	return st, true, ok
}

// quotasBefore is what checkQuota reads inside a multi that creates,
// deletes or sets nodes under /zookeeper/quota (quotaOps): the quota index
// and the data of every quota's limits and stats nodes, by path, as they
// were before the multi's first op.
type quotasBefore struct {
	index *tree.QuotaIndex
	nodes map[string][]byte
}

// quotasBeforeMulti returns the quotas as they stand now, before a multi.
func (m *Machine) quotasBeforeMulti() *quotasBefore {
	v := &quotasBefore{index: m.tree.CopyQuotaIndex(), nodes: map[string][]byte{}}
	v.index.EachQuota(func(comps []string) {
		for _, name := range []string{quotaLimits, quotaStats} {
			p := quotaNodePath(comps, name)
			if n := m.tree.Get(p); n != nil {
				v.nodes[p] = m.tree.Replicated(n).Data
			}
		}
	})
	return v
}

// quotaOps reports whether ops change a node under /zookeeper/quota: a
// limits node, whose quota would then differ within the multi, or any
// other (cheaper to take the quotas as before the multi than to tell).
func quotaOps(ops []Op) bool {
	for i := range ops {
		if ops[i].Op != proto.OpCheck && ops[i].Op != proto.OpSetACL && strings.HasPrefix(ops[i].Path, tree.QuotaPath) {
			return true
		}
	}
	return false
}

// quotaNodePath is the path of the child named name of the quota node of
// components comps.
func quotaNodePath(comps []string, name string) string {
	return tree.QuotaPath + "/" + strings.Join(comps, "/") + "/" + name
}

// missingOrUnreadable is checkQuota's answer when a quota node is missing
// (ok: the write passes, as ZooKeeper's "should not happen" branch lets
// it) or its data cannot be read (MARSHALLINGERROR).
func missingOrUnreadable(ok bool) proto.ErrCode {
	if ok {
		return proto.ErrOK
	}
	return proto.ErrMarshallingError
}

// quotaNode returns the child named name (zookeeper_stats,
// zookeeper_limits) of the quota node of path's first depth components,
// or nil.
func (m *Machine) quotaNode(path string, depth int, name string) *tree.Node {
	n := m.tree.Get(tree.QuotaPath)
	for ; depth > 0 && n != nil; depth-- {
		var c string
		c, path = tree.NextQuotaComponent(path)
		n = n.Child(c)
	}
	if n == nil {
		return nil
	}
	return n.Child(name)
}

// dataBeforeMulti returns n's data as it was before the multi being
// applied (its first recorded change's old data), or as it is outside a
// multi or when the multi has not changed it.
func (m *Machine) dataBeforeMulti(n *tree.Node) []byte {
	for i := range m.undo {
		if u := &m.undo[i]; u.node == n && (u.kind == undoData || u.kind == undoSetData) {
			return u.data
		}
	}
	return m.tree.Replicated(n).Data
}
