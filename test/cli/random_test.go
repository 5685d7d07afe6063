package cli

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
	"github.com/paddockhq/paddock/zk"
)

// The random scripts draw from zkCli 3.8's commands with their options,
// valid and not, and leave out what docs/cli.md lists as differences:
// version, help, connect and reconfig; a number that is not one where zkCli
// dies with a stack trace (set -v abc, and set -v -x, where -x is the
// value); a path the client refuses for addWatch; addauth with a refused
// credential. Watch events are kept in order with "sync /" (see
// scriptGen.watched).

// randomSeeds are the seeds TestRandomSameAsZkCli runs by default: few,
// since zkCli.sh starts a JVM for each script. PADDOCK_CLI_SEEDS replaces
// them: a count ("300": seeds 1 to 300), a range ("100-399") or a list
// ("7,42").
var randomSeeds = []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

// Pools the generator draws from: a small namespace, so that commands
// collide, and some paths the client refuses.
var (
	goodPaths = []string{"/a", "/a", "/a/b", "/a/b", "/a/b/c", "/b", "/b", "/b/a", "/c", "/", "/zookeeper", "/a/b/c/d"}
	badPaths  = []string{"a", "/a/", "//a", "/a//b", "/a/./b", "/a/../b", "/a/b/"}
	datas     = []string{"x", "hello", `"two words"`, "''", "12", `a"b`, "-1", "data", "ünï☃", "'it is'"}
	versions  = []string{"-1", "0", "0", "1", "2", "7"}
	acls      = []string{"world:anyone:cdrwa", "world:anyone:r", "world:anyone:cdrw", "world:anyone:crwa",
		"auth::cdrwa", "digest:alice:bad=:cdrwa", "ip:127.0.0.1:cdrwa", "badacl", "world:anyone:rxz",
		"world:anyone:cdrwa,auth::r", "world:anyone:", "digest:alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=:cdrwa",
		"ip:10.0.0.0/8:cdrwa", "digest:alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=:r,world:anyone:c"}
	unknownFlags = []string{"-x", "-q", "-Z"}
)

// scriptGen writes a random zkCli script, deterministic per seed.
type scriptGen struct {
	r     *rand.Rand
	lines []string
	// watched is set once a command may have left a watch: from then on,
	// writes are followed by "sync /", which prints after the events they
	// cause, and print nothing on standard output themselves, so that the
	// order of the output does not depend on zkCli's event thread.
	watched bool
	// moded is set once an addWatch had -m: zkCli 3.8 reuses that mode
	// for a later addWatch without -m (a documented difference).
	moded bool
}

// genScript returns the script for seed: 15 to 30 commands, then quit,
// close or nothing.
func genScript(seed uint64) string {
	g := &scriptGen{r: rand.New(rand.NewPCG(seed, 0x9addc0c1))}
	// Most scripts start by creating part of the namespace, so that
	// later commands find znodes more often than not.
	for _, p := range []string{"/a", "/b", "/a/b", "/b/a"} {
		if g.chance(60) {
			g.add("create " + p + " " + g.pick(datas))
		}
	}
	n := 15 + g.r.IntN(16)
	for range n {
		g.command()
	}
	switch k := g.r.IntN(10); {
	case k < 6:
		g.add("quit")
	case k < 9:
		g.add("close")
		if g.r.IntN(2) == 0 {
			g.add("ls /")
		}
	}
	return strings.Join(g.lines, "\n") + "\n"
}

func (g *scriptGen) add(line string) { g.lines = append(g.lines, line) }

func (g *scriptGen) pick(from []string) string { return from[g.r.IntN(len(from))] }

func (g *scriptGen) chance(percent int) bool { return g.r.IntN(100) < percent }

// path is a path in the namespace, sometimes one the client refuses.
func (g *scriptGen) path() string {
	if g.chance(10) {
		return g.pick(badPaths)
	}
	return g.pick(goodPaths)
}

// target is a path to create or delete, "/" (the chroot the scripts run
// under) included: the Go client sends delete("/") without the chroot and
// cuts the chroot off a sequential path created at "/" as a string
// prefix, as the Java client does.
func (g *scriptGen) target() string { return g.path() }

// valued are the options that take a value.
var valued = []string{"-v", "-t", "-b", "-m", "-n", "-N", "-B"}

