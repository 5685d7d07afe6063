package difftest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/zktest"
)

// The corpus of TestEnforceQuotaDifferential and ZooKeeper's golden
// transcripts of it.
const (
	quotaCorpusDir = "testdata/quota-enforced"
	quotaGoldenDir = "testdata/quota-enforced/golden"
)

// enforceQuotaConfig turns on hard quotas in both servers. ZooKeeper
// reads a zoo.cfg key it does not know as the system property
// "zookeeper.<key>", so the line sets zookeeper.enforceQuota before
// ZooKeeperServer's static initializer reads it; Paddock reads the key
// itself.
const enforceQuotaConfig = "enforceQuota=true"

// TestEnforceQuotaDifferential runs the scenarios of
// testdata/quota-enforced/*.txt against one Apache ZooKeeper and one
// Paddock server, both with enforceQuota=true, checks ZooKeeper's
// transcripts against testdata/quota-enforced/golden/ and Paddock's
// against ZooKeeper's. The -update and -paddock flags work as for
// TestDifferential. Every scenario keeps to top-level paths of its own
// (a quota lives under /zookeeper/quota/<path>, which a script names
// with "=" paths) and removes what it creates.
func TestEnforceQuotaDifferential(t *testing.T) {
	corpus, err := LoadCorpus(quotaCorpusDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(corpus) == 0 {
		t.Fatalf("no scenarios in %s", quotaCorpusDir)
	}
	golden, err := readGoldenDir(quotaGoldenDir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := append(append([]string(nil), serverConfig...), enforceQuotaConfig)
	zk := zktest.StartZooKeeper(t, zktest.ZKOptions{ExtraConfig: cfg})
	var pd *zktest.Process
	if *withPaddock {
		pd = zktest.StartPaddock(t, zktest.PaddockOptions{ExtraConfig: cfg})
	}

	zkOut := map[string][]string{}
	for i, sc := range corpus {
		t.Run(sc.Name, func(t *testing.T) {
			root := fmt.Sprintf("/q%d", i)
			zkLines, err := Run(zk.Addr, sc, RunOptions{Root: root})
			if err != nil {
				t.Fatalf("ZooKeeper: %v", err)
			}
			zkOut[sc.Name] = zkLines
			zkText := strings.Join(zkLines, "\n")
			checkZooKeeperGolden(t, sc, zkText, golden, quotaGoldenDir)
			if pd == nil {
				return
			}
			// As in TestDifferential: Paddock sends 3.9's notification
			// zxids, which 3.8 leaves out.
			pdLines, err := Run(pd.Addr, sc, RunOptions{Root: root, HideEventZxids: true})
			if err != nil {
				t.Fatalf("Paddock: %v", err)
			}
			if pdText := strings.Join(pdLines, "\n"); pdText != zkText {
				t.Errorf("Paddock differs from ZooKeeper in %s:%d (-zookeeper +paddock):\n%s",
					sc.File, sc.Line, UnifiedDiff("zookeeper", "paddock", zkText, pdText))
			}
		})
	}
	if *update {
		if err := writeGolden(corpus, zkOut, golden, quotaGoldenDir, nil); err != nil {
			t.Fatal(err)
		}
	}
}
