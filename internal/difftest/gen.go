package difftest

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
)

// Random scenarios.
//
// GenerateScript writes a scenario in the script language from a seed:
// two or three clients working on a handful of paths under the scenario
// root (depth at most 3, so that operations collide), with every create
// mode, right and wrong versions, watches of every kind, multi and
// multiRead, ACLs and auth, reconnects with setWatches, and session
// closes. The same seed gives the same script.
//
// The generator keeps out what the transcripts cannot compare or what
// knownDifferences already documents, without modelling the tree (it
// does not know which requests succeed, so its rules are conservative):
//
//   - Nothing expires: TTLs are an hour and the servers of
//     TestRandomDifferential reap containers and TTL nodes once a day.
//   - A pipelined setACL is the last request of its pipeline: ZooKeeper
//     checks a request prepared before the setACL is applied against the
//     old ACL (its outstanding change record keeps it), a race.
//   - No createTTL with a negative TTL and a mode without one: ZooKeeper
//     3.8 lets it through its checks, fails applying it and stops.
//   - exists is never sent on a path that may carry an ACL without READ
//     for our clients (3.9 checks READ there, ZOOKEEPER-2590).
//   - A connection keeps one kind of watch per path: standard, persistent
//     or persistent recursive (3.9 lets them coexist, ZOOKEEPER-4466),
//     and removeWatches goes only to paths with standard watches
//     (ZOOKEEPER-4472 changed how it treats persistent ones).
//   - No checkWatches (ZOOKEEPER-4466), no check outside a multi, no
//     create2 or non-container createContainer inside a multi
//     (ZOOKEEPER-4026), no unknown create flags, no deleteContainer.
//   - After a session closes, the other clients read their events sorted:
//     ZooKeeper deletes a session's ephemerals in hash-set order. The
//     closing client closes from a new connection without watches.
//
// GenerateEnsembleScript adds, for ensembles, the syncs and settles that
// replication lag calls for (see there). GenerateQuotaScript adds quotas
// on the scenario's paths, for servers with enforceQuota=true (see
// there and quotagen.go).

// genPaths are the paths random operations work on.
var genPaths = []string{"/a", "/b", "/c", "/a/x", "/a/y", "/b/x", "/a/x/z"}

// genSeqPaths are names sequential creates may have produced; reads,
// sets and deletes use them now and then.
var genSeqPaths = []string{
	"/s0000000000", "/s0000000001", "/s0000000002",
	"/a/s0000000000", "/a/s0000000001", "/a/s0000000002", "/a/s0000000003",
	"/a/x/s0000000000", "/a/x/s0000000001", "/a/0000000000", "/a/0000000001",
}

// genSeqPrefixes are the paths sequential creates append a number to
// (a sequential create's path may end in '/').
var genSeqPrefixes = []string{"/s", "/a/s", "/a/x/s", "/s", "/a/s", "/a/"}

// genBadPaths are invalid paths, now and then.
var genBadPaths = []string{"/a/", "/a//x", "/.", "/a/./x", "/a/.."}

// genACL is an ACL the generator may set, and whether it lets every
// client of the scenario (all on 127.0.0.1, with or without auth) read.
type genACL struct {
	text     string
	readable bool
}

var genACLs = []genACL{
	{"open", true},
	{"read", true},
	{"creator", false},
	{"empty", false},
	{"world:anyone:cdwa", false},
	{"world:anyone:rw", true},
	{"world:anyone:c", false},
	{"ip:127.0.0.1:cdrwa", true},
	{"ip:127.0.0.1:r,world:anyone:cd", true},
	{"ip:10.0.0.0/8:cdrwa", false},
	{"ip:127.0.0.0/8:rwa", true},
	{"digestpw:u1:p1:cdrwa", false},
	{"digestpw:u1:p1:cdrwa,world:anyone:r", true},
	{"digestpw:u2:p2:rw,digestpw:u1:p1:cda", false},
	{"digestpw:u1:p1:cdrwa,ip:127.0.0.1:c", false},
}