// words joins a command's words that are not empty, written in one of the
// ways Commons CLI reads alike: options bundled ("-sw"), values attached
// ("-v3", "-v=3"), options after the arguments, "--" after the options;
// and now and then an unknown option or an extra argument.
func (g *scriptGen) words(ws ...string) string {
	ws = slices.DeleteFunc(slices.Clone(ws), func(w string) bool { return w == "" })
	var bools, opts, args []string
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		switch {
		case slices.Contains(valued, w) && i+1 < len(ws):
			v := ws[i+1]
			i++
			switch k := g.r.IntN(100); {
			case k < 15:
				opts = append(opts, w+v)
			case k < 25:
				opts = append(opts, w+"="+v)
			default:
				opts = append(opts, w+" "+v)
			}
		case len(w) == 2 && w[0] == '-' && w != "-1":
			bools = append(bools, w)
		default:
			args = append(args, w)
		}
	}
	if len(bools) > 1 && g.chance(20) {
		b := "-"
		for _, f := range bools {
			b += f[1:]
		}
		bools = []string{b}
	}
	opts = append(bools, opts...)
	if g.chance(4) {
		opts = append(opts, g.pick(unknownFlags))
	}
	if len(args) > 0 && ws[0] != "addWatch" && g.chance(3) {
		args = append(args, "extra")
		if slices.Contains([]string{"get", "stat", "ls"}, ws[0]) {
			// "get path watch", deprecated, sets a watch.
			g.watched = true
		}
	}
	out := []string{ws[0]}
	switch k := g.r.IntN(100); {
	case k < 70 || len(args) == 0:
		out = append(out, opts...)
		if len(opts) > 0 && g.chance(4) {
			out = append(out, "--")
		}
		out = append(out, args...)
	case k < 90:
		out = append(append(out, args...), opts...)
	default:
		out = append(append(append(out, args[0]), opts...), args[1:]...)
	}
	return strings.Join(out, " ")
}

// flag returns f with the given chance, else "".
func (g *scriptGen) flag(percent int, f string) string {
	if g.chance(percent) {
		return f
	}
	return ""
}

// write adds a command that may trigger watches.
func (g *scriptGen) write(line string) {
	g.add(line)
	if g.watched {
		g.add("sync /")
	}
}

// watch adds a command that may leave a watch.
func (g *scriptGen) watch(line string, set bool) {
	g.add(line)
	if set {
		g.watched = true
	}
}

// stdoutFlag is -s for a write, unless events may come (see watched).
func (g *scriptGen) stdoutFlag(percent int) string {
	if g.watched {
		return ""
	}
	return g.flag(percent, "-s")
}

// missing drops the path (a usage error) now and then.
func (g *scriptGen) missing(p string) string {
	if g.chance(5) {
		return ""
	}
	return p
}

