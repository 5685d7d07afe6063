package fourlw_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
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

// TestCompareEnsemble compares a ZooKeeper and a Paddock ensemble of three
// voters and an observer: conf on every member, then srvr and mntr member
// by role (leader with leader, and so on), once a client of each leader is
// connected and again after the same writes through it.
func TestCompareEnsemble(t *testing.T) {
	opts := zktest.EnsembleOptions{Members: 3, Observers: 1}
	zk := zktest.StartZooKeeperEnsemble(t, opts)
	pd := zktest.StartPaddockEnsemble(t, opts)
	// Both keep the membership in /zookeeper/config, counted in mntr's
	// zk_approximate_data_size; the texts' lengths may differ (ports), so
	// each side's is taken off its own.
	var configSize [2]int
	var clients [2]*rawClient
	for i, e := range []*zktest.Ensemble{zk, pd} {
		clients[i] = dialClient(t, e.Leader(t, readyTimeout).Addr, 30000)
		configSize[i] = len(clients[i].getData("/zookeeper/config"))
	}
	diff := int64(configSize[0] - configSize[1])
	t.Run("conf", func(t *testing.T) { compareEnsembleConf(t, zk, pd) })
	t.Run("connected", func(t *testing.T) { compareEnsembleStats(t, zk, pd, diff) })
	for _, c := range clients {
		c.create("/app", "config", 0)
		c.create("/app/x", strings.Repeat("x", 100), 0)
		c.must(proto.OpSetData, &proto.SetDataRequest{Path: "/app", Data: []byte("v2"), Version: -1})
	}
	t.Run("written", func(t *testing.T) { compareEnsembleStats(t, zk, pd, diff) })
}

// compareEnsembleConf compares conf on every member: after the standalone
// keys, ZooKeeper's QuorumZooKeeperServer adds initLimit, syncLimit,
// electionAlg, the member's ports, its peer type and the membership list,
// which ends with "version=0" and no newline.
func compareEnsembleConf(t *testing.T, zk, pd *zktest.Ensemble) {
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

// proposalSizesRe matches the leader's last srvr line.
var proposalSizesRe = regexp.MustCompile(`(?m)^Proposal sizes last/min/max: (?:-1/-1/-1|\d+/\d+/\d+)$`)

// byRole returns a member of e in mode, waiting until the leader counts
// every learner as synced, so that the members agree on their roles.
func byRole(t *testing.T, e *zktest.Ensemble, mode string) *zktest.Process {
	t.Helper()
	for _, m := range e.Members {
		st, err := e.Status(m)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode == mode {
			return m
		}
	}
	t.Fatalf("no %s", mode)
	return nil
}

// compareEnsembleStats compares srvr and mntr member by role. A leader's
// srvr ends with its proposal sizes, -1/-1/-1 before its first proposal,
// then the sizes of each server's own proposals (ZooKeeper's serialized
// txns, Paddock's log entries), compared by format. mntr's keys
// come in ZooKeeper's order for each role (see compareMntrOutputs), and an
// observer's zk_observer_master_id is its ensemble's leader.
func compareEnsembleStats(t *testing.T, zk, pd *zktest.Ensemble, dataSizeDiff int64) {
	leaderIDs := make(map[*zktest.Ensemble]string)
	for _, e := range []*zktest.Ensemble{zk, pd} {
		leaderIDs[e] = fmt.Sprint(e.ID(byRole(t, e, zktest.ModeLeader)))
	}
	for _, mode := range []string{zktest.ModeLeader, zktest.ModeFollower, zktest.ModeObserver} {
		zm, pm := byRole(t, zk, mode), byRole(t, pd, mode)
		zkOut, err := zktest.FourLetterWord(zm.Addr, "srvr")
		if err != nil {
			t.Fatal(err)
		}
		pdOut, err := zktest.FourLetterWord(pm.Addr, "srvr")
		if err != nil {
			t.Fatal(err)
		}
		canon := func(text string) string {
			// Whether the leader has recorded proposals must agree; the
			// sizes themselves are of different encodings.
			return proposalSizesRe.ReplaceAllStringFunc(canonSrvr(text, nil), func(line string) string {
				if strings.HasSuffix(line, "-1/-1/-1") {
					return "Proposal sizes last/min/max: <none>"
				}
				return "Proposal sizes last/min/max: <sizes>"
			})
		}
		if z, p := canon(zkOut), canon(pdOut); z != p {
			t.Errorf("%s srvr differs after normalization:\n%s\nzookeeper raw:\n%s\npaddock raw:\n%s",
				mode, lineDiff(z, p), zkOut, pdOut)
		}

		zkOut, err = zktest.FourLetterWord(zm.Addr, "mntr")
		if err != nil {
			t.Fatal(err)
		}
		pdOut, err = zktest.FourLetterWord(pm.Addr, "mntr")
		if err != nil {
			t.Fatal(err)
		}
		t.Run(mode+" mntr", func(t *testing.T) { compareMntrOutputs(t, zkOut, pdOut, 0, dataSizeDiff) })
		if mode != zktest.ModeObserver {
			continue
		}
		for e, out := range map[*zktest.Ensemble]string{zk: zkOut, pd: pdOut} {
			if want := "\nzk_observer_master_id\t" + leaderIDs[e] + "\n"; !strings.Contains(out, want) {
				t.Errorf("observer mntr lacks %q:\n%s", want, out)
			}
		}
	}
}