// watchKind is the kind of watch a connection keeps on a path.
type watchKind int

const (
	watchNone watchKind = iota
	watchStandard
	watchPersistent
	watchRecursive
)

// genClient is what the generator knows of one script client.
type genClient struct {
	name       string
	connected  bool // has a connection (it may have been closed by the server)
	session    bool // has a session it may reattach (not closed)
	stale      bool // ensemble: its member may lag a change (see ensembleWrites)
	kinds      map[string]watchKind
	dataW      map[string]bool // standard watches asked for, for setWatches
	existW     map[string]bool
	childW     map[string]bool
	persistent map[string]bool
	recursive  map[string]bool
}

func (c *genClient) resetWatches() {
	c.kinds = map[string]watchKind{}
	c.dataW, c.existW, c.childW = map[string]bool{}, map[string]bool{}, map[string]bool{}
	c.persistent, c.recursive = map[string]bool{}, map[string]bool{}
}

// generator builds one random scenario.
type generator struct {
	rng       *rand.Rand
	lines     []string
	clients   []*genClient
	noRead    map[string]bool // paths that may have been given an ACL without READ
	prefix    string          // "send " while adding pipelined requests
	ensemble  bool            // clients on different members (GenerateEnsembleScript)
	barriers  int             // sync, settle and wait lines added for a rule, not counted as steps
	unsettled bool            // ensemble: a setacl was added and no settle after it
	quota     quotaGen        // GenerateQuotaScript's state (quotagen.go)
}

// genMode is the kind of scenario generate writes.
type genMode int

const (
	genRandom   genMode = iota // GenerateScript
	genEnsemble                // GenerateEnsembleScript
	genQuota                   // GenerateQuotaScript
)

// GenerateScript returns the random scenario of seed as script text,
// named random-<seed>.
func GenerateScript(seed uint64) string { return generate(seed, genRandom) }

