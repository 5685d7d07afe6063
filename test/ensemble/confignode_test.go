package ensemble_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
	"github.com/paddockhq/paddock/zk"
)

// The /zookeeper/config tests compare what getConfig returns on every
// member of an Apache ZooKeeper 3.8 ensemble and of a Paddock ensemble
// started alike: ZooKeeper's members hold the membership there as
// QuorumVerifier.toString() formats it (server.N lines, then version=0),
// with czxid, mzxid, ctime, pzxid 0, version -1, aversion -1 and an mtime
// that is the member's own clock when it started or last synced with a
// leader; a standalone server leaves the node empty.

// configSessionTimeout outlasts a member's restart, so that a client of
// the restarted member keeps its session.
const configSessionTimeout = 30 * time.Second

// memberConfig is what one member returned for /zookeeper/config.
type memberConfig struct {
	data []byte
	stat zk.Stat
}

// readConfig reads /zookeeper/config with getConfig through member p
// alone, and checks that getData of the path returns the same.
func readConfig(t *testing.T, p *zktest.Process) memberConfig {
	t.Helper()
	c := connect(t, p.Addr)
	defer c.Close()
	data, st, err := c.GetConfig(ctx(t))
	if err != nil {
		t.Fatalf("getConfig through %s: %v", p.Addr, err)
	}
	data2, st2, err := c.Get(ctx(t), "/zookeeper/config")
	if err != nil || !bytes.Equal(data, data2) || *st2 != *st {
		t.Fatalf("getData /zookeeper/config through %s: %q %+v %v; getConfig gave %q %+v", p.Addr, data2, st2, err, data, st)
	}
	return memberConfig{data: data, stat: *st}
}

// serverLines returns the server.N lines of p's zoo.cfg, by id.
func serverLines(t *testing.T, p *zktest.Process) map[int]string {
	t.Helper()
	b, err := os.ReadFile(p.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[int]string)
	for line := range strings.SplitSeq(string(b), "\n") {
		key, value, ok := strings.Cut(line, "=")
		if !ok || !strings.HasPrefix(key, "server.") {
			continue
		}
		id, err := strconv.Atoi(strings.TrimPrefix(key, "server."))
		if err != nil {
			t.Fatalf("%s: %q", p.ConfigPath, line)
		}
		out[id] = value
	}
	return out
}

// wantMembership returns the text ZooKeeper writes for e's server lines
// (ids below 16, so in ascending order): each line with its role spelled
// out before the client address, then "version=0".
func wantMembership(t *testing.T, e *zktest.Ensemble) string {
	t.Helper()
	lines := serverLines(t, e.Members[0])
	var b strings.Builder
	for id := 1; id <= len(e.Members); id++ {
		server, client, hasClient := strings.Cut(lines[id], ";")
		if strings.Count(server, ":") == 2 {
			server += ":participant"
		}
		fmt.Fprintf(&b, "server.%d=%s", id, server)
		if hasClient {
			b.WriteString(";" + client)
		}
		b.WriteString("\n")
	}
	b.WriteString("version=0")
	return b.String()
}

// portRe matches a port after a host.
var portRe = regexp.MustCompile(`:(\d+)`)

// canonMembership replaces e's ports in a membership text by their role
// ("<q2>" for server 2's quorum port, "<e2>", "<c2>"), so that two
// ensembles' texts compare.
func canonMembership(t *testing.T, e *zktest.Ensemble, data []byte) string {
	t.Helper()
	names := make(map[string]string)
	for id, value := range serverLines(t, e.Members[0]) {
		server, _, _ := strings.Cut(value, ";")
		parts := strings.Split(server, ":")
		names[parts[1]], names[parts[2]] = fmt.Sprintf("<q%d>", id), fmt.Sprintf("<e%d>", id)
	}
	for i, p := range e.Members {
		names[strconv.Itoa(p.Port)] = fmt.Sprintf("<c%d>", i+1)
	}
	return portRe.ReplaceAllStringFunc(string(data), func(m string) string {
		if name, ok := names[m[1:]]; ok {
			return ":" + name
		}
		return m
	})
}

