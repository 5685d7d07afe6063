package difftest

import (
	"fmt"
	"strconv"
	"strings"
)

// Random scenarios with quotas (GenerateQuotaScript).
//
// A quota on the script path P lives under /zookeeper/quota+root+P, which
// a script names "%P" (see ResolvePath): "%/a/zookeeper_limits" is the
// limits node of the quota on root+"/a". Every scenario runs under a
// root of its own, so its quotas are its own and nothing is cleaned up,
// as in TestRandomDifferential. Besides GenerateScript's steps (whose
// data is now and then sized around the byte limits), a quota scenario
// creates quotas on a few of its paths, nested now and then (on "/" and
// "/a", on "/a" and "/a/x"): the quota's node, its limits node with
// random soft and hard count and byte limits (now and then data that
// ZooKeeper's StatsTrack cannot read, or none), its stats node (whose
// data the server replaces), in either order or in one multi, or one of
// the two alone; it changes limits and stats with setData, deletes them;
// and it creates and sets nodes under the quotas, alone, in bursts and
// in multis mixed with other ops, with data sizes around the limits.
//
// Two rules keep out what ZooKeeper gets wrong or cannot survive:
//
//   - ZooKeeper checks a quota against the tree as committed when its
//     request processor prepares the write, so a write pipelined behind
//     another write not yet applied may be checked against stale stats
//     (it passes where Paddock, which checks when it applies, refuses).
//     So a quota write (a write of a path at or under any path the
//     generator ever picked for a quota, or of a quota node, "%...", in
//     a request or in any op of a multi) is never in flight
//     with another write: adding a pipelined write that would be, the
//     generator first adds a "wait" for the pipeline's earlier replies
//     (quotaPipeline). Requests that are not pipelined are answered
//     before the next step, and only one client's pipeline is ever open.
//   - ZooKeeper cannot apply a write under a quota whose stats node holds
//     data StatsTrack cannot read (its update throws in the middle of the
//     txn and the server stops). Such stats data is only ever set in a
//     block of one client's steps (badStats): the quota's limits get hard
//     count and byte limits first, so that every create under it is
//     checked and refused with MarshallingError; then the bad data, a few
//     creates (alone or in a multi of creates only) and reads; then valid
//     stats data again. No delete, setData or session close comes in
//     between, and stats nodes are never set inside a multi to data that
//     cannot be read.

// quotaStream is the second PCG seed of quota scenarios, so that they
// do not repeat GenerateScript's draws.
const quotaStream = 0x7a3c_51f0_9d2e_64b1

// genQuotaTargets are the paths quota scenarios put quotas on ("/" is
// the scenario root; "/a" twice, for nested quotas).
var genQuotaTargets = []string{"/", "/a", "/a", "/b", "/a/x", "/c"}

// quotaGen is the generator's state for quota scenarios.
type quotaGen struct {
	on        bool
	targets   []string        // paths the generator ever picked for quotas, in order
	isTarget  map[string]bool // the same, as a set
	dirs      map[string]bool // quota nodes ("%/a") the generator created and did not delete
	byteLimit int             // the last byte hard limit drawn, for data sizes around it
	pipeWrite bool            // the open pipeline holds a write
	pipeQuota bool            // the open pipeline holds a quota write
}

// GenerateQuotaScript returns the quota scenario of seed, named
// quota-<seed>: GenerateScript's kinds of steps plus quotas on the
// scenario's own paths, for servers with enforceQuota=true (see
// quotagen.go).
func GenerateQuotaScript(seed uint64) string { return generate(seed, genQuota) }

// GenerateQuota returns the quota scenario of seed, parsed.
func GenerateQuota(seed uint64) (Scenario, error) {
	return parseGenerated(fmt.Sprintf("quota-%d", seed), GenerateQuotaScript(seed))
}

// quotaNode names the child name of the quota node of target ("" for
// the quota node itself).
func quotaNode(target, name string) string {
	p := "%" + target
	if name == "" {
		return p
	}
	if target == "/" {
		return p + name
	}
	return p + "/" + name
}

