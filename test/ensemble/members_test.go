package ensemble_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
	"github.com/paddockhq/paddock/zk"
)

// createMany creates n znodes parent/k-<i> with data "v<i>", pipelined.
func createMany(t *testing.T, c *zk.Conn, parent string, n int) {
	t.Helper()
	const inflight = 64
	sem := make(chan struct{}, inflight)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	cctx := ctx(t)
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		c.CreateAsync(cctx, fmt.Sprintf("%s/k-%d", parent, i), []byte("v"+strconv.Itoa(i)), zk.OpenACL, zk.ModePersistent,
			func(_ string, err error) {
				defer wg.Done()
				<-sem
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			})
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("creating %d znodes under %s through %s: %v", n, parent, c.Server(), firstErr)
	}
}

// checkServes reads parent's children and a sample of their data through
// member p alone, after a sync.
func checkServes(t *testing.T, e *zktest.Ensemble, p *zktest.Process, parent string, n int, latest string) {
	t.Helper()
	c := connect(t, p.Addr)
	defer c.Close()
	if _, err := c.Sync(ctx(t), parent); err != nil {
		t.Fatalf("sync through member %d: %v", e.ID(p), err)
	}
	data, _, err := c.Get(ctx(t), parent)
	if err != nil || string(data) != latest {
		t.Fatalf("get %s through member %d = %q, %v; want the latest write %q", parent, e.ID(p), data, err, latest)
	}
	kids, _, err := c.Children(ctx(t), parent)
	if err != nil || len(kids) != n {
		t.Fatalf("member %d serves %d children of %s (err %v), want %d", e.ID(p), len(kids), parent, err, n)
	}
	for i := 0; i < n; i += max(n/50, 1) {
		path := fmt.Sprintf("%s/k-%d", parent, i)
		data, _, err := c.Get(ctx(t), path)
		if err != nil || string(data) != "v"+strconv.Itoa(i) {
			t.Fatalf("get %s through member %d = %q, %v; want %q", path, e.ID(p), data, err, "v"+strconv.Itoa(i))
		}
	}
}

// TestFollowerKillRestart kills a follower, writes through the others,
// and restarts it: reads through it alone (after a sync) see the latest
// writes, and it reaches the leader's zxid.
func TestFollowerKillRestart(t *testing.T) {
	e := startEnsemble(t, 0, 0)
	leader := e.Leader(t, waitFor)
	f := followers(e, leader)[0]
	c := connect(t, connectString(others(e, f)...))
	mustCreate(t, c, "/catchup", "before", zk.ModePersistent)
	createMany(t, c, "/catchup", 50)
	if err := f.Kill(); err != nil {
		t.Fatal(err)
	}
	for i := 50; i < 300; i++ {
		mustCreate(t, c, fmt.Sprintf("/catchup/k-%d", i), "v"+strconv.Itoa(i), zk.ModePersistent)
	}
	if _, err := c.Set(ctx(t), "/catchup", []byte("latest"), -1); err != nil {
		t.Fatal(err)
	}
	restart := time.Now()
	f.Restart(t)
	checkServes(t, e, f, "/catchup", 300, "latest")
	waitCaughtUp(t, e, f, leader)
	t.Logf("follower %d serving the latest writes %v after its restart", e.ID(f), time.Since(restart).Round(time.Millisecond))
	if st := status(t, e, f); st.Mode != zktest.ModeFollower {
		t.Fatalf("restarted member %d is %s, want follower", e.ID(f), st.Mode)
	}
}

