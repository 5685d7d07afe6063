package fsm

import (
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/tree"
	"github.com/paddockhq/paddock/internal/zpath"
)

// Quota bookkeeping, as ZooKeeper's DataTree keeps it: a path P has a quota
// when /zookeeper/quota/P/zookeeper_limits exists, and the server keeps
// /zookeeper/quota/P/zookeeper_stats holding "count=N,bytes=M" for P's
// subtree (P included). The stats node's data changes without a version or
// mzxid change, as in ZooKeeper. Quotas are soft: exceeding them is allowed.
const (
	quotaLimits = "zookeeper_limits"
	quotaStats  = "zookeeper_stats"
)

// quotaRoot returns the longest prefix of path (path itself or an ancestor,
// never "/") that has a quota, or "".
func (m *Machine) quotaRoot(path string) string {
	q := m.tree.Get(tree.QuotaPath)
	if q == nil || q.NumChildren() == 0 {
		return ""
	}
	for p := path; p != "/" && p != ""; p, _ = zpath.Parent(p) {
		if m.tree.Get(tree.QuotaPath+p+"/"+quotaLimits) != nil {
			return p
		}
	}
	return ""
}

// updateQuota adds countDiff nodes and bytesDiff bytes to the stats of the
// quota covering path, if any, recording the undo.
func (m *Machine) updateQuota(path string, countDiff, bytesDiff int64) {
	root := m.quotaRoot(path)
	if root == "" {
		return
	}
	stats := m.tree.Get(tree.QuotaPath + root + "/" + quotaStats)
	if stats == nil {
		return
	}
	count, bytes := parseStats(stats.Data)
	m.replaceData(stats, formatStats(count+countDiff, bytes+bytesDiff))
}

// quotaNodeCreated handles the creation of a stats node: its data becomes
// the current counts of the quota's subtree (ZooKeeper's updateQuotaForPath).
func (m *Machine) quotaNodeCreated(path string, n *tree.Node) {
	if !strings.HasPrefix(path, tree.QuotaPath+"/") || !strings.HasSuffix(path, "/"+quotaStats) {
		return
	}
	target := strings.TrimSuffix(strings.TrimPrefix(path, tree.QuotaPath), "/"+quotaStats)
	t := m.tree.Get(target)
	if t == nil {
		return
	}
	var count, bytes int64
	var walk func(n *tree.Node)
	walk = func(n *tree.Node) {
		count++
		bytes += int64(len(n.Data))
		n.EachChild(func(_ string, c *tree.Node) { walk(c) })
	}
	walk(t)
	m.replaceData(n, formatStats(count, bytes))
}

func (m *Machine) replaceData(n *tree.Node, data []byte) {
	old := n.Data
	m.tree.SetData(n, data, n.Version, n.Mzxid, n.Mtime)
	m.record(undoStep{kind: undoData, node: n, data: old})
}

// parseStats reads "count=N,bytes=M" (other keys ignored).
func parseStats(data []byte) (count, bytes int64) {
	for _, kv := range strings.Split(string(data), ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue
		}
		switch strings.TrimSpace(k) {
		case "count":
			count = n
		case "bytes":
			bytes = n
		}
	}
	return count, bytes
}

func formatStats(count, bytes int64) []byte {
	return []byte("count=" + strconv.FormatInt(count, 10) + ",bytes=" + strconv.FormatInt(bytes, 10))
}