// quotaSetup creates the scenario's quota node (%/), some nodes with
// open ACLs, and a quota or two.
func (g *generator) quotaSetup(c *genClient) {
	g.quota.isTarget = map[string]bool{}
	g.quota.dirs = map[string]bool{"/": true}
	g.quota.byteLimit = 10
	g.add(c, `create %%/ ""`)
	// Nodes for the quotas to count (the random ones above are fewer,
	// and often unreadable or unwritable).
	for _, p := range []string{"/a", "/b", "/c", "/a/x", "/a/x/z", "/b/x"} {
		if g.chance(60) {
			g.add(c, "create %s %s", p, g.sizedData())
		}
	}
	for range 1 + g.rng.IntN(2) {
		g.addQuota(c)
	}
}

// markTarget records that target may get a quota.
func (g *generator) markTarget(target string) {
	if !g.quota.isTarget[target] {
		g.quota.isTarget[target] = true
		g.quota.targets = append(g.quota.targets, target)
	}
}

// quotaTarget picks a path that has (or had, or may get) a quota, and
// marks it.
func (g *generator) quotaTarget() string {
	if len(g.quota.targets) > 0 && g.chance(85) {
		return pick(g, g.quota.targets)
	}
	t := pick(g, genQuotaTargets)
	g.markTarget(t)
	return t
}

// underQuota picks a path at or under target for a write.
func (g *generator) underQuota(target string) string {
	var ps []string
	for _, p := range genPaths {
		if quotaCovers(target, p) {
			ps = append(ps, p)
		}
	}
	base := strings.TrimSuffix(target, "/")
	ps = append(ps, base+"/q", base+"/q", base+"/q/r")
	return pick(g, ps)
}

// quotaCovers reports whether a quota on target counts script path p.
func quotaCovers(target, p string) bool {
	return target == "/" && strings.HasPrefix(p, "/") || p == target || strings.HasPrefix(p, target+"/")
}

// sizedData returns data of a size around the byte limits.
func (g *generator) sizedData() string {
	if g.chance(10) {
		return pick(g, []string{`""`, "null"})
	}
	return fmt.Sprintf("@%d", g.rng.IntN(g.quota.byteLimit+4))
}

// limitsData returns data for a limits node: soft and hard limits in
// one of the forms ZooKeeper's StatsTrack reads, or now and then text it
// cannot read or that sets no limit.
func (g *generator) limitsData() string {
	if g.chance(10) {
		return strconv.Quote(pick(g, []string{
			"count", "", "countHardLimit=abc", "countHardLimit=5,bytes", "byteHardLimit=",
			",countHardLimit=1", "countHardLimit==2", "countHardLimit=+2;;byteHardLimit=012",
			"count=1,bytes=2,countHardLimit= 3", "countHardLimit=1=;byteHardLimit=4=x",
		}))
	}
	if g.chance(3) {
		return "null"
	}
	hardCount, hardBytes, softCount, softBytes := -1, -1, -1, -1
	if g.chance(65) {
		hardCount = g.rng.IntN(7)
	}
	if g.chance(65) {
		hardBytes = g.rng.IntN(41)
		g.quota.byteLimit = max(hardBytes, 4)
	}
	if g.chance(25) {
		softCount = g.rng.IntN(7)
	}
	if g.chance(25) {
		softBytes = g.rng.IntN(41)
	}
	var text string
	switch g.rng.IntN(3) {
	case 0: // StatsTrack's text, as zkCli setquota writes it
		text = fmt.Sprintf("count=%d,bytes=%d=;byteHardLimit=%d;countHardLimit=%d", softCount, softBytes, hardBytes, hardCount)
	case 1:
		text = fmt.Sprintf("count=%d,bytes=%d,countHardLimit=%d,byteHardLimit=%d", softCount, softBytes, hardCount, hardBytes)
	default: // only the limits set
		var parts []string
		for _, kv := range []struct {
			k string
			v int
		}{{"countHardLimit", hardCount}, {"count", softCount}, {"byteHardLimit", hardBytes}, {"bytes", softBytes}} {
			if kv.v >= 0 {
				parts = append(parts, fmt.Sprintf("%s=%d", kv.k, kv.v))
			}
		}
		text = strings.Join(parts, ",")
	}
	return strconv.Quote(text)
}

