package difftest

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/zktest"
)

var (
	quotaSeeds = flag.String("quota-seeds", os.Getenv("PADDOCK_DIFF_QUOTA_SEEDS"),
		"seeds TestRandomQuotaDifferential runs (as -random-seeds); empty runs the default set "+
			"(also read from $PADDOCK_DIFF_QUOTA_SEEDS)")
	diffQuota = flag.Bool("diff-quota", false,
		"TestDiffScript runs -script against servers with enforceQuota=true, "+
			"and seeds:<seeds> means GenerateQuotaScript's scenarios")
)

// defaultQuotaSeeds are the seeds TestRandomQuotaDifferential runs by
// default: a few seconds with the servers' start.
var defaultQuotaSeeds = "1-200"

// TestRandomQuotaDifferential runs GenerateQuotaScript's seeded scenarios
// (random scenarios with quotas on their own paths) against Apache
// ZooKeeper and Paddock, both with enforceQuota=true and otherwise
// configured as for TestRandomDifferential, and fails on any difference.
// -quota-seeds (or $PADDOCK_DIFF_QUOTA_SEEDS) picks other seeds;
// TestDiffScript -diff-quota reduces a difference.
func TestRandomQuotaDifferential(t *testing.T) {
	seeds := seedsToRun(t, *quotaSeeds, defaultQuotaSeeds)
	zk, pd := startQuotaServers(t)

	runSeeds(t, seeds, func(seed uint64, attempt int) string {
		return compareSeed(GenerateQuota, GenerateQuotaScript, RunOptions{Members: []string{zk.Addr}},
			RunOptions{Members: []string{pd.Addr}}, attemptRoot("/rq", seed, attempt), seed)
	})
}

// startQuotaServers starts the servers of TestRandomQuotaDifferential:
// startRandomServers' with enforceQuota=true.
func startQuotaServers(t *testing.T) (zk, pd *zktest.Process) {
	zk = zktest.StartZooKeeper(t, zktest.ZKOptions{
		ExtraConfig: append(append([]string{}, serverConfig...), enforceQuotaConfig),
		JVMFlags:    randomJVMFlags(),
	})
	pd = zktest.StartPaddock(t, zktest.PaddockOptions{
		Binary:      *paddockBinary,
		ExtraConfig: append(randomPaddockConfig(), enforceQuotaConfig),
	})
	return zk, pd
}

// TestGeneratePinned pins GenerateScript's and GenerateEnsembleScript's
// scripts of seeds 1-500, so that a change to the generator (such as the
// quota mode) does not change the scenarios TestRandomDifferential and
// TestRandomDifferentialEnsemble run. Change the hashes only with a
// deliberate change of those scenarios.
func TestGeneratePinned(t *testing.T) {
	const (
		wantRandom   = "7c8cdcb6e5593f24c85ac1f168dfff04f773480e308c6158c89e8e879146f86a"
		wantEnsemble = "0888fd42548e4860c2828958b72fe75f4fcd1fb5a26da0b18ad673e4092eb2af"
	)
	r, e := sha256.New(), sha256.New()
	for seed := uint64(1); seed <= 500; seed++ {
		r.Write([]byte(GenerateScript(seed)))
		e.Write([]byte(GenerateEnsembleScript(seed)))
	}
	if got := fmt.Sprintf("%x", r.Sum(nil)); got != wantRandom {
		t.Errorf("GenerateScript's seeds 1-500 hash to %s, want %s: the random scenarios changed", got, wantRandom)
	}
	if got := fmt.Sprintf("%x", e.Sum(nil)); got != wantEnsemble {
		t.Errorf("GenerateEnsembleScript's seeds 1-500 hash to %s, want %s: the ensemble scenarios changed", got, wantEnsemble)
	}
}

// quotaTargetOf returns the script path a quota path ("%/a/zookeeper_limits",
// "%/a", "%/") is about.
func quotaTargetOf(p string) string {
	p = strings.TrimPrefix(p, "%")
	for _, name := range []string{"/zookeeper_limits", "/zookeeper_stats"} {
		if q, ok := strings.CutSuffix(p, name); ok {
			p = q
		}
	}
	if p == "" {
		return "/"
	}
	return p
}