// addClientPorts stops every member of e, appends ";127.0.0.1:<client
// port>" to every server.N line of every member's zoo.cfg, empties their
// data directories (but for myid) and starts them all again, as a new
// ensemble. (With its data kept, a ZooKeeper member that becomes leader
// shows the /zookeeper/config its last snapshot holds, the old
// membership: only learners write their configuration again when they
// sync. Paddock's members show their configuration as it is.)
func addClientPorts(t *testing.T, e *zktest.Ensemble) {
	t.Helper()
	for _, p := range e.Members {
		if err := p.Stop(); err != nil {
			t.Fatal(err)
		}
		entries, err := os.ReadDir(p.DataDir)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range entries {
			if d.Name() != "myid" {
				if err := os.RemoveAll(filepath.Join(p.DataDir, d.Name())); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, p := range e.Members {
		b, err := os.ReadFile(p.ConfigPath)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i, line := range lines {
			key, _, ok := strings.Cut(line, "=")
			if !ok || !strings.HasPrefix(key, "server.") {
				continue
			}
			id, err := strconv.Atoi(strings.TrimPrefix(key, "server."))
			if err != nil || id < 1 || id > len(e.Members) {
				t.Fatalf("%s: %q", p.ConfigPath, line)
			}
			lines[i] = line + ";127.0.0.1:" + strconv.Itoa(e.Members[id-1].Port)
		}
		if err := os.WriteFile(p.ConfigPath, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.Start(t, e.Members...)
}

// checkMembers reads /zookeeper/config on every member of e and checks it
// against ZooKeeper's rules: the membership text (the same bytes on every
// member), the fixed Stat fields, and an mtime not before since.
func checkMembers(t *testing.T, name string, e *zktest.Ensemble, since time.Time) []memberConfig {
	t.Helper()
	want := wantMembership(t, e)
	out := make([]memberConfig, len(e.Members))
	for i, p := range e.Members {
		got := readConfig(t, p)
		out[i] = got
		if string(got.data) != want {
			t.Errorf("%s member %d: getConfig data\n%q\nwant\n%q", name, i+1, got.data, want)
		}
		st := got.stat
		if st.Mtime < since.UnixMilli() || st.Mtime > time.Now().UnixMilli() {
			t.Errorf("%s member %d: mtime %d, not between %d and now", name, i+1, st.Mtime, since.UnixMilli())
		}
		st.Mtime = 0
		if wantSt := (zk.Stat{Version: -1, Aversion: -1, DataLength: int32(len(got.data))}); st != wantSt {
			t.Errorf("%s member %d: Stat %+v, want %+v with an mtime", name, i+1, st, wantSt)
		}
	}
	return out
}

// approximateDataSize returns p's mntr zk_approximate_data_size.
func approximateDataSize(t *testing.T, p *zktest.Process) int {
	t.Helper()
	out, err := zktest.FourLetterWord(p.Addr, "mntr")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(out, "\n") {
		if v, ok := strings.CutPrefix(line, "zk_approximate_data_size\t"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("mntr %q: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("mntr of %s has no zk_approximate_data_size:\n%s", p.Addr, out)
	return 0
}

// compareMembers compares the two ensembles member by member: the same
// membership text less the ports, the same Stat but for the mtime, and an
// approximate data size that counts the node's data alike.
func compareMembers(t *testing.T, zke, pde *zktest.Ensemble, zks, pds []memberConfig) {
	t.Helper()
	for i := range zke.Members {
		zc, pc := canonMembership(t, zke, zks[i].data), canonMembership(t, pde, pds[i].data)
		if zc != pc {
			t.Errorf("member %d: getConfig data differs (ports replaced):\nzookeeper %q\npaddock   %q", i+1, zc, pc)
		}
		zs, ps := zks[i].stat, pds[i].stat
		zs.Mtime, ps.Mtime = 0, 0
		zs.DataLength, ps.DataLength = int32(len(zc)), int32(len(pc))
		if zs != ps {
			t.Errorf("member %d: Stat differs but for mtime:\nzookeeper %+v\npaddock   %+v", i+1, zks[i].stat, pds[i].stat)
		}
		zsize := approximateDataSize(t, zke.Members[i]) - len(zks[i].data)
		psize := approximateDataSize(t, pde.Members[i]) - len(pds[i].data)
		if zsize != psize {
			t.Errorf("member %d: zk_approximate_data_size less the configuration: zookeeper %d, paddock %d", i+1, zsize, psize)
		}
	}
}

// TestConfigNodeLikeZooKeeper starts a ZooKeeper and a Paddock ensemble of
// three voters and compares getConfig on every member: after the start;
// after one follower's restart (its mtime moves to when it synced again,
// the others' stay, the data is the same); and what a data watch on
// /zookeeper/config does meanwhile, on a member that stays up and on the
// restarted one: no event (the node's mzxid is 0, below any zxid a
// reconnecting client sends), as a later event on the same connections
// proves.
func TestConfigNodeLikeZooKeeper(t *testing.T) {
	start := time.Now()
	zke := zktest.StartZooKeeperEnsemble(t, zktest.EnsembleOptions{})
	pde := zktest.StartPaddockEnsemble(t, zktest.EnsembleOptions{})
	ensembles := []*zktest.Ensemble{zke, pde}
	names := []string{"zookeeper", "paddock"}
	var before [2][]memberConfig
	for k, e := range ensembles {
		before[k] = checkMembers(t, names[k], e, start)
	}
	compareMembers(t, zke, pde, before[0], before[1])

	for k, e := range ensembles {
		leader := e.Leader(t, waitFor)
		f := followers(e, leader)[0]
		var watchers []*zk.ChanWatcher
		var conns []*zk.Conn
		for _, p := range []*zktest.Process{leader, f} {
			c := connect(t, p.Addr, zk.WithSessionTimeout(configSessionTimeout))
			w := zk.NewChanWatcher(8)
			if _, _, err := c.GetConfigW(ctx(t), w); err != nil {
				t.Fatalf("%s: getConfig with a watch: %v", names[k], err)
			}
			watchers, conns = append(watchers, w), append(conns, c)
		}
		restart := time.Now()
		f.Restart(t)
		if err := e.WaitServing(waitFor, e.Members...); err != nil {
			t.Fatal(err)
		}
		after := checkMembers(t, names[k], e, start)
		for i, p := range e.Members {
			switch {
			case p == f && after[i].stat.Mtime < restart.UnixMilli():
				t.Errorf("%s: restarted member %d's mtime %d is before its restart at %d", names[k], i+1, after[i].stat.Mtime, restart.UnixMilli())
			case p != f && after[i].stat.Mtime != before[k][i].stat.Mtime:
				t.Errorf("%s: member %d's mtime moved from %d to %d when member %d restarted", names[k], i+1, before[k][i].stat.Mtime, after[i].stat.Mtime, e.ID(f))
			}
		}
		// A change of another node, watched on the same connections,
		// comes after anything the restart fired.
		barrier := fmt.Sprintf("/config-barrier-%d", k)
		mustCreate(t, conns[0], barrier, "", zk.ModePersistent)
		for _, c := range conns {
			if _, err := c.Sync(ctx(t), barrier); err != nil {
				t.Fatalf("%s: sync through %s: %v", names[k], c.Server(), err)
			}
		}
		for i, c := range conns {
			if _, _, err := c.GetW(ctx(t), barrier, watchers[i]); err != nil {
				t.Fatalf("%s: get %s with a watch: %v", names[k], barrier, err)
			}
		}
		if _, err := conns[0].Set(ctx(t), barrier, []byte("x"), -1); err != nil {
			t.Fatalf("%s: set %s: %v", names[k], barrier, err)
		}
		for i, w := range watchers {
			select {
			case ev := <-w.C:
				if ev.Type != zk.EventNodeDataChanged || ev.Path != barrier {
					t.Errorf("%s: the watcher of /zookeeper/config on %s got %+v before the barrier's event", names[k], []string{"the leader", "the restarted member"}[i], ev)
				}
			case <-time.After(waitFor):
				t.Fatalf("%s: no event for %s within %v", names[k], barrier, waitFor)
			}
		}
		before[k] = after
	}
	compareMembers(t, zke, pde, before[0], before[1])
}

// TestConfigNodeObserverClientPorts compares getConfig on every member of
// ensembles of three voters and an observer whose server.N lines give
// client addresses: ZooKeeper prints the observer's role and every
// member's client address.
func TestConfigNodeObserverClientPorts(t *testing.T) {
	opts := zktest.EnsembleOptions{Observers: 1}
	zke := zktest.StartZooKeeperEnsemble(t, opts)
	pde := zktest.StartPaddockEnsemble(t, opts)
	start := time.Now()
	addClientPorts(t, zke)
	addClientPorts(t, pde)
	zks := checkMembers(t, "zookeeper", zke, start)
	pds := checkMembers(t, "paddock", pde, start)
	for _, m := range zks {
		if !bytes.Contains(m.data, []byte(":observer;127.0.0.1:")) {
			t.Fatalf("zookeeper's membership has no observer with a client address: %q", m.data)
		}
	}
	compareMembers(t, zke, pde, zks, pds)
}

// TestConfigNodeStandalone: a standalone server's /zookeeper/config is
// empty, with ZooKeeper's fresh Stat (version 0, aversion -1, mtime 0).
func TestConfigNodeStandalone(t *testing.T) {
	zs := readConfig(t, zktest.StartZooKeeper(t, zktest.ZKOptions{}))
	ps := readConfig(t, zktest.StartPaddock(t, zktest.PaddockOptions{}))
	want := zk.Stat{Aversion: -1}
	for _, got := range []struct {
		name string
		memberConfig
	}{{"zookeeper", zs}, {"paddock", ps}} {
		if len(got.data) != 0 || got.stat != want {
			t.Errorf("%s standalone: %q %+v, want no data and %+v", got.name, got.data, got.stat, want)
		}
	}
}
