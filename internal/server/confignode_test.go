package server

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/fsm"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/tree"
)

// TestMembership checks the text of /zookeeper/config against what Apache
// ZooKeeper 3.8 members wrote there for the same server.N lines (observed
// with getConfig on loopback ensembles).
func TestMembership(t *testing.T) {
	peer := func(host string, q, e int) config.PeerAddr {
		return config.PeerAddr{Host: host, QuorumPort: q, ElectionPort: e}
	}
	cases := []struct {
		name    string
		servers []config.Server
		version int64
		want    string
	}{
		{"three voters", []config.Server{
			{ID: 1, Addrs: []config.PeerAddr{peer("127.0.0.1", 23111, 23112)}},
			{ID: 2, Addrs: []config.PeerAddr{peer("127.0.0.1", 23121, 23122)}},
			{ID: 3, Addrs: []config.PeerAddr{peer("127.0.0.1", 23131, 23132)}},
		}, 0, "server.1=127.0.0.1:23111:23112:participant\nserver.2=127.0.0.1:23121:23122:participant\n" +
			"server.3=127.0.0.1:23131:23132:participant\nversion=0"},
		{"observer and client addresses", []config.Server{
			{ID: 1, Addrs: []config.PeerAddr{peer("127.0.0.1", 23211, 23212)}, ClientHost: "127.0.0.1", ClientPort: 23210},
			{ID: 2, Addrs: []config.PeerAddr{peer("127.0.0.1", 23221, 23222)}, ClientHost: "127.0.0.1", ClientPort: 23220},
			{ID: 3, Addrs: []config.PeerAddr{peer("127.0.0.1", 23231, 23232)}, ClientHost: "127.0.0.1", ClientPort: 23230},
			{ID: 4, Addrs: []config.PeerAddr{peer("127.0.0.1", 23241, 23242)}, Role: config.Observer, ClientHost: "127.0.0.1", ClientPort: 23240},
		}, 0, "server.1=127.0.0.1:23211:23212:participant;127.0.0.1:23210\nserver.2=127.0.0.1:23221:23222:participant;127.0.0.1:23220\n" +
			"server.3=127.0.0.1:23231:23232:participant;127.0.0.1:23230\nserver.4=127.0.0.1:23241:23242:observer;127.0.0.1:23240\nversion=0"},
		{"IPv6, a port alone and a name", []config.Server{
			{ID: 1, Addrs: []config.PeerAddr{peer("::1", 23511, 23512)}, ClientHost: "::1", ClientPort: 23510},
			{ID: 2, Addrs: []config.PeerAddr{peer("127.0.0.1", 23521, 23522)}, ClientHost: "0.0.0.0", ClientPort: 23520},
			{ID: 3, Addrs: []config.PeerAddr{peer("localhost", 23531, 23532)}, ClientHost: "localhost", ClientPort: 23530},
		}, 0, "server.1=[0:0:0:0:0:0:0:1]:23511:23512:participant;[0:0:0:0:0:0:0:1]:23510\n" +
			"server.2=127.0.0.1:23521:23522:participant;0.0.0.0:23520\nserver.3=localhost:23531:23532:participant;localhost:23530\nversion=0"},
		{"ids in HashMap order", []config.Server{
			{ID: 5, Addrs: []config.PeerAddr{peer("127.0.0.1", 23451, 23452)}},
			{ID: 10, Addrs: []config.PeerAddr{peer("127.0.0.1", 23501, 23502)}},
			{ID: 20, Addrs: []config.PeerAddr{peer("127.0.0.1", 23601, 23602)}},
		}, 0, "server.20=127.0.0.1:23601:23602:participant\nserver.5=127.0.0.1:23451:23452:participant\n" +
			"server.10=127.0.0.1:23501:23502:participant\nversion=0"},
		// QuorumServer.toString sorts the addresses by host; the version
		// is hexadecimal.
		{"several addresses", []config.Server{
			{ID: 1, Addrs: []config.PeerAddr{peer("127.0.0.2", 2, 3), peer("127.0.0.1", 4, 5)}},
			{ID: 2, Addrs: []config.PeerAddr{peer("::ffff:10.0.0.1", 6, 7)}},
		}, 0x100000000, "server.1=127.0.0.1:4:5|127.0.0.2:2:3:participant\nserver.2=10.0.0.1:6:7:participant\nversion=100000000"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Servers = tc.servers
			if got := string(membership(cfg, tc.version)); got != tc.want {
				t.Fatalf("membership:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// TestJavaMapOrder checks the order of a HashMap<Long, ...> iteration,
// resizes included.
func TestJavaMapOrder(t *testing.T) {
	seq := func(from, to int64) []int64 {
		var out []int64
		for i := from; i <= to; i++ {
			out = append(out, i)
		}
		return out
	}
	cases := []struct{ ids, want []int64 }{
		{[]int64{3, 1, 2}, []int64{1, 2, 3}},
		{[]int64{5, 10, 20}, []int64{20, 5, 10}},
		{[]int64{1, 17, 2}, []int64{1, 17, 2}},
		// 13 keys grow the table to 32, where 20 is no longer in 4's bucket.
		{append(seq(1, 12), 20), append(seq(1, 12), 20)},
		{append(seq(1, 11), 20), []int64{1, 2, 3, 4, 20, 5, 6, 7, 8, 9, 10, 11}},
		// Eight keys in one bucket of a table of 16: the ninth doubles it.
		{[]int64{1, 17, 33, 49, 65, 81, 97, 113, 129}, []int64{1, 33, 65, 97, 129, 17, 49, 81, 113}},
		{[]int64{1, 17, 33, 49, 65, 81, 97, 113}, []int64{1, 17, 33, 49, 65, 81, 97, 113}},
	}
	for _, tc := range cases {
		if got := javaMapOrder(tc.ids); !slices.Equal(got, tc.want) {
			t.Errorf("javaMapOrder(%v) = %v, want %v", tc.ids, got, tc.want)
		}
	}
}

// configNode returns the data and Stat of s's /zookeeper/config, and its
// state machine's snapshot.
func configNode(s *Server) ([]byte, proto.Stat, []byte) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t := s.fsm.Tree()
	n := t.Get(tree.ConfigPath)
	return bytes.Clone(n.Data), t.Stat(n), s.fsm.AppendSnapshot(nil)
}

// TestEnsembleShowsConfig: every member of an ensemble shows the
// membership at /zookeeper/config with ZooKeeper's Stat (mtime the
// member's clock when it started or synced), the same bytes on every
// member; its snapshots leave it out; it is shown again after a restore.
func TestEnsembleShowsConfig(t *testing.T) {
	start := time.Now().UnixMilli()
	ens := startEnsemble(t, 3, 1)
	want := membership(ens[0].cfg, 0)
	fresh := fsm.New(fsm.Options{})
	for _, s := range ens {
		data, st, snap := configNode(s)
		if !bytes.Equal(data, want) {
			t.Fatalf("member %d shows %q, want %q", s.cfg.ServerID, data, want)
		}
		if st.Mtime < start || st.Mtime > time.Now().UnixMilli() {
			t.Errorf("member %d: mtime %d not between the start %d and now", s.cfg.ServerID, st.Mtime, start)
		}
		st.Mtime = 0
		if wantSt := (proto.Stat{Version: -1, Aversion: -1, DataLength: int32(len(want))}); st != wantSt {
			t.Errorf("member %d: Stat %+v, want %+v and an mtime", s.cfg.ServerID, st, wantSt)
		}
		// The snapshot restores to a state that shows nothing.
		m := fsm.New(fsm.Options{})
		if err := m.Restore(snap); err != nil {
			t.Fatal(err)
		}
		if n := m.Tree().Get(tree.ConfigPath); len(n.Data) != 0 || m.Tree().Stat(n) != fresh.Tree().Stat(fresh.Tree().Get(tree.ConfigPath)) {
			t.Errorf("member %d's snapshot holds %q %+v at /zookeeper/config", s.cfg.ServerID, n.Data, m.Tree().Stat(n))
		}
		s.mu.RLock()
		size := s.fsm.Tree().DataSize()
		s.mu.RUnlock()
		if wantSize := m.Tree().DataSize() + int64(len(want)); size != wantSize {
			t.Errorf("member %d: DataSize %d, want %d (the replicated state's and the configuration)", s.cfg.ServerID, size, wantSize)
		}
		// A state restored from a snapshot shows the configuration again.
		before := time.Now().UnixMilli()
		if err := (*machine)(s).Restore(snap); err != nil {
			t.Fatal(err)
		}
		data, st, _ = configNode(s)
		if !bytes.Equal(data, want) || st.Version != -1 || st.Mtime < before {
			t.Errorf("member %d after a restore: %q %+v", s.cfg.ServerID, data, st)
		}
	}
}

// TestStandaloneShowsNoConfig: a standalone server's /zookeeper/config is
// empty, as ZooKeeper's, even with one server.N line.
func TestStandaloneShowsNoConfig(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		c.Servers = []config.Server{{ID: 1, Addrs: []config.PeerAddr{{Host: "127.0.0.1", QuorumPort: 2888, ElectionPort: 3888}}}}
	})
	data, st, _ := configNode(s)
	if data == nil || len(data) != 0 || st != (proto.Stat{Aversion: -1}) {
		t.Fatalf("standalone /zookeeper/config: %q %+v", data, st)
	}
}

// TestConfMembershipAsConfigNode: the conf four-letter word's membership
// part is the text /zookeeper/config shows, in ZooKeeper's HashMap order
// (ids 5, 10, 20 print as 20, 5, 10) with Java's host forms; it printed
// the members sorted by id, with hosts as written.
func TestConfMembershipAsConfigNode(t *testing.T) {
	peer := func(host string, q, e int) config.PeerAddr {
		return config.PeerAddr{Host: host, QuorumPort: q, ElectionPort: e}
	}
	cfg := config.Default()
	cfg.ServerID = 5
	cfg.Servers = []config.Server{
		{ID: 5, Addrs: []config.PeerAddr{peer("::1", 23311, 23312)}},
		{ID: 10, Addrs: []config.PeerAddr{peer("127.0.0.1", 23321, 23322)}},
		{ID: 20, Addrs: []config.PeerAddr{peer("127.0.0.1", 23331, 23332)}},
	}
	s := &Server{cfg: cfg}
	var b strings.Builder
	s.writeQuorumConf(&b)
	_, got, ok := strings.Cut(b.String(), "membership: \n")
	if !ok {
		t.Fatalf("no membership line in:\n%s", b.String())
	}
	want := "server.20=127.0.0.1:23331:23332:participant\nserver.5=[0:0:0:0:0:0:0:1]:23311:23312:participant\n" +
		"server.10=127.0.0.1:23321:23322:participant\nversion=0"
	if got != want {
		t.Errorf("conf membership:\n%s\nwant:\n%s", got, want)
	}
}

// TestConfStandaloneServerID: a standalone server's conf (four-letter word
// and admin) reports serverId 0, as a standalone ZooKeeper's does, even
// with a myid file; it reported 1 (or the file's id).
func TestConfStandaloneServerID(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.ServerID = 7 })
	var b strings.Builder
	s.writeConf(&b)
	if !strings.Contains(b.String(), "\nserverId=0\n") {
		t.Errorf("conf:\n%s\nwant serverId=0", b.String())
	}
	if id := (*adminSource)(s).Configuration().ServerID; id != 0 {
		t.Errorf("admin configuration server_id %d, want 0", id)
	}
}