func (g *scriptGen) command() {
	switch k := g.r.IntN(100); {
	case k < 18:
		var ws []string
		ws = append(ws, "create", g.flag(25, "-s"), g.flag(20, "-e"), g.flag(10, "-c"))
		if g.chance(10) {
			ws = append(ws, "-t", g.pick([]string{"600000", "600000", "0", "abc"}))
		}
		ws = append(ws, g.missing(g.target()))
		if g.chance(75) {
			ws = append(ws, g.pick(datas))
			if g.chance(25) {
				ws = append(ws, g.pick(acls))
			}
		}
		g.write(g.words(ws...))
	case k < 27:
		w := g.flag(20, "-w")
		g.watch(g.words("get", g.flag(40, "-s"), w, g.missing(g.path())), w != "")
	case k < 36:
		ws := []string{"set", g.stdoutFlag(30)}
		if g.chance(35) {
			ws = append(ws, "-v", g.pick(versions))
		}
		ws = append(ws, g.missing(g.path()))
		if g.chance(92) {
			ws = append(ws, g.pick(datas))
		}
		g.write(g.words(ws...))
	case k < 41:
		w := g.flag(25, "-w")
		g.watch(g.words("stat", w, g.missing(g.path())), w != "")
	case k < 50:
		if g.chance(5) {
			g.watch("ls "+g.path()+" watch", true)
			return
		}
		w := g.flag(15, "-w")
		g.watch(g.words("ls", g.flag(25, "-s"), w, g.flag(20, "-R"), g.missing(g.path())), w != "")
	case k < 56:
		ws := []string{"delete"}
		if g.chance(30) {
			ws = append(ws, "-v", g.pick(versions))
		}
		g.write(g.words(append(ws, g.missing(g.target()))...))
	case k < 60:
		ws := []string{"deleteall", g.missing(g.target())}
		if g.chance(20) {
			ws = append(ws, "-b", g.pick([]string{"1", "2", "1000"}))
		}
		g.write(g.words(ws...))
	case k < 65:
		ws := []string{"setAcl", g.stdoutFlag(25)}
		if g.chance(25) {
			ws = append(ws, "-v", g.pick(versions))
		}
		ws = append(ws, g.flag(20, "-R"), g.missing(g.path()))
		if g.chance(92) {
			ws = append(ws, g.pick(acls))
		}
		g.write(g.words(ws...))
	case k < 69:
		g.add(g.words("getAcl", g.flag(40, "-s"), g.missing(g.path())))
	case k < 72:
		// "addauth digest" without credentials fails the session; zkCli
		// does not wait for that, paddock cli does (a documented
		// difference), so the commands after it differ by timing.
		switch j := g.r.IntN(10); {
		case j == 0:
			g.add("addauth")
		default:
			g.add("addauth digest " + g.pick([]string{"alice:secret", "bob:pw"}))
		}
	case k < 74:
		g.add(g.words("sync", g.missing(g.path())))
	case k < 76:
		if g.chance(25) {
			g.add("getEphemerals")
		} else {
			g.add(g.words("getEphemerals", g.path()))
		}
	case k < 78:
		g.add(g.words("getAllChildrenNumber", g.missing(g.path())))
	case k < 82:
		// addWatch refuses a path the client refuses with a stack trace
		// in zkCli 3.8 (a documented difference): valid paths only.
		m := ""
		if g.moded || g.chance(60) {
			m = "-m " + g.pick([]string{"persistent", "persistent_recursive", "persistent_recursive", "bogus"})
			g.moded = true
		}
		p := g.pick(goodPaths)
		if g.chance(5) {
			p = ""
		}
		g.watch(strings.TrimSpace(g.words("addWatch", m, p)), true)
	case k < 85:
		ws := []string{"removewatches", g.missing(g.path())}
		ws = append(ws, g.pick([]string{"", "", "-c", "-d", "-a"}), g.flag(15, "-l"))
		g.write(g.words(ws...))
	case k < 89:
		g.write(g.words("setquota", g.pick([]string{"-n", "-b", "-N", "-B", "-n", ""}),
			g.pick([]string{"5", "5", "10", "0", "-1", "abc"}), g.missing(g.path())))
	case k < 91:
		g.add(g.words("listquota", g.missing(g.path())))
	case k < 93:
		g.write(g.words("delquota", g.pick([]string{"", "", "-n", "-b", "-N", "-B"}), g.missing(g.path())))
	case k < 94:
		g.add("history")
	case k < 95:
		// A redo may run a watch or a write again.
		g.watched = true
		g.write("redo " + strconv.Itoa(g.r.IntN(len(g.lines)+3)))
	case k < 96:
		g.add(strings.TrimSpace("printwatches " + g.pick([]string{"", "on", "off", "on"})))
	case k < 97:
		g.add("whoami")
	case k < 98:
		c := g.pick([]string{"", "-c", "-s", "-w"})
		g.watch(strings.TrimSpace("config "+c), c == "-w")
	case k < 99:
		g.add(g.pick([]string{"bogus", "ls2 /a", "rmr /a/b"}))
	default:
		g.add(g.words("ls", g.flag(50, "-?"), g.path()))
	}
}

// seedsToRun returns randomSeeds, or the seeds PADDOCK_CLI_SEEDS names.
func seedsToRun(t *testing.T) []uint64 {
	env := os.Getenv("PADDOCK_CLI_SEEDS")
	if env == "" {
		return randomSeeds
	}
	var seeds []uint64
	for _, part := range strings.Split(env, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(strings.TrimSpace(lo), 10, 64)
		if err != nil {
			t.Fatalf("PADDOCK_CLI_SEEDS=%q: %v", env, err)
		}
		switch {
		case isRange:
			b, err := strconv.ParseUint(strings.TrimSpace(hi), 10, 64)
			if err != nil || b < a {
				t.Fatalf("PADDOCK_CLI_SEEDS=%q: bad range %q", env, part)
			}
			for s := a; s <= b; s++ {
				seeds = append(seeds, s)
			}
		case !strings.Contains(env, ","):
			for s := uint64(1); s <= a; s++ {
				seeds = append(seeds, s)
			}
		default:
			seeds = append(seeds, a)
		}
	}
	return seeds
}

