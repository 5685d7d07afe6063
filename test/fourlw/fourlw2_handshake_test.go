package fourlw_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/zktest"
)

// consCountRe finds a session's packet counts in cons, after canonCommon.
var consCountRe = regexp.MustCompile(`\(queued=\d+,(recved=\d+,sent=\d+),sid=0x<(s\d+)>,`)

// sessionCounts returns each labelled session's "recved=<n>,sent=<n>" in
// cons. The counts follow from the requests each client made, so both
// servers must agree on them exactly (canonCons hides them).
func sessionCounts(t *testing.T, addr string, labels sessionLabels) map[string]string {
	t.Helper()
	out, err := zktest.FourLetterWord(addr, "cons")
	if err != nil {
		t.Fatal(err)
	}
	counts := make(map[string]string)
	for _, m := range consCountRe.FindAllStringSubmatch(canonCommon(out, labels), -1) {
		counts[m[2]] = m[1]
	}
	return counts
}

// compareSessionCounts compares the sessions' packet counts in cons.
func (p *pair) compareSessionCounts(t *testing.T) {
	t.Helper()
	zk, pd := sessionCounts(t, p.zk.Addr, p.zkLabels), sessionCounts(t, p.pd.Addr, p.pdLabels)
	if len(zk) != len(p.zkLabels) {
		t.Fatalf("zookeeper cons lists %d of the %d sessions: %v", len(zk), len(p.zkLabels), zk)
	}
	for label, want := range zk {
		if pd[label] != want {
			t.Errorf("cons session %s: zookeeper %s, paddock %s", label, want, pd[label])
		}
	}
}

// srvrPackets returns srvr's Received and Sent.
func srvrPackets(t *testing.T, addr string) [2]int64 {
	t.Helper()
	out, err := zktest.FourLetterWord(addr, "srvr")
	if err != nil {
		t.Fatal(err)
	}
	var n [2]int64
	for i, key := range []string{"Received: ", "Sent: "} {
		_, rest, ok := strings.Cut(out, "\n"+key)
		line, _, _ := strings.Cut(rest, "\n")
		v, err := strconv.ParseInt(line, 10, 64)
		if !ok || err != nil {
			t.Fatalf("srvr has no %q line: %q", key, out)
		}
		n[i] = v
	}
	return n
}

// TestCompareHandshake compares what the handshake counts: a new session
// (the ConnectRequest and ConnectResponse as packets, lop=SESS), the
// session resumed on a second connection (counted, no operation: lop=null)
// and a resume refused for a wrong password (counted server-wide), in
// cons and in srvr's packet totals.
func TestCompareHandshake(t *testing.T) {
	p := startPair(t)
	servers := []struct {
		name   string
		addr   string
		labels *sessionLabels
	}{{"zookeeper", p.zk.Addr, &p.zkLabels}, {"paddock", p.pd.Addr, &p.pdLabels}}
	var delta [2][2]int64
	// step runs act on both servers and compares the growth of their
	// packet totals, then (with cons) the connections.
	step := func(name string, cons bool, act func(i int, addr string)) {
		t.Helper()
		for i, s := range servers {
			before := srvrPackets(t, s.addr)
			act(i, s.addr)
			after := srvrPackets(t, s.addr)
			delta[i] = [2]int64{after[0] - before[0], after[1] - before[1]}
		}
		if delta[0] != delta[1] {
			t.Errorf("%s: srvr Received/Sent grew by %v on zookeeper, %v on paddock", name, delta[0], delta[1])
		}
		if cons {
			p.compareText(t, "cons", consCanon)
			p.compareSessionCounts(t)
		}
	}
	clients := make([]*rawClient, 2)
	step("new session", true, func(i int, addr string) {
		clients[i] = dialClient(t, addr, 30000)
		*servers[i].labels = sessionLabels{clients[i].sessionID: "s1"}
	})
	step("resumed session", true, func(i int, addr string) {
		// The first connection stays open: the server closes it as the
		// session moves to the second.
		c := redialClient(t, addr, 30000, clients[i].sessionID, clients[i].passwd)
		if c.sessionID != clients[i].sessionID {
			t.Fatalf("%s: resume got session %x, want %x", servers[i].name, c.sessionID, clients[i].sessionID)
		}
	})
	// The refused connection closes as the servers answer, and may still
	// be listed in a cons right after: compared by srvr alone.
	step("refused resume", false, func(i int, addr string) {
		if c := redialClient(t, addr, 30000, clients[i].sessionID, make([]byte, 16)); c.sessionID != 0 {
			t.Fatalf("%s: a wrong password resumed session %x", servers[i].name, c.sessionID)
		}
	})
}
