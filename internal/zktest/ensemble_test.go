package zktest_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/paddockhq/paddock/internal/zktest"
)

// ensembleWait bounds the waits for leaders and replication below.
const ensembleWait = 30 * time.Second

func TestParseSrvr(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    zktest.MemberStatus
		wantErr string
	}{
		{
			name: "follower",
			in:   "Zookeeper version: 3.9.3-paddock\nLatency min/avg/max: 0/0.0/0\nZxid: 0x10000002a\nMode: follower\nNode count: 7\n",
			want: zktest.MemberStatus{Mode: "follower", Zxid: 0x10000002a, NodeCount: 7},
		},
		{
			name: "leader without node count",
			in:   "Zxid: 0x0\nMode: leader\n",
			want: zktest.MemberStatus{Mode: "leader"},
		},
		{
			name:    "not serving",
			in:      "This ZooKeeper instance is not currently serving requests\n",
			wantErr: "without a Mode",
		},
		{
			name:    "bad zxid",
			in:      "Zxid: 0xzz\nMode: leader\n",
			wantErr: "Zxid",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := zktest.ParseSrvr(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseSrvr = %+v, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseSrvr = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// modes returns the members' srvr modes in id order ("down" for errors).
func modes(e *zktest.Ensemble) []string {
	sts, errs := e.Statuses()
	out := make([]string, len(sts))
	for i := range sts {
		out[i] = sts[i].Mode
		if errs[i] != nil {
			out[i] = "down"
		}
	}
	return out
}

// checkRoles asserts one leader among the voters, followers elsewhere among
// them, and observers for the observers.
func checkRoles(t *testing.T, e *zktest.Ensemble) {
	t.Helper()
	got := modes(e)
	leaders := 0
	for i, p := range e.Members {
		want := []string{zktest.ModeLeader, zktest.ModeFollower}
		if slices.Contains(e.Observers(), p) {
			want = []string{zktest.ModeObserver}
		}
		if !slices.Contains(want, got[i]) {
			t.Errorf("member %d mode %q, want one of %v (all: %v)", i+1, got[i], want, got)
		}
		if got[i] == zktest.ModeLeader {
			leaders++
		}
	}
	if leaders != 1 {
		t.Errorf("%d leaders, want 1 (modes %v)", leaders, got)
	}
}

// replicated writes a node through the first address and waits until every
// other address serves it.
func replicated(t *testing.T, e *zktest.Ensemble, path string) {
	t.Helper()
	addrs := e.Addrs()
	w := connect(t, addrs[0])
	if _, err := w.Create(path, []byte("v"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s through %s: %v", path, addrs[0], err)
	}
	for _, a := range addrs[1:] {
		r := connect(t, a)
		if _, err := r.Sync(path); err != nil {
			t.Fatalf("sync through %s: %v", a, err)
		}
		if data, _, err := r.Get(path); err != nil || string(data) != "v" {
			t.Fatalf("get %s through %s = %q, %v; want \"v\"", path, a, data, err)
		}
		r.Close()
	}
	w.Close()
}

func TestStartPaddockEnsemble(t *testing.T) {
	e := zktest.StartPaddockEnsemble(t, zktest.EnsembleOptions{Observers: 1, ExtraConfig: []string{"maxClientCnxns=9"}})
	if len(e.Members) != 4 || len(e.Voters()) != 3 || len(e.Observers()) != 1 {
		t.Fatalf("%d members, %d voters, %d observers; want 4, 3, 1", len(e.Members), len(e.Voters()), len(e.Observers()))
	}
	if want := strings.Join(e.Addrs(), ","); e.ConnectString() != want || strings.Count(want, ",") != 3 {
		t.Fatalf("ConnectString = %q, want %q", e.ConnectString(), want)
	}
	for i, p := range e.Members {
		if e.ID(p) != i+1 {
			t.Errorf("ID(member %d) = %d", i+1, e.ID(p))
		}
		myid, err := os.ReadFile(filepath.Join(p.DataDir, "myid"))
		if err != nil || strings.TrimSpace(string(myid)) != fmt.Sprint(i+1) {
			t.Errorf("member %d myid = %q, %v", i+1, myid, err)
		}
		conf, err := zktest.FourLetterWord(p.Addr, "conf")
		if err != nil || !strings.Contains(conf, fmt.Sprintf("serverId=%d", i+1)) || !strings.Contains(conf, "maxClientCnxns=9") {
			t.Errorf("member %d conf = %q, %v; want serverId=%d and maxClientCnxns=9", i+1, conf, err, i+1)
		}
	}
	checkRoles(t, e)
	replicated(t, e, "/replicated")

	// Pause: a paused member answers nothing; the others keep a leader.
	leader := e.Leader(t, ensembleWait)
	var follower *zktest.Process
	for _, p := range e.Voters() {
		if p != leader {
			follower = p
			break
		}
	}
	if err := follower.Pause(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Status(follower); err == nil {
		t.Fatalf("paused member %d answered srvr", e.ID(follower))
	}
	if got := e.Leader(t, ensembleWait); got != leader {
		t.Fatalf("leader changed from %d to %d while a follower was paused", e.ID(leader), e.ID(got))
	}
	if err := follower.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitServing(ensembleWait, follower); err != nil {
		t.Fatal(err)
	}

	// Kill the leader: another voter leads.
	pid := leader.Pid()
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("signal 0 to killed pid %d: %v, want ESRCH", pid, err)
	}
	next := e.Leader(t, ensembleWait)
	if next == leader || slices.Contains(e.Observers(), next) {
		t.Fatalf("new leader is member %d (old %d)", e.ID(next), e.ID(leader))
	}
	leader.Restart(t)
	checkRoles(t, e)

	// Kill every member; Start brings the whole ensemble back.
	if err := e.KillAll(); err != nil {
		t.Fatal(err)
	}
	e.Start(t, e.Members...)
	checkRoles(t, e)
	c := connect(t, e.Members[e.ID(next)-1].Addr)
	if _, err := c.Sync("/replicated"); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := c.Exists("/replicated"); err != nil || !ok {
		t.Fatalf("exists /replicated after restarting every member = %v, %v", ok, err)
	}
}

func TestStartZooKeeperEnsemble(t *testing.T) {
	e := zktest.StartZooKeeperEnsemble(t, zktest.EnsembleOptions{Observers: 1})
	if len(e.Members) != 4 || len(e.Observers()) != 1 {
		t.Fatalf("%d members, %d observers; want 4, 1", len(e.Members), len(e.Observers()))
	}
	checkRoles(t, e)
	envi, err := zktest.FourLetterWord(e.Members[0].Addr, "envi")
	if err != nil || !strings.Contains(envi, "zookeeper.version=3.8") {
		t.Fatalf("envi = %q, %v; want Apache ZooKeeper 3.8", envi, err)
	}
	replicated(t, e, "/replicated")
	leader := e.Leader(t, ensembleWait)
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	if next := e.Leader(t, ensembleWait); next == leader {
		t.Fatalf("member %d still leads after being killed", e.ID(leader))
	}
}

// takenPort returns a port on 127.0.0.1 that cannot be bound until t ends:
// the local port of a connection the test keeps open, as a port picked as
// free can become meanwhile (no listener answers on it).
func takenPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.LocalAddr().(*net.TCPAddr).Port
}

// TestEnsembleStartsAgainWhenAPortIsTaken makes the first ports picked for
// an ensemble include one that is taken (a connection of the test's uses it):
// the member that cannot bind it exits, and the starter lays the ensemble
// out again on other ports instead of failing the test.
func TestEnsembleStartsAgainWhenAPortIsTaken(t *testing.T) {
	taken := takenPort(t)
	calls := 0
	pick := func(n int) ([]int, error) {
		calls++
		ports, err := zktest.DistinctFreePorts(n)
		if err == nil && calls == 1 {
			ports[0] = taken // member 1's client port
		}
		return ports, err
	}
	e := zktest.StartPaddockEnsemble(t, zktest.WithPortPicker(zktest.EnsembleOptions{}, pick))
	if calls != 2 {
		t.Fatalf("ports picked %d times, want 2", calls)
	}
	for _, m := range e.Members {
		if m.Port == taken {
			t.Fatalf("member %s on the taken port", m.Addr)
		}
		if _, err := zktest.FourLetterWord(m.Addr, "ruok"); err != nil {
			t.Fatalf("member %s: %v", m.Addr, err)
		}
	}
}

// TestServerStartsAgainWhenItsPortIsTaken gives StartPaddock a taken port
// to try first: the server exits, and the starter moves it to another port
// instead of failing the test.
func TestServerStartsAgainWhenItsPortIsTaken(t *testing.T) {
	taken := takenPort(t)
	p := zktest.StartPaddock(t, zktest.WithFirstPort(zktest.PaddockOptions{}, taken))
	if p.Port == taken {
		t.Fatalf("server on the taken port %d", taken)
	}
	if out, err := zktest.FourLetterWord(p.Addr, "ruok"); err != nil || out != "imok" {
		t.Fatalf("ruok on %s: %q, %v", p.Addr, out, err)
	}
}