// TestGenerateQuotaRules checks, over many seeds, that quota scripts are
// deterministic, parse, stay in their size, put quotas on their own
// paths only (all named with "%"), and keep the two rules of
// quotagen.go: no quota write in flight with another write, and stats
// data StatsTrack cannot read only inside a block of one client's
// creates and reads that ends by setting readable data again.
func TestGenerateQuotaRules(t *testing.T) {
	bad := map[string]bool{}
	for _, d := range badStatsData {
		bad[d] = true
	}
	writes := map[string]bool{"create": true, "create2": true, "createcontainer": true, "createttl": true,
		"delete": true, "set": true, "setacl": true, "multi": true}
	var quotaSteps, badBlocks, splitPipelines int
	for seed := uint64(1); seed <= 2000; seed++ {
		script := GenerateQuotaScript(seed)
		if script != GenerateQuotaScript(seed) {
			t.Fatalf("seed %d gave two scripts", seed)
		}
		if !strings.HasPrefix(script, fmt.Sprintf("== quota-%d\n", seed)) {
			t.Fatalf("seed %d: scenario not named quota-%d", seed, seed)
		}
		sc, err := GenerateQuota(seed)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if n := len(sc.Steps); n < 20 || n > 130 {
			t.Errorf("seed %d: %d steps", seed, n)
		}
		targets := map[string]bool{}
		quotaPath := func(p string) bool {
			if strings.HasPrefix(p, "%") {
				return true
			}
			for q := range targets {
				if quotaCovers(q, p) {
					return true
				}
			}
			return false
		}
		var inFlight, inFlightQuota bool
		var prev Step
		badClient, badStats := "", ""
		for _, st := range sc.Steps {
			cmd, args := st.Cmd, st.Args
			sent := cmd == "send"
			if sent {
				cmd, args = args[0].Text, args[1:]
			}
			var paths []string
			if cmd == "multi" {
				for _, op := range args {
					paths = append(paths, op.Group[1].Text)
				}
			} else if len(args) > 0 && !args[0].IsList {
				paths = append(paths, args[0].Text)
			}
			for _, p := range paths {
				if strings.HasPrefix(p, "=") {
					t.Errorf("seed %d line %d: an absolute path: %s", seed, st.Line, st.Text)
				}
				if strings.HasPrefix(p, "%") {
					quotaSteps++
				}
			}
			// The pipelining rule.
			write, quota := writes[cmd], false
			for _, p := range paths {
				quota = quota || write && quotaPath(p)
			}
			switch {
			case !sent:
				inFlight, inFlightQuota = false, false
			case write && (inFlightQuota || quota && inFlight):
				t.Errorf("seed %d line %d: %s pipelined with another write in flight and one of them a quota write",
					seed, st.Line, st.Text)
			case write:
				inFlight, inFlightQuota = true, inFlightQuota || quota
			}
			if sent && prev.Cmd == "wait" && prev.Client == st.Client {
				splitPipelines++ // mostly pipelines the rule split
			}
			prev = st
			for _, p := range paths {
				if strings.HasPrefix(p, "%") && (strings.HasSuffix(p, "/zookeeper_limits") || strings.HasSuffix(p, "/zookeeper_stats")) {
					targets[quotaTargetOf(p)] = true
				}
			}
			// The stats rule.
			isBad := cmd == "set" && len(args) == 3 && strings.HasSuffix(args[0].Text, "/zookeeper_stats") &&
				bad[args[1].String()]
			if cmd == "multi" {
				for _, op := range args {
					if op.Group[0].Text == "set" && strings.HasSuffix(op.Group[1].Text, "/zookeeper_stats") &&
						bad[op.Group[2].String()] {
						t.Errorf("seed %d line %d: unreadable stats set in a multi: %s", seed, st.Line, st.Text)
					}
				}
			}
			switch {
			case isBad:
				if badClient != "" || sent {
					t.Errorf("seed %d line %d: unreadable stats set inside a block or pipelined: %s", seed, st.Line, st.Text)
				}
				badClient, badStats = st.Client, args[0].Text
				badBlocks++
			case badClient == "":
			case st.Client != badClient || sent:
				t.Errorf("seed %d line %d: %s inside the block of unreadable stats of %s", seed, st.Line, st.Text, badStats)
			case cmd == "set" && args[0].Text == badStats:
				badClient = "" // readable again
			case cmd == "get":
			case strings.HasPrefix(cmd, "create"):
			case cmd == "multi":
				for _, op := range args {
					if !strings.HasPrefix(op.Group[0].Text, "create") {
						t.Errorf("seed %d line %d: a multi with %s inside the block of unreadable stats", seed, st.Line, op.Group[0].Text)
					}
				}
			default:
				t.Errorf("seed %d line %d: %s inside the block of unreadable stats of %s", seed, st.Line, st.Text, badStats)
			}
		}
		if badClient != "" {
			t.Errorf("seed %d: ends with unreadable stats in %s", seed, badStats)
		}
	}
	if quotaSteps < 20000 || badBlocks < 100 {
		t.Errorf("%d steps on quota nodes, %d blocks of unreadable stats in 2000 seeds: too few", quotaSteps, badBlocks)
	}
	t.Logf("%d steps on quota nodes, %d blocks of unreadable stats, %d sends right after a wait", quotaSteps, badBlocks, splitPipelines)
}