// TestObserver runs three voters and an observer: the observer says so in
// srvr, serves reads, forwards writes, and does not count for the quorum:
// killing it changes nothing, and with two voters down it stops serving
// along with the last voter until a quorum of voters is back.
func TestObserver(t *testing.T) {
	e := startEnsemble(t, 1, 0)
	obs := e.Observers()[0]
	if st := status(t, e, obs); st.Mode != zktest.ModeObserver {
		t.Fatalf("observer's srvr Mode = %q, want observer", st.Mode)
	}
	leader := e.Leader(t, waitFor)

	// Writes through the observer reach the voters; writes through the
	// leader reach the observer.
	o := connect(t, obs.Addr)
	mustCreate(t, o, "/observed", "from-observer", zk.ModePersistent)
	lc := connect(t, leader.Addr)
	if _, err := lc.Sync(ctx(t), "/observed"); err != nil {
		t.Fatal(err)
	}
	if data, _, err := lc.Get(ctx(t), "/observed"); err != nil || string(data) != "from-observer" {
		t.Fatalf("get through the leader = %q, %v; want the observer's write", data, err)
	}
	if _, err := lc.Set(ctx(t), "/observed", []byte("from-leader"), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Sync(ctx(t), "/observed"); err != nil {
		t.Fatal(err)
	}
	if data, _, err := o.Get(ctx(t), "/observed"); err != nil || string(data) != "from-leader" {
		t.Fatalf("get through the observer = %q, %v; want the leader's write", data, err)
	}
	eventually(t, waitFor, "the leader counts a synced observer", func() error {
		out, err := zktest.FourLetterWord(leader.Addr, "mntr")
		if err != nil {
			return err
		}
		if !strings.Contains(out, "zk_synced_observers\t1\n") || !strings.Contains(out, "zk_quorum_size\t3\n") {
			return fmt.Errorf("mntr:\n%s", out)
		}
		return nil
	})
	o.Close()

	// Killing the observer leaves the quorum alone.
	if err := obs.Kill(); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		mustCreate(t, lc, fmt.Sprintf("/observed/w-%d", i), "", zk.ModePersistent)
	}
	if got := e.Leader(t, waitFor); got != leader {
		t.Fatalf("leader changed from %d to %d when the observer died", e.ID(leader), e.ID(got))
	}
	obs.Restart(t)
	checkServesChildren(t, e, obs, "/observed", 20)

	// Two voters down: the observer is no quorum; it and the last voter
	// stop serving. One voter back: all serve again.
	fs := followers(e, leader)
	down := []*zktest.Process{leader, fs[0]}
	for _, p := range down {
		if err := p.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []*zktest.Process{fs[1], obs} {
		eventually(t, waitFor, fmt.Sprintf("member %d stops serving without a quorum", e.ID(p)), func() error {
			if st, err := e.Status(p); err == nil {
				return fmt.Errorf("still serving as %s", st.Mode)
			}
			return nil
		})
	}
	e.Start(t, down[1])
	if err := e.WaitServing(waitFor, fs[1], obs); err != nil {
		t.Fatal(err)
	}
	checkServesChildren(t, e, obs, "/observed", 20)
}

// checkServesChildren checks that p alone serves n children of parent
// after a sync.
func checkServesChildren(t *testing.T, e *zktest.Ensemble, p *zktest.Process, parent string, n int) {
	t.Helper()
	c := connect(t, p.Addr)
	defer c.Close()
	if _, err := c.Sync(ctx(t), parent); err != nil {
		t.Fatalf("sync through member %d: %v", e.ID(p), err)
	}
	if kids, _, err := c.Children(ctx(t), parent); err != nil || len(kids) != n {
		t.Fatalf("member %d serves %d children of %s (err %v), want %d", e.ID(p), len(kids), parent, err, n)
	}
}

// installedRE matches the log line of a member that installed a snapshot
// sent by the leader.
var installedRE = regexp.MustCompile(`msg="installed snapshot from the leader" .*index=(\d+) term=(\d+)`)

// TestSnapshotCatchUp stops a member, writes far more than snapCount
// entries (so the leader has compacted its log past the member's), and
// restarts it: the member receives and installs a snapshot from the leader,
// keeps it in its data directory, reaches the leader's zxid and serves all
// the data.
func TestSnapshotCatchUp(t *testing.T) {
	const n = 2000
	e := startEnsemble(t, 0, 0, "snapCount=100")
	leader := e.Leader(t, waitFor)
	f := followers(e, leader)[0]
	if err := f.Stop(); err != nil {
		t.Fatal(err)
	}
	c := connect(t, connectString(others(e, f)...))
	mustCreate(t, c, "/bulk", "", zk.ModePersistent)
	createMany(t, c, "/bulk", n)
	if _, err := c.Set(ctx(t), "/bulk", []byte("latest"), -1); err != nil {
		t.Fatal(err)
	}

	from := logSize(t, f)
	restart := time.Now()
	f.Restart(t)
	waitCaughtUp(t, e, f, leader)
	t.Logf("member %d caught up %d writes in %v", e.ID(f), n, time.Since(restart).Round(time.Millisecond))
	m := installedRE.FindStringSubmatch(logSince(t, f, from))
	if m == nil {
		t.Fatalf("member %d did not install a snapshot from the leader; log ends:\n%s", e.ID(f), f.LogTail())
	}
	index, _ := strconv.ParseUint(m[1], 10, 64)
	term, _ := strconv.ParseUint(m[2], 10, 64)
	snap := filepath.Join(f.DataDir, "snap", fmt.Sprintf("%016x-%016x.snap", index, term))
	if _, err := os.Stat(snap); err != nil {
		t.Errorf("the received snapshot is not in the data directory: %v", err)
	}
	checkServes(t, e, f, "/bulk", n, "latest")
	// The member keeps working as a follower after the snapshot.
	mustCreate(t, c, "/bulk/after", "", zk.ModePersistent)
	cf := connect(t, f.Addr)
	if _, err := cf.Sync(ctx(t), "/bulk/after"); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := cf.Exists(ctx(t), "/bulk/after"); err != nil || !ok {
		t.Fatalf("exists /bulk/after through member %d = %v, %v", e.ID(f), ok, err)
	}
}