// statsData returns data StatsTrack reads, for a stats node.
func (g *generator) statsData() string {
	switch r := g.rng.IntN(10); {
	case r < 6:
		return strconv.Quote(fmt.Sprintf("count=%d,bytes=%d", g.rng.IntN(8), g.rng.IntN(45)))
	case r < 7:
		return `""`
	case r < 8:
		return strconv.Quote(fmt.Sprintf("count=%d,bytes=%d=;countHardLimit=%d", g.rng.IntN(8), g.rng.IntN(45), g.rng.IntN(5)))
	case r < 9:
		return strconv.Quote(fmt.Sprintf("bytes=%d", g.rng.IntN(45)))
	}
	return `"count=-1,bytes=-1"`
}

// quotaVersion is the version of a setData or delete of a quota node.
func (g *generator) quotaVersion() string {
	if g.chance(80) {
		return "-1"
	}
	return g.version()
}

// quotaCreate returns a create under target with data sized around the
// limits; cmds are the create commands to pick from.
func (g *generator) quotaCreate(target string, cmds []string) string {
	p := g.underQuota(target)
	data := g.sizedData()
	switch cmd := pick(g, cmds); cmd {
	case "createttl":
		return fmt.Sprintf("createttl %s %s ttl 3600000", p, data)
	case "createcontainer":
		return fmt.Sprintf("createcontainer %s %s", p, data)
	default:
		mode := pick(g, []string{"persistent", "persistent", "persistent", "ephemeral",
			"persistent_sequential", "ephemeral_sequential", "container"})
		return fmt.Sprintf("%s %s %s %s", cmd, p, data, mode)
	}
}

var (
	quotaCreateCmds = []string{"create", "create", "create", "create2", "createcontainer", "createttl"}
	quotaMultiCmds  = []string{"create", "create", "create", "createcontainer", "createttl"}
)

// quotaRequest adds one request about a quota: a write under it with
// data sized around its limits, a multi mixing such writes with others,
// a change of its limits or stats, or a read of them.
func (g *generator) quotaRequest(c *genClient) {
	t := g.quotaTarget()
	lim, st := quotaNode(t, "zookeeper_limits"), quotaNode(t, "zookeeper_stats")
	switch r := g.rng.IntN(100); {
	case r < 30:
		g.add(c, "%s", g.quotaCreate(t, quotaCreateCmds))
	case r < 52:
		g.add(c, "set %s %s %s", g.underQuota(t), g.sizedData(), g.quotaVersion())
	case r < 72:
		g.quotaMulti(c, t)
	case r < 80:
		g.add(c, "set %s %s %s", lim, g.limitsData(), g.quotaVersion())
	case r < 85:
		g.add(c, "set %s %s %s", st, g.statsData(), g.quotaVersion())
	default:
		p := pick(g, []string{st, st, st, lim, quotaNode(t, "")})
		cmd := "get"
		if p == quotaNode(t, "") {
			cmd = pick(g, []string{"ls", "ls2", "exists"})
		}
		if g.chance(30) && c.canWatch(p, watchStandard) {
			switch cmd {
			case "get":
				c.dataW[p] = true
			case "exists":
				c.existW[p] = true
			default:
				c.childW[p] = true
			}
			g.add(c, "%s %s watch", cmd, p)
			return
		}
		g.add(c, "%s %s", cmd, p)
	}
}

