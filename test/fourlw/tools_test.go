package fourlw_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/paddockhq/paddock/internal/zktest"
)

// systemPython is the interpreter that has python3-kazoo.
const systemPython = "/usr/bin/python3"

// kazooVersion prints kazoo's server_version() for the server in argv[1].
const kazooVersion = `
import sys
from kazoo.client import KazooClient
zk = KazooClient(hosts=sys.argv[1], timeout=10)
zk.start(timeout=20)
try:
    print(repr(zk.server_version()))
finally:
    zk.stop()
    zk.close()
`

// TestKazooServerVersion checks that kazoo parses Paddock's envi into the
// version tuple of zookeeper.version.
func TestKazooServerVersion(t *testing.T) {
	if _, err := os.Stat(systemPython); err != nil {
		t.Skipf("no %s: %v", systemPython, err)
	}
	pd := zktest.StartPaddock(t, zktest.PaddockOptions{})
	envi, err := zktest.FourLetterWord(pd.Addr, "envi")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^zookeeper\.version=(\d+)\.(\d+)\.(\d+)[-,]`).FindStringSubmatch(envi)
	if m == nil {
		t.Fatalf("envi has no zookeeper.version=<major>.<minor>.<patch>: %q", envi)
	}
	want := fmt.Sprintf("(%s, %s, %s)", m[1], m[2], m[3])

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, systemPython, "-c", kazooVersion, pd.Addr)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kazoo server_version against %s: %v\n%s", pd.Addr, err, out)
	}
	got := strings.TrimSpace(string(out))
	if got != want {
		t.Errorf("kazoo server_version() = %s, want %s", got, want)
	}
	if !strings.HasPrefix(got, "(3, ") {
		t.Errorf("kazoo server_version() = %s, want a 3.x version", got)
	}
}

// gozkTimeout bounds one go-zookeeper four-letter-word exchange.
const gozkTimeout = 5 * time.Second

// TestGoZookeeperFLW checks that go-zookeeper's strict parsers accept
// Paddock's srvr, ruok and cons (they reject ZooKeeper 3.5+'s srvr and any
// cons that lists a connection without a session) and read the right values.
func TestGoZookeeperFLW(t *testing.T) {
	pd := zktest.StartPaddock(t, zktest.PaddockOptions{})
	c := dialClient(t, pd.Addr, 30000)
	c.create("/gozk", "data", 0)
	c.create("/gozk/eph", "", ephemeral)
	servers := []string{pd.Addr}

	if oks := zk.FLWRuok(servers, gozkTimeout); len(oks) != 1 || !oks[0] {
		t.Errorf("FLWRuok = %v, want [true]", oks)
	}

	ss, ok := zk.FLWSrvr(servers, gozkTimeout)
	if !ok || len(ss) != 1 || ss[0].Error != nil {
		t.Fatalf("FLWSrvr failed: ok=%v stats=%+v", ok, ss)
	}
	st := ss[0]
	if st.Mode != zk.ModeStandalone {
		t.Errorf("FLWSrvr Mode = %v, want standalone", st.Mode)
	}
	// ZooKeeper's count: "/" twice, /zookeeper, its quota and config
	// nodes, and the two created.
	if st.NodeCount != 7 {
		t.Errorf("FLWSrvr NodeCount = %d, want 7", st.NodeCount)
	}
	if st.Connections != 2 || st.Outstanding != 0 {
		t.Errorf("FLWSrvr Connections, Outstanding = %d, %d; want 2 (the client and the one asking), 0",
			st.Connections, st.Outstanding)
	}
	if st.Received < 3 || st.Sent < 2 {
		t.Errorf("FLWSrvr Received, Sent = %d, %d; want at least the client's requests", st.Received, st.Sent)
	}
	if !strings.HasPrefix(st.Version, "3.") || st.BuildTime.Year() < 2000 {
		t.Errorf("FLWSrvr Version, BuildTime = %q, %v", st.Version, st.BuildTime)
	}
	if st.Counter <= 0 || st.MinLatency > st.MaxLatency || st.AvgLatency < 0 {
		t.Errorf("FLWSrvr Counter, latency = %d, %d/%v/%d", st.Counter, st.MinLatency, st.AvgLatency, st.MaxLatency)
	}

	checkCons := func(t *testing.T, wantLop string, wantCxid int64) {
		t.Helper()
		sc, ok := zk.FLWCons(servers, gozkTimeout)
		if !ok || len(sc) != 1 || sc[0].Error != nil {
			t.Fatalf("FLWCons failed: ok=%v clients=%+v", ok, sc)
		}
		var session, asking int
		for _, cl := range sc[0].Clients {
			switch cl.SessionID {
			case c.sessionID:
				session++
				if want := c.nc.LocalAddr().String(); cl.Addr != want {
					t.Errorf("FLWCons Addr = %q, want %q", cl.Addr, want)
				}
				if cl.Timeout != 30000 || cl.LastOperation != wantLop || cl.Lcxid != wantCxid {
					t.Errorf("FLWCons session: timeout %d, lop %q, lcxid %d; want 30000, %q, %d",
						cl.Timeout, cl.LastOperation, cl.Lcxid, wantLop, wantCxid)
				}
			case 0:
				asking++
				if cl.LastOperation != "NA" || cl.Received != 1 || cl.Sent != 0 {
					t.Errorf("FLWCons asking connection: lop %q, received %d, sent %d; want NA, 1, 0",
						cl.LastOperation, cl.Received, cl.Sent)
				}
			default:
				t.Errorf("FLWCons lists unknown session 0x%x", cl.SessionID)
			}
		}
		if session != 1 || asking != 1 {
			t.Errorf("FLWCons listed the session %d times and the asking connection %d times, want 1 and 1",
				session, asking)
		}
	}
	t.Run("cons", func(t *testing.T) { checkCons(t, "CREA", 2) })
	t.Run("cons after crst", func(t *testing.T) {
		if out, err := zktest.FourLetterWord(pd.Addr, "crst"); err != nil || out != "Connection stats reset.\n" {
			t.Fatalf("crst = %q, %v", out, err)
		}
		checkCons(t, "NA", 0)
	})
}
