package fourlw_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/zktest"
)

// membershipLineRe matches a server line of conf's membership list:
// id, then host:quorumPort:electionPort, then the role.
var membershipLineRe = regexp.MustCompile(`^server\.(\d+)=([^:]+):(\d+):(\d+):(participant|observer)$`)

// canonEnsembleConf normalizes an ensemble member's conf: the common keys
// as for a standalone server, and the member's own quorum and election
// ports, which must be those of its server line, by placeholders.
func canonEnsembleConf(text string, serverID int) (string, error) {
	lines := strings.Split(text, "\n")
	var quorum, election string
	for i, line := range lines {
		if m := membershipLineRe.FindStringSubmatch(line); m != nil {
			if m[1] == fmt.Sprint(serverID) {
				quorum, election = m[3], m[4]
			}
			lines[i] = "server." + m[1] + "=" + m[2] + ":<quorum>:<election>:" + m[5]
		}
	}
	for i, line := range lines {
		switch {
		case strings.HasPrefix(line, "quorumPort="):
			if line != "quorumPort="+quorum {
				return text, fmt.Errorf("%q is not the port of server.%d's line (%s)", line, serverID, quorum)
			}
			lines[i] = "quorumPort=<quorum>"
		case strings.HasPrefix(line, "electionPort="):
			if line != "electionPort="+election {
				return text, fmt.Errorf("%q is not the port of server.%d's line (%s)", line, serverID, election)
			}
			lines[i] = "electionPort=<election>"
		}
	}
	return apply(strings.Join(lines, "\n"), confRules), nil
}

// TestCompareEnsembleConf compares conf on every member of a ZooKeeper and
// a Paddock ensemble of three voters and an observer: after the standalone
// keys, ZooKeeper's QuorumZooKeeperServer adds initLimit, syncLimit,
// electionAlg, the member's ports, its peer type and the membership list,
// which ends with "version=0" and no newline.
func TestCompareEnsembleConf(t *testing.T) {
	opts := zktest.EnsembleOptions{Members: 3, Observers: 1}
	zk := zktest.StartZooKeeperEnsemble(t, opts)
	pd := zktest.StartPaddockEnsemble(t, opts)
	for i := range zk.Members {
		id := i + 1
		zkOut, err := zktest.FourLetterWord(zk.Members[i].Addr, "conf")
		if err != nil {
			t.Fatal(err)
		}
		pdOut, err := zktest.FourLetterWord(pd.Members[i].Addr, "conf")
		if err != nil {
			t.Fatal(err)
		}
		zkCanon, err := canonEnsembleConf(zkOut, id)
		if err != nil {
			t.Fatalf("zookeeper server.%d conf: %v\n%s", id, err, zkOut)
		}
		pdCanon, err := canonEnsembleConf(pdOut, id)
		if err != nil {
			t.Errorf("paddock server.%d conf: %v\n%s", id, err, pdOut)
			continue
		}
		if zkCanon != pdCanon {
			t.Errorf("server.%d conf differs after normalization:\n%s\nzookeeper raw:\n%s\npaddock raw:\n%s",
				id, lineDiff(zkCanon, pdCanon), zkOut, pdOut)
		}
	}
}