// quotaMulti adds a multi of writes under target mixed with changes of
// its quota nodes and other ops.
func (g *generator) quotaMulti(c *genClient, target string) {
	n := 2 + g.rng.IntN(3)
	ops := make([]string, 0, n)
	for range n {
		var op string
		switch r := g.rng.IntN(100); {
		case r < 30:
			op = g.quotaCreate(target, quotaMultiCmds)
		case r < 50:
			op = fmt.Sprintf("set %s %s %s", g.underQuota(target), g.sizedData(), g.quotaVersion())
		case r < 60:
			op = fmt.Sprintf("delete %s %s", g.underQuota(target), g.quotaVersion())
		case r < 65:
			op = fmt.Sprintf("check %s %s", g.underQuota(target), g.version())
		case r < 73:
			op = fmt.Sprintf("set %s %s %s", quotaNode(target, "zookeeper_limits"), g.limitsData(), g.quotaVersion())
		case r < 78:
			// Never data StatsTrack cannot read: the multi's later
			// writes under the quota would stop ZooKeeper.
			op = fmt.Sprintf("set %s %s %s", quotaNode(target, "zookeeper_stats"), g.statsData(), g.quotaVersion())
		case r < 90:
			op = fmt.Sprintf("set %s %s %s", g.path(true), g.data(), g.version())
		default:
			p := g.path(false)
			op = fmt.Sprintf("create %s %s persistent", p, g.data())
		}
		ops = append(ops, "["+op+"]")
	}
	g.add(c, "multi %s", strings.Join(ops, " "))
}

// quotaOp adds a step or a few steps of one client about quotas, never
// pipelined: a new quota, a quota removed, a burst of writes under one,
// or a block with unreadable stats.
func (g *generator) quotaOp(c *genClient) {
	switch r := g.rng.IntN(100); {
	case r < 35:
		g.addQuota(c)
	case r < 55:
		g.removeQuota(c)
	case r < 65 && len(g.quota.targets) > 0:
		g.badStats(c)
	default:
		t := g.quotaTarget()
		for range 2 + g.rng.IntN(4) {
			if g.chance(60) {
				g.add(c, "%s", g.quotaCreate(t, quotaCreateCmds))
			} else {
				g.add(c, "set %s %s -1", g.underQuota(t), g.sizedData())
			}
		}
		g.add(c, "get %s", quotaNode(t, "zookeeper_stats"))
	}
}

// addQuota puts a quota on a random target: its quota node (and those
// above it) if the generator has not created them, then its limits and
// stats nodes in some order, in a multi, or one of them alone.
func (g *generator) addQuota(c *genClient) {
	t := pick(g, genQuotaTargets)
	g.markTarget(t)
	if t != "/" {
		parts := strings.Split(t[1:], "/")
		for i := range parts {
			d := "/" + strings.Join(parts[:i+1], "/")
			if !g.quota.dirs[d] || g.chance(10) {
				g.add(c, `create %s ""`, quotaNode(d, ""))
				g.quota.dirs[d] = true
			}
		}
	}
	lim, st := quotaNode(t, "zookeeper_limits"), quotaNode(t, "zookeeper_stats")
	ld := g.limitsData()
	// The server replaces a new stats node's data by its counts.
	sd := pick(g, []string{`""`, `""`, `""`, "null", `"count"`, `"count=100,bytes=100"`})
	switch r := g.rng.IntN(100); {
	case r < 55:
		g.add(c, "create %s %s", lim, ld)
		g.add(c, "create %s %s", st, sd)
	case r < 70:
		g.add(c, "create %s %s", st, sd)
		g.add(c, "create %s %s", lim, ld)
	case r < 85:
		ops := []string{fmt.Sprintf("[create %s %s]", lim, ld), fmt.Sprintf("[create %s %s]", st, sd)}
		if g.chance(50) {
			ops[0], ops[1] = ops[1], ops[0]
		}
		if g.chance(50) {
			ops = append(ops, "["+g.quotaCreate(t, quotaMultiCmds)+"]")
		}
		g.add(c, "multi %s", strings.Join(ops, " "))
	case r < 93:
		g.add(c, "create %s %s", lim, ld)
	default:
		g.add(c, "create %s %s", st, sd)
	}
	if g.chance(50) {
		g.add(c, "get %s", st)
	}
}

