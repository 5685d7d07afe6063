package difftest

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
)

var (
	ensembleSeeds = flag.String("ensemble-seeds", os.Getenv("PADDOCK_DIFF_ENSEMBLE_SEEDS"),
		"seeds TestRandomDifferentialEnsemble runs (as -random-seeds); empty runs the default set "+
			"(also read from $PADDOCK_DIFF_ENSEMBLE_SEEDS)")
	diffEnsemble = flag.Bool("diff-ensemble", false,
		"TestDiffScript runs -script against a ZooKeeper and a Paddock ensemble of three, "+
			"and seeds:<seeds> means GenerateEnsembleScript's scenarios")
)

// defaultEnsembleSeeds are the seeds TestRandomDifferentialEnsemble runs
// by default: with the two ensembles' start, under a minute on two CPUs.
var defaultEnsembleSeeds = "1-600"

// TestRandomDifferentialEnsemble runs GenerateEnsembleScript's seeded
// scenarios against a three-member Apache ZooKeeper 3.8 ensemble and a
// three-member Paddock ensemble, client cN on member (N-1) mod 3 + 1
// (reattaches move; ZooKeeper's clients use its two followers only, see
// ensembleRunOptions), and fails on any difference. -ensemble-seeds (or
// $PADDOCK_DIFF_ENSEMBLE_SEEDS) picks other seeds.
func TestRandomDifferentialEnsemble(t *testing.T) {
	seeds := seedsToRun(t, *ensembleSeeds, defaultEnsembleSeeds)
	start := time.Now()
	zk, pd := startEnsembles(t)
	t.Logf("ensembles serving after %v: ZooKeeper %s, Paddock %s", time.Since(start).Round(time.Millisecond),
		memberModes(zk), memberModes(pd))
	zkOpts, pdOpts := ensembleRunOptions(t, zk, pd)

	runSeeds(t, seeds, func(seed uint64, attempt int) string {
		return runEnsembleRandom(zkOpts, pdOpts, seed, attempt)
	})
}

// runEnsembleRandom runs seed's ensemble scenario on both ensembles and
// returns "" when the transcripts are equal, else the script and the
// diff.
func runEnsembleRandom(zkOpts, pdOpts RunOptions, seed uint64, attempt int) string {
	return compareSeed(GenerateEnsemble, GenerateEnsembleScript, zkOpts, pdOpts, attemptRoot("/e", seed, attempt), seed)
}

// runBoth runs sc under root on ZooKeeper and Paddock at once (the first
// of each one's Members creates the root) and returns both transcripts.
func runBoth(zkOpts, pdOpts RunOptions, sc Scenario, root string) (zkText, pdText string, err error) {
	zkOpts.Root, pdOpts.Root = root, root
	pdOpts.HideEventZxids = true
	var zkLines, pdLines []string
	var zkErr, pdErr error
	var wg sync.WaitGroup
	wg.Go(func() { zkLines, zkErr = Run(zkOpts.Members[0], sc, zkOpts) })
	pdLines, pdErr = Run(pdOpts.Members[0], sc, pdOpts)
	wg.Wait()
	switch {
	case zkErr != nil:
		return "", "", fmt.Errorf("ZooKeeper: %w", zkErr)
	case pdErr != nil:
		return "", "", fmt.Errorf("Paddock: %w", pdErr)
	}
	return strings.Join(zkLines, "\n"), strings.Join(pdLines, "\n"), nil
}

// ensembleRunOptions returns the RunOptions of the two ensembles.
// Paddock's clients connect to all three members. ZooKeeper's connect to
// its two followers only (member 3 is the first follower again): its
// leader answers a sync without waiting for the commits queued in its
// own pipeline, so a client there may miss, even after a sync, a write
// a follower has already acknowledged to another client (and receive
// its notification after the sync's reply). "settle" goes to every
// member of both.
func ensembleRunOptions(t *testing.T, zk, pd *zktest.Ensemble) (zkOpts, pdOpts RunOptions) {
	t.Helper()
	leader := zk.Leader(t, 0)
	for _, m := range zk.Members {
		if m != leader {
			zkOpts.Members = append(zkOpts.Members, m.Addr)
		}
	}
	zkOpts.SettleMembers = zk.Addrs()
	pdOpts.Members, pdOpts.SettleMembers = pd.Addrs(), pd.Addrs()
	return zkOpts, pdOpts
}

// startEnsembles starts the two ensembles of
// TestRandomDifferentialEnsemble, configured as startRandomServers
// configures its servers.
func startEnsembles(t *testing.T) (zk, pd *zktest.Ensemble) {
	zk = zktest.StartZooKeeperEnsemble(t, zktest.EnsembleOptions{
		ExtraConfig: serverConfig,
		JVMFlags:    randomJVMFlags(),
	})
	pd = zktest.StartPaddockEnsemble(t, zktest.EnsembleOptions{
		Binary:      *paddockBinary,
		ExtraConfig: randomPaddockConfig(),
	})
	return zk, pd
}

// memberModes renders what srvr says of each member, for the log.
func memberModes(e *zktest.Ensemble) string {
	sts, errs := e.Statuses()
	modes := make([]string, len(sts))
	for i, st := range sts {
		modes[i] = st.Mode
		if errs[i] != nil {
			modes[i] = errs[i].Error()
		}
	}
	return strings.Join(modes, ",")
}