// TestQuorumListenOnAllIPs: with quorumListenOnAllIPs a member listens for
// its peers on every interface at its peer port, and still dials the
// others at their server.N hosts; without it, it listens on its own line's
// host. (Only the raft configuration is checked: tests listen on loopback
// only.) The key was ignored.
func TestQuorumListenOnAllIPs(t *testing.T) {
	cfg := config.Default()
	cfg.ServerID = 2
	for id := int64(1); id <= 3; id++ {
		cfg.Servers = append(cfg.Servers, config.Server{ID: id,
			Addrs: []config.PeerAddr{{Host: "zk" + strconv.FormatInt(id, 10), QuorumPort: 2880 + int(id), ElectionPort: 3880 + int(id)}}})
	}
	s := &Server{cfg: cfg}
	if rc := s.raftConfig("d", "l"); rc.Listen != "zk2:2882" {
		t.Errorf("listen %q without quorumListenOnAllIPs, want zk2:2882", rc.Listen)
	}
	cfg.QuorumListenOnAllIPs = true
	rc := s.raftConfig("d", "l")
	if rc.Listen != ":2882" {
		t.Errorf("listen %q with quorumListenOnAllIPs, want :2882", rc.Listen)
	}
	if rc.Peers[1] != "zk1:2881" || rc.Peers[3] != "zk3:2883" {
		t.Errorf("peers %v, want zk1:2881 and zk3:2883", rc.Peers)
	}
}