// removeQuota deletes a quota's stats and limits nodes (or one of them),
// and now and then its quota node.
func (g *generator) removeQuota(c *genClient) {
	t := g.quotaTarget()
	lim, st := quotaNode(t, "zookeeper_limits"), quotaNode(t, "zookeeper_stats")
	switch r := g.rng.IntN(100); {
	case r < 40:
		if g.chance(50) {
			lim, st = st, lim
		}
		g.add(c, "delete %s %s", st, g.quotaVersion())
		g.add(c, "delete %s %s", lim, g.quotaVersion())
		if t != "/" && g.chance(50) {
			g.add(c, "delete %s -1", quotaNode(t, ""))
			g.quota.dirs[t] = false
		}
	case r < 60:
		ops := []string{fmt.Sprintf("[delete %s -1]", lim), fmt.Sprintf("[delete %s -1]", st)}
		if g.chance(50) {
			ops = append(ops, "["+g.quotaCreate(t, quotaMultiCmds)+"]")
		}
		g.add(c, "multi %s", strings.Join(ops, " "))
	case r < 80:
		g.add(c, "delete %s -1", lim)
	default:
		g.add(c, "delete %s -1", st)
	}
}

// badStatsData is stats data ZooKeeper's StatsTrack cannot read.
var badStatsData = []string{`"count"`, "null", `"count=1,bytes"`, `"bytes=x"`}

// badStats adds the block of steps in which a quota's stats data cannot
// be read (see the rules at the top of this file): hard limits on both
// count and bytes, so that every create under the quota reads the stats;
// the bad data; creates alone or in multis of creates, and reads; and
// readable stats again.
func (g *generator) badStats(c *genClient) {
	t := pick(g, g.quota.targets)
	lim, st := quotaNode(t, "zookeeper_limits"), quotaNode(t, "zookeeper_stats")
	g.add(c, "set %s %s -1", lim, strconv.Quote(fmt.Sprintf("countHardLimit=%d,byteHardLimit=%d", g.rng.IntN(6), g.rng.IntN(41))))
	g.add(c, "set %s %s -1", st, pick(g, badStatsData))
	for range 1 + g.rng.IntN(3) {
		switch r := g.rng.IntN(100); {
		case r < 55:
			g.add(c, "%s", g.quotaCreate(t, quotaCreateCmds))
		case r < 80:
			g.add(c, "multi [%s] [%s]", g.quotaCreate(t, quotaMultiCmds), g.quotaCreate(t, quotaMultiCmds))
		default:
			g.add(c, "get %s", st)
		}
	}
	g.add(c, "set %s %s -1", st, g.statsData())
}

// quotaWriteCmds are the commands that may change the tree.
var quotaWriteCmds = map[string]bool{
	"create": true, "create2": true, "createcontainer": true, "createttl": true,
	"delete": true, "set": true, "setacl": true, "multi": true,
}

// quotaWrite reports whether step is a write and whether it is a quota
// write: one whose path (or one of whose ops' paths) is a quota node or
// lies at or under a path the generator ever picked for a quota.
func (g *generator) quotaWrite(step string) (write, quota bool) {
	cmd, rest, _ := strings.Cut(step, " ")
	if !quotaWriteCmds[cmd] {
		return false, false
	}
	var paths []string
	if cmd == "multi" {
		for _, op := range strings.Split(rest, "[")[1:] {
			if f := strings.Fields(op); len(f) > 1 {
				paths = append(paths, f[1])
			}
		}
	} else if f := strings.Fields(rest); len(f) > 0 {
		paths = f[:1]
	}
	for _, p := range paths {
		if strings.HasPrefix(p, "%") {
			return true, true
		}
		for _, t := range g.quota.targets {
			if quotaCovers(t, p) {
				return true, true
			}
		}
	}
	return true, false
}

// quotaPipeline keeps a quota write from being in flight with another
// write: before a pipelined write that would be, it adds a "wait" for
// the pipeline's earlier replies (ZooKeeper would check the quota
// against the tree without the earlier writes).
func (g *generator) quotaPipeline(c *genClient, step string) {
	q := &g.quota
	if g.prefix == "" {
		q.pipeWrite, q.pipeQuota = false, false
		return
	}
	write, quota := g.quotaWrite(step)
	if !write {
		return
	}
	if q.pipeQuota || quota && q.pipeWrite {
		g.lines = append(g.lines, c.name+" wait")
		g.barriers++
		q.pipeQuota = false
	}
	q.pipeWrite = true
	q.pipeQuota = q.pipeQuota || quota
}
