package tree

import "strings"

// QuotaLimits is the name of the node that puts a quota on a path: a node
// called so whose parent's path starts with QuotaPath (package fsm's
// quota.go gives ZooKeeper's rules in full).
const QuotaLimits = "zookeeper_limits"

// quotaTrie is the tree's index of quotas, as ZooKeeper's DataTree keeps
// its PathTrie, but derived from the nodes present alone: every limits
// node (QuotaLimits, with a parent whose path starts with QuotaPath) counts
// once at the trie node reached by the components (NextQuotaComponent) of
// the rest of its parent's path, "/a/ /b" for /zookeeper/quota/a/ /b. A
// limits node whose parent's path leaves no component is not counted.
//
// The tree keeps the index where it keeps its others (index, unindex), so
// Create, Delete, Reinsert and DecodeSnapshot keep it alike, and finding a
// path's quota (QuotaDepth) costs one map lookup per component of the path
// at most, however many quotas there are and however many children the
// quota directories have. Its memory grows with the quotas, one trie node
// per component of each, not with the tree's nodes; a trie node without
// limits or children is removed.
type quotaTrie struct {
	limits int                   // the limits nodes naming this trie node's components
	kids   map[string]*quotaTrie // by component; nil when empty
}

// NextQuotaComponent returns the first component of path (or of the rest
// of one) that ZooKeeper's PathTrie.split keeps, and what follows it; ""
// if there is none. The components are the '/'-separated names without
// those that Java's trim() leaves empty (every character at most U+0020),
// the others untrimmed: "/a/ /b " has the components "a" and "b ".
func NextQuotaComponent(path string) (name, rest string) {
	for path != "" {
		name, path, _ = strings.Cut(path, "/")
		if !blankName(name) {
			return name, path
		}
	}
	return "", ""
}

// blankName reports whether Java's trim() leaves name empty: whether every
// character is at most U+0020 (in UTF-8 the bytes at most 0x20 are those
// characters, and no others).
func blankName(name string) bool {
	for i := 0; i < len(name); i++ {
		if name[i] > ' ' {
			return false
		}
	}
	return true
}

// QuotaDepth returns the number of components of the deepest quota whose
// components are path's first ones (PathTrie.findMaxPrefix), 0 if none:
// the quota is on path's first QuotaDepth(path) components. It does not
// allocate.
func (t *Tree) QuotaDepth(path string) int { return t.quotas.depth(path) }

func (q *quotaTrie) depth(path string) int {
	best := 0
	for depth := 1; q.kids != nil; depth++ {
		var name string
		name, path = NextQuotaComponent(path)
		if name == "" {
			break
		}
		if q = q.kids[name]; q == nil {
			break
		}
		if q.limits > 0 {
			best = depth
		}
	}
	return best
}

// QuotaIndex is a copy of a tree's quota index, which later changes to
// the tree leave as it was (CopyQuotaIndex).
type QuotaIndex struct{ root quotaTrie }

// CopyQuotaIndex returns a copy of the tree's quota index. It costs one
// allocation per component of every quota.
func (t *Tree) CopyQuotaIndex() *QuotaIndex {
	var clone func(q *quotaTrie) quotaTrie
	clone = func(q *quotaTrie) quotaTrie {
		c := quotaTrie{limits: q.limits}
		if q.kids != nil {
			c.kids = make(map[string]*quotaTrie, len(q.kids))
			for name, k := range q.kids {
				kc := clone(k)
				c.kids[name] = &kc
			}
		}
		return c
	}
	return &QuotaIndex{root: clone(&t.quotas)}
}

// QuotaDepth is Tree.QuotaDepth as the tree was when x was copied.
func (x *QuotaIndex) QuotaDepth(path string) int { return x.root.depth(path) }

// EachQuota calls f with the components of every quota in x, a quota
// before those below it. f must not keep components, whose array is
// reused.
func (x *QuotaIndex) EachQuota(f func(components []string)) {
	var walk func(q *quotaTrie, components []string)
	walk = func(q *quotaTrie, components []string) {
		if q.limits > 0 {
			f(components)
		}
		for name, k := range q.kids {
			walk(k, append(components, name))
		}
	}
	walk(&x.root, nil)
}

// quotaNamed reports whether the node at path is a limits node, and if so
// returns the rest of its parent's path after QuotaPath, whose components
// name its quota.
func quotaNamed(path string) (string, bool) {
	parent, ok := strings.CutSuffix(path, "/"+QuotaLimits)
	if !ok {
		return "", false
	}
	return strings.CutPrefix(parent, QuotaPath)
}

// indexQuota counts the node at path in the quota index if it is a limits
// node.
func (t *Tree) indexQuota(path string) {
	rest, ok := quotaNamed(path)
	if !ok {
		return
	}
	name, rest := NextQuotaComponent(rest)
	if name == "" {
		return // no components: no quota
	}
	q := &t.quotas
	for name != "" {
		k := q.kids[name]
		if k == nil {
			if q.kids == nil {
				q.kids = make(map[string]*quotaTrie, 1)
			}
			k = &quotaTrie{}
			q.kids[strings.Clone(name)] = k // not the path's memory
		}
		q = k
		name, rest = NextQuotaComponent(rest)
	}
	q.limits++
}

// unindexQuota takes back indexQuota(path), removing the trie nodes left
// with neither limits nor children.
func (t *Tree) unindexQuota(path string) {
	rest, ok := quotaNamed(path)
	if !ok {
		return
	}
	// cut is the deepest trie node on the way that stays whatever happens
	// below it (the root, or one with limits or another child), cutName
	// the component followed from it: if the last trie node is left
	// empty, so is everything between cut and it.
	q := &t.quotas
	var cut *quotaTrie
	var cutName string
	for {
		var name string
		name, rest = NextQuotaComponent(rest)
		if name == "" {
			break
		}
		k := q.kids[name]
		if k == nil {
			return // never indexed (cannot happen: index and unindex pair up)
		}
		if cut == nil || q.limits > 0 || len(q.kids) > 1 {
			cut, cutName = q, name
		}
		q = k
	}
	if cut == nil || q.limits == 0 {
		return // no components, or never indexed
	}
	q.limits--
	if q.limits == 0 && len(q.kids) == 0 {
		delete(cut.kids, cutName)
		if len(cut.kids) == 0 {
			cut.kids = nil
		}
	}
}