// deleteAllFailed is what deleteall prints when a multi fails.
const deleteAllFailed = "Failed to delete some node(s) in the subtree!\n"

// rootSequence is what create prints for a sequential znode created at the
// chroot: the part of its name after the chroot, the parent's counter.
var rootSequence = regexp.MustCompile(`(?m)^Created \d{10}$`)

// removedEvent is a watch-removed event line.
var removedEvent = regexp.MustCompile(`^WatchedEvent state:\w+ type:\w+WatchRemoved path:(.*)$`)

// sortRemovedEvents sorts the events of each run of watch-removed events on
// one path: zkCli 3.8 prints them in the order of a HashMap keyed by event
// type, which changes from one run of the JVM to the next.
func sortRemovedEvents(s string) string {
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		m := removedEvent.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		// The run: event lines two apart, blank lines between them.
		j := i
		for j+2 < len(lines) && lines[j+1] == "" {
			n := removedEvent.FindStringSubmatch(lines[j+2])
			if n == nil || n[1] != m[1] {
				break
			}
			j += 2
		}
		var evs []string
		for k := i; k <= j; k += 2 {
			evs = append(evs, lines[k])
		}
		slices.Sort(evs)
		for k, e := range evs {
			lines[i+2*k] = e
		}
		i = j
	}
	return strings.Join(lines, "\n")
}

// freshRoot deletes the subtree at root, as the super user (a script may
// leave znodes nobody else may delete), and creates root again, empty.
func freshRoot(t *testing.T, addr, root string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := zk.Connect(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.AddAuth(ctx, "digest", []byte("super:test")); err != nil {
		t.Fatal(err)
	}
	var del func(p string, depth int) error
	del = func(p string, depth int) error {
		if depth > 50 {
			return fmt.Errorf("%s: too deep", p)
		}
		kids, _, err := conn.Children(ctx, p)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, k := range kids {
			if err := del(p+"/"+k, depth+1); err != nil {
				return err
			}
		}
		if err := conn.Delete(ctx, p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		return nil
	}
	if err := del(root, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Create(ctx, root, nil, zk.OpenACL, zk.ModePersistent); err != nil {
		t.Fatal(err)
	}
}

// TestRandomSameAsZkCli runs seeded random scripts (genScript) through
// zkCli.sh and paddock cli against Apache ZooKeeper and Paddock, and
// compares what they print and their exit statuses. Each script runs under
// a chroot of its own, /seedN, emptied and created again before each shell
// (fresh servers cost two server starts a script; see PADDOCK_CLI_FRESH).
func TestRandomSameAsZkCli(t *testing.T) {
	needZkCli(t)
	paddock := zktest.BuildPaddock(t)
	seeds := seedsToRun(t)
	// PADDOCK_CLI_FRESH=1 runs each script against fresh servers instead,
	// without a chroot, where the servers keep the quotas' usage.
	fresh := os.Getenv("PADDOCK_CLI_FRESH") != ""
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			var p *zktest.Process
			if !fresh {
				p = srv.start(t)
			}
			for _, seed := range seeds {
				t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
					script := genScript(seed)
					var want, got result
					if fresh {
						want = run(t, script, zkCli, "-server", srv.start(t).Addr)
						got = run(t, script, paddock, "cli", "-server", srv.start(t).Addr)
					} else {
						root := fmt.Sprintf("/seed%d", seed)
						freshRoot(t, p.Addr, root)
						want = run(t, script, zkCli, "-server", p.Addr+root)
						freshRoot(t, p.Addr, root)
						got = run(t, script, paddock, "cli", "-server", p.Addr+root)
					}
					want.stdout, got.stdout = sortRemovedEvents(want.stdout), sortRemovedEvents(got.stdout)
					// zkCli 3.8.0's deleteall may miss its own failure:
					// the multi's callback releases the semaphore the
					// shell waits on before it records the failure.
					want.stderr = strings.ReplaceAll(want.stderr, deleteAllFailed, "")
					got.stderr = strings.ReplaceAll(got.stderr, deleteAllFailed, "")
					if !fresh {
						// A sequential znode created at "/" is numbered by
						// the chroot's parent, which the other seeds'
						// chroots share.
						want.stderr = rootSequence.ReplaceAllString(want.stderr, "Created <n>")
						got.stderr = rootSequence.ReplaceAllString(got.stderr, "Created <n>")
					}
					if got != want {
						compare(t, "script", want, got)
						t.Logf("the script:\n%s", script)
					}
				})
			}
		})
	}
}