// generate writes seed's scenario of the given mode: genEnsemble adds
// what GenerateEnsembleScript describes, genQuota what
// GenerateQuotaScript does. Every draw of the other modes is made only
// in their mode, so GenerateScript's scripts are those it always gave
// (TestGeneratePinned).
func generate(seed uint64, mode genMode) string {
	stream := uint64(0x9e3779b97f4a7c15)
	if mode == genQuota {
		stream = quotaStream
	}
	g := &generator{
		rng:      rand.New(rand.NewPCG(seed, stream)),
		noRead:   map[string]bool{},
		ensemble: mode == genEnsemble,
	}
	g.quota.on = mode == genQuota
	n := 2 + g.rng.IntN(2)
	for i := range n {
		c := &genClient{name: fmt.Sprintf("c%d", i+1)}
		c.resetWatches()
		g.clients = append(g.clients, c)
	}
	g.connect(g.clients[0])
	// Some nodes to start with, so that more operations find one.
	for _, p := range genPaths {
		if g.chance(60) {
			mode := "persistent"
			if g.chance(20) {
				mode = pick(g, []string{"ephemeral", "container"})
			}
			g.add(g.clients[0], "create %s d0 %s %s", p, mode, g.acl(p))
		}
	}
	if g.quota.on {
		g.quotaSetup(g.clients[0])
	}
	steps := len(g.lines) + 20 + g.rng.IntN(21)
	if g.quota.on {
		steps += 15
	}
	for len(g.lines)-g.barriers < steps {
		c := g.clients[g.rng.IntN(len(g.clients))]
		if !c.connected {
			g.connect(c)
			continue
		}
		g.barrier(c)
		g.op(c)
		if g.unsettled {
			// ZooKeeper's leader checks writes it prepares before it has
			// applied a setACL (which a follower may already have
			// answered) against the old ACL.
			g.add(c, "settle")
			g.barriers++
			g.unsettled = false
		}
	}
	name := "random"
	if g.quota.on {
		name = "quota"
	}
	if g.ensemble {
		name = "ensemble"
		// The final flush pings every client: first let each member
		// deliver what the last changes fired.
		for _, c := range g.clients {
			if c.connected {
				g.barrier(c)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "== %s-%d\n", name, seed)
	for _, l := range g.lines {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// Generate returns the random scenario of seed, parsed.
func Generate(seed uint64) (Scenario, error) {
	return parseGenerated(fmt.Sprintf("random-%d", seed), GenerateScript(seed))
}

// GenerateEnsembleScript returns the random scenario of seed for an
// ensemble, named ensemble-<seed>: GenerateScript's scenario of the same
// seed in spirit (the same kinds of steps, not the same steps) with
// clients that connect to different members and sync where a single
// server would need no sync. Client cN's connections go to member
// (N-1) mod 3 + 1 unless a connect names another with member=K, as
// reattaches often do (setWatches then goes to a member that never saw
// the watches). Reads on a member may lag the leader, so the script
// keeps to ZooKeeper's rule for cross-client consistency: once another
// client may have changed the tree (any write or a session close), a
// client's next step is preceded by "sync /" (and the events a close
// fires are read with "events sorted sync"), and so is the first step on
// a new connection. A member sends the notifications of the txns
// committed before a sync ahead of the sync's reply, so events land
// where a single server would put them. The runner brings a member up to
// date before a reattach (RunOptions.Members). A setACL is followed by
// "settle": ZooKeeper's leader checks the writes it prepares before it
// has itself applied a setACL (which a follower may already have
// answered) against the old ACL. Run against a single server the script
// means the same.
func GenerateEnsembleScript(seed uint64) string { return generate(seed, genEnsemble) }

// GenerateEnsemble returns the ensemble scenario of seed, parsed.
func GenerateEnsemble(seed uint64) (Scenario, error) {
	return parseGenerated(fmt.Sprintf("ensemble-%d", seed), GenerateEnsembleScript(seed))
}

func parseGenerated(file, script string) (Scenario, error) {
	scs, err := ParseScenarios(file, script)
	if err != nil {
		return Scenario{}, err
	}
	if len(scs) != 1 {
		return Scenario{}, fmt.Errorf("difftest: %s gave %d scenarios", file, len(scs))
	}
	return scs[0], nil
}

func (g *generator) add(c *genClient, format string, args ...any) {
	step := fmt.Sprintf(format, args...)
	if g.quota.on {
		g.quotaPipeline(c, step)
	}
	g.lines = append(g.lines, c.name+" "+g.prefix+step)
	if !g.ensemble {
		return
	}
	cmd, rest, _ := strings.Cut(step, " ")
	switch {
	case ensembleWrites[cmd]:
		for _, o := range g.clients {
			if o != c {
				o.stale = true
			}
		}
	case cmd == "connect":
		c.stale = true
	case cmd == "sync" || cmd == "events" && strings.HasSuffix(rest, "sync"):
		c.stale = false
	}
	if cmd == "setacl" {
		g.unsettled = true
	}
}

// ensembleWrites are the commands after which, in an ensemble, the
// other clients' members may lag: every request that may change the tree
// (its outcome does not matter: the generator does not model the tree),
// and closing a session, which deletes its ephemerals.
var ensembleWrites = map[string]bool{
	"create": true, "create2": true, "createcontainer": true, "createttl": true,
	"delete": true, "set": true, "setacl": true, "multi": true, "close": true,
}

// barrier adds, in an ensemble, a sync of the scenario root on c's
// connection when its member may lag a change another client made (or c
// has a new connection, perhaps on another member): the member answers
// the sync once it has applied every txn the leader committed before it,
// and sends the notifications those txns fired first, so c's next step
// reads what it would read from a single server, and the events land
// where a single server puts them.
func (g *generator) barrier(c *genClient) {
	if !g.ensemble || !c.stale {
		return
	}
	g.add(c, "sync /")
	g.barriers++
}

// chance reports true with probability p percent.
func (g *generator) chance(p int) bool { return g.rng.IntN(100) < p }

func pick[T any](g *generator, xs []T) T { return xs[g.rng.IntN(len(xs))] }

// path picks a path for an operation; seq lets it pick a sequential name.
func (g *generator) path(seq bool) string {
	if seq && g.chance(15) {
		return pick(g, genSeqPaths)
	}
	if g.chance(2) {
		return pick(g, genBadPaths)
	}
	if g.chance(5) {
		return "/"
	}
	return pick(g, genPaths)
}

func (g *generator) version() string {
	switch r := g.rng.IntN(10); {
	case r < 4:
		return "-1"
	case r < 7:
		return "0"
	case r < 9:
		return "1"
	}
	return "2"
}

func (g *generator) data() string {
	if g.quota.on && g.chance(40) {
		return g.sizedData()
	}
	return pick(g, []string{"d1", "d2", "d3", `""`, "null", "@40"})
}

// acl picks an ACL for a create or setACL on path and notes whether the
// path may lose READ.
func (g *generator) acl(path string) string {
	a := genACLs[0]
	if g.chance(35) {
		a = pick(g, genACLs)
	}
	if !a.readable {
		g.noRead[path] = true
		for _, sp := range genSeqPaths {
			// path may be a sequential create's prefix.
			if strings.HasPrefix(sp, path) && strings.Trim(sp[len(path):], "0123456789") == "" {
				g.noRead[sp] = true
			}
		}
	}
	return a.text
}

// connect connects c: a new session, or its own session again (with
// setWatches for the watches it had) when it has one.
func (g *generator) connect(c *genClient) {
	c.connected = true
	if !c.session || g.chance(20) {
		opts := pick(g, []string{"", "", "", "", "", " ro", " noro", " timeout=100000", " timeout=35000"})
		if g.ensemble && g.chance(30) {
			opts += g.member()
		}
		g.add(c, "connect%s", opts)
		c.session = true
		c.resetWatches()
		return
	}
	member := ""
	if g.ensemble && g.chance(60) {
		member = g.member()
	}
	g.add(c, "connect session=%s zxid=%s%s", c.name, c.name, member)
	if !g.chance(75) {
		c.resetWatches()
		return
	}
	args := []string{}
	list := func(key string, m map[string]bool) {
		if len(m) == 0 {
			return
		}
		ps := make([]string, 0, len(m))
		for p := range m {
			ps = append(ps, p)
		}
		sort.Strings(ps)
		args = append(args, key+"="+strings.Join(ps, ","))
	}
	list("data", c.dataW)
	list("exist", c.existW)
	list("child", c.childW)
	cmd := "setwatches"
	if len(c.persistent)+len(c.recursive) > 0 {
		cmd = "setwatches2"
		list("persistent", c.persistent)
		list("recursive", c.recursive)
	}
	if len(args) == 0 {
		return
	}
	g.add(c, "%s %s %s", cmd, c.name, strings.Join(args, " "))
}

// ensembleMembers is the number of members GenerateEnsembleScript's
// connects pick from.
const ensembleMembers = 3

// member returns a connect option for a random member.
func (g *generator) member() string {
	return fmt.Sprintf(" member=%d", 1+g.rng.IntN(ensembleMembers))
}

// standardPaths returns the paths c asked standard watches for, sorted.
func (c *genClient) standardPaths() []string {
	var ps []string
	for p, k := range c.kinds {
		if k == watchStandard {
			ps = append(ps, p)
		}
	}
	sort.Strings(ps)
	return ps
}

// canWatch reports whether c may put a watch of kind k on path, and if
// so records that path's kind for c.
func (c *genClient) canWatch(path string, k watchKind) bool {
	if have := c.kinds[path]; have != watchNone && have != k {
		return false
	}
	c.kinds[path] = k
	return true
}

// op adds one random step of a connected client.
func (g *generator) op(c *genClient) {
	if g.quota.on && g.chance(25) {
		g.quotaOp(c)
		return
	}
	switch r := g.rng.IntN(100); {
	case r < 78:
		g.request(c)
	case r < 82:
		// Pipelined requests, answered in order.
		g.prefix = "send "
		for range 2 + g.rng.IntN(3) {
			g.request(c)
			if strings.HasPrefix(g.lines[len(g.lines)-1], c.name+" send setacl ") {
				break
			}
		}
		g.prefix = ""
		g.add(c, "wait")
	case r < 85:
		g.auth(c)
	case r < 89:
		g.add(c, "events")
	case r < 90:
		g.add(c, "whoami")
	case r < 94:
		g.add(c, "disconnect")
		c.connected = false
	default:
		g.close(c)
	}
}

// request adds one random request of a connected client.
func (g *generator) request(c *genClient) {
	if g.quota.on && g.chance(30) {
		g.quotaRequest(c)
		return
	}
	switch r := g.rng.IntN(100); {
	case r < 22:
		g.create(c)
	case r < 30:
		g.add(c, "delete %s %s", g.path(true), g.version())
	case r < 38:
		g.add(c, "set %s %s %s", g.path(true), g.data(), g.version())
	case r < 58:
		g.read(c)
	case r < 65:
		g.addWatch(c)
	case r < 69:
		g.removeWatches(c)
	case r < 79:
		g.multi(c)
	case r < 83:
		g.multiRead(c)
	case r < 89:
		p := g.path(false)
		g.add(c, "setacl %s %s %s", p, g.acl(p), g.version())
	case r < 92:
		g.add(c, "getacl %s", g.path(false))
	case r < 94:
		g.add(c, "sync %s", pick(g, []string{"/", "/a"}))
	case r < 97:
		g.add(c, "getephemerals %s", pick(g, []string{"/", "/a", "/a/", "/a/s"}))
	default:
		g.add(c, "allchildren %s", pick(g, []string{"/", "/a", "/b"}))
	}
}

func (g *generator) create(c *genClient) {
	switch r := g.rng.IntN(100); {
	case r < 12:
		p := g.path(false)
		g.add(c, "createcontainer %s %s container %s", p, g.data(), g.acl(p))
	case r < 22:
		p := g.path(false)
		mode := pick(g, []string{"ttl", "ttl", "ttl_sequential", "persistent"})
		if mode == "ttl_sequential" {
			p = pick(g, genSeqPrefixes)
		}
		ttl := "3600000"
		if g.chance(10) && mode != "persistent" {
			// Invalid TTLs. (A negative TTL with a mode without one is
			// left out: ZooKeeper 3.8 accepts it and then fails applying
			// the txn, and stops serving.)
			ttl = pick(g, []string{"0", "-5"})
		}
		g.add(c, "createttl %s %s %s %s %s", p, g.data(), mode, ttl, g.acl(p))
	default:
		cmd := pick(g, []string{"create", "create", "create2"})
		mode := pick(g, []string{"persistent", "persistent", "ephemeral", "ephemeral",
			"persistent_sequential", "ephemeral_sequential", "container"})
		p := g.path(false)
		if strings.HasSuffix(mode, "_sequential") {
			p = pick(g, genSeqPrefixes)
		}
		g.add(c, "%s %s %s %s %s", cmd, p, g.data(), mode, g.acl(p))
	}
}

func (g *generator) read(c *genClient) {
	cmd := pick(g, []string{"exists", "exists", "get", "get", "ls", "ls2"})
	p := g.path(true)
	if cmd == "exists" && g.noRead[p] {
		cmd = "get"
	}
	if !g.chance(65) || !c.canWatch(p, watchStandard) {
		g.add(c, "%s %s", cmd, p)
		return
	}
	switch cmd {
	case "exists":
		c.existW[p] = true
	case "get":
		c.dataW[p] = true
	default:
		c.childW[p] = true
	}
	g.add(c, "%s %s watch", cmd, p)
}

func (g *generator) addWatch(c *genClient) {
	p := g.path(false)
	if g.chance(30) {
		p = pick(g, []string{"/", "/a"})
	}
	if g.chance(50) {
		if c.canWatch(p, watchRecursive) {
			c.recursive[p] = true
			g.add(c, "addwatch %s recursive", p)
		}
		return
	}
	if c.canWatch(p, watchPersistent) {
		c.persistent[p] = true
		g.add(c, "addwatch %s persistent", p)
	}
}

func (g *generator) removeWatches(c *genClient) {
	p := g.path(true)
	if std := c.standardPaths(); len(std) > 0 && g.chance(70) {
		p = pick(g, std)
	}
	if k := c.kinds[p]; k != watchNone && k != watchStandard {
		return
	}
	typ := pick(g, []string{"data", "children", "any"})
	g.add(c, "removewatches %s %s", p, typ)
	if typ != "children" {
		delete(c.dataW, p)
		delete(c.existW, p)
	}
	if typ != "data" {
		delete(c.childW, p)
	}
}

func (g *generator) multi(c *genClient) {
	n := 1 + g.rng.IntN(4)
	if g.chance(5) {
		n = 0
	}
	ops := make([]string, 0, n)
	for range n {
		var op string
		switch r := g.rng.IntN(100); {
		case r < 30:
			mode := pick(g, []string{"persistent", "persistent", "ephemeral", "persistent_sequential", "ephemeral_sequential"})
			p := g.path(false)
			if strings.HasSuffix(mode, "_sequential") {
				p = pick(g, genSeqPrefixes)
			}
			op = fmt.Sprintf("create %s %s %s %s", p, g.data(), mode, g.acl(p))
		case r < 35:
			p := g.path(false)
			op = fmt.Sprintf("createcontainer %s %s", p, g.data())
		case r < 38:
			p := g.path(false)
			op = fmt.Sprintf("createttl %s %s ttl 3600000", p, g.data())
		case r < 55:
			op = fmt.Sprintf("delete %s %s", g.path(true), g.version())
		case r < 75:
			op = fmt.Sprintf("set %s %s %s", g.path(true), g.data(), g.version())
		default:
			op = fmt.Sprintf("check %s %s", g.path(true), g.version())
		}
		ops = append(ops, "["+op+"]")
	}
	g.add(c, "%s", strings.TrimSpace("multi "+strings.Join(ops, " ")))
}

func (g *generator) multiRead(c *genClient) {
	n := 1 + g.rng.IntN(3)
	ops := make([]string, 0, n)
	for range n {
		ops = append(ops, fmt.Sprintf("[%s %s]", pick(g, []string{"get", "ls"}), g.path(true)))
	}
	g.add(c, "multiread %s", strings.Join(ops, " "))
}

func (g *generator) auth(c *genClient) {
	switch r := g.rng.IntN(100); {
	case r < 40:
		g.add(c, "auth digest u1:p1")
	case r < 75:
		g.add(c, "auth digest u2:p2")
	case r < 85:
		g.add(c, "auth digest u1:wrong")
	case r < 93:
		g.add(c, "auth digest super:test")
	default:
		// An unknown scheme fails the auth and the server closes the
		// connection; the session stays.
		g.add(c, "auth nosuchscheme x")
		g.add(c, "ping")
		c.connected = false
	}
}

// close ends c's session; the other clients then read the events of its
// ephemerals' deletion, sorted.
func (g *generator) close(c *genClient) {
	if len(c.kinds) > 0 {
		// Deleting the session's ephemerals may fire several of its own
		// watches, in hash-set order: close from a connection without
		// watches.
		g.add(c, "disconnect")
		member := ""
		if g.ensemble && g.chance(60) {
			member = g.member()
		}
		g.add(c, "connect session=%s zxid=%s%s", c.name, c.name, member)
	}
	g.add(c, "close")
	c.connected, c.session = false, false
	c.resetWatches()
	for _, o := range g.clients {
		if o != c && o.connected {
			if g.ensemble {
				g.add(o, "events sorted sync")
				continue
			}
			g.add(o, "events sorted")
		}
	}
	if g.chance(20) {
		// Reattaching a closed session: the server refuses it.
		member := ""
		if g.ensemble && g.chance(60) {
			member = g.member()
		}
		g.add(c, "connect session=%s%s", c.name, member)
		g.add(c, "ping")
		c.connected = false
	}
}
