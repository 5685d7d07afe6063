package kazoo_test

import (
	"path/filepath"
	"testing"

	"github.com/paddockhq/paddock/internal/zktest"
)

// TestKazooSuiteEnsemble runs kazoo's suite against a three-member Paddock
// ensemble. Kazoo's harness builds the ensemble itself
// (ZOOKEEPER_CLUSTER_SIZE=3: a zoo.cfg with server.1..3 lines, peerType
// and a myid per server, each started through shim/java as "paddock server
// --config"), hands its clients the connect string of all three, and stops
// and restarts members in the tests that need a cluster, such as
// test_update_host_list, which deselect.txt leaves out for a single
// server. deselect-ensemble.txt lists what still cannot run, with reasons
// (reconfig, read-only mode, SASL). It takes about a minute and a half.
func TestKazooSuiteEnsemble(t *testing.T) {
	deselect, err := filepath.Abs("deselect-ensemble.txt")
	if err != nil {
		t.Fatal(err)
	}
	runSuite(t, target{name: "paddock", env: func(t *testing.T) []string {
		return []string{
			"PADDOCK_BIN=" + zktest.BuildPaddock(t),
			"KAZOO_CLUSTER_SIZE=3",
			"KAZOO_DESELECT=" + deselect,
		}
	}})
}
