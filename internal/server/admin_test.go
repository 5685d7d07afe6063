package server

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/fsm"
	"github.com/paddockhq/paddock/internal/proto"
)

// withAdmin turns the admin server on, on a free port.
func withAdmin(c *config.Config) {
	c.AdminEnabled = true
	c.AdminPort = 0
}

// adminGet fetches a command (or probe) from s's admin server and decodes
// its JSON object.
func adminGet(t *testing.T, s *Server, path string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get("http://" + s.AdminAddr().String() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("GET %s: %d, not a JSON object: %v\n%s", path, resp.StatusCode, err, body)
	}
	return resp.StatusCode, m
}

// cmd runs a command that must succeed.
func cmd(t *testing.T, s *Server, name string) map[string]any {
	t.Helper()
	code, m := adminGet(t, s, "/commands/"+name)
	if code != 200 || m["error"] != nil {
		t.Fatalf("%s: %d, error %v", name, code, m["error"])
	}
	return m
}

// fourLetter runs a four-letter word on s.
func fourLetter(t *testing.T, s *Server, word string) string {
	t.Helper()
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(nc, word)
	out, err := io.ReadAll(nc)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestAdminOffByDefault(t *testing.T) {
	s := startServer(t, nil)
	if a := s.AdminAddr(); a != nil {
		t.Fatalf("admin server listens on %v without admin.enableServer", a)
	}
}

// TestAdminStandalone scrapes every command on a standalone server with a
// session, nodes, an ephemeral and watches, and checks the values against
// what the server holds and what the four-letter words say.
func TestAdminStandalone(t *testing.T) {
	s := startServer(t, withAdmin)
	if h, _, err := net.SplitHostPort(s.AdminAddr().String()); err != nil || h != "127.0.0.1" {
		t.Fatalf("admin address %v, want 127.0.0.1 by default", s.AdminAddr())
	}
	c := dial(t, s.Addr().String())
	c.mustCreate("/app", "config", 0)
	c.mustCreate("/eph", "", 1)
	if h, _ := c.call(proto.OpGetData, &proto.GetDataRequest{Path: "/app", Watch: true}, nil); h.Err != proto.ErrOK {
		t.Fatal(h.Err)
	}
	sid := float64(c.session)
	sidKey := strconv.FormatInt(c.session, 10)

	srvr := cmd(t, s, "srvr")
	stats := srvr["server_stats"].(map[string]any)
	if stats["server_state"] != "standalone" || srvr["node_count"] != float64(zkNodeCount(s.nodeCount())) ||
		stats["last_processed_zxid"] != float64(s.lastZxid()) || stats["num_alive_client_connections"] != float64(1) {
		t.Errorf("srvr: %v", srvr)
	}
	if !strings.HasPrefix(srvr["version"].(string), Version+", built on ") {
		t.Errorf("srvr version %v", srvr["version"])
	}

	stat := cmd(t, s, "stat")
	if conns := stat["connections"].([]any); len(conns) != 1 || conns[0].(map[string]any)["packets_received"] == nil {
		t.Errorf("stat connections: %v", stat["connections"])
	}

	cons := cmd(t, s, "cons")["connections"].([]any)
	if len(cons) != 1 {
		t.Fatalf("cons: %v", cons)
	}
	conn := cons[0].(map[string]any)
	if conn["session_id"] != sid || conn["last_operation"] != "GETD" || conn["interest_ops"] != float64(1) ||
		conn["last_cxid"] != float64(c.xid) || conn["session_timeout"] == float64(0) {
		t.Errorf("cons connection: %v", conn)
	}
	// The four-letter word reports the same connection alike.
	if out := fourLetter(t, s, "cons"); !strings.Contains(out, ",sid="+hexSession(c.session)+",lop=GETD,") ||
		!strings.Contains(out, ",lcxid=0x"+strconv.FormatInt(int64(c.xid), 16)+",") {
		t.Errorf("4lw cons disagrees with %v:\n%s", conn, out)
	}

	dump := cmd(t, s, "dump")
	if eph := dump["session_id_to_ephemeral_paths"].(map[string]any)[sidKey]; eph == nil || eph.([]any)[0] != "/eph" {
		t.Errorf("dump ephemerals: %v", dump)
	}
	found := false
	for at, ids := range dump["expiry_time_to_session_ids"].(map[string]any) {
		ms, _ := strconv.ParseInt(at, 10, 64)
		if ids.([]any)[0] == sid && ms > time.Now().UnixMilli() {
			found = true
		}
	}
	if !found {
		t.Errorf("dump expiry has no future bucket with session %s: %v", sidKey, dump["expiry_time_to_session_ids"])
	}

	if w := cmd(t, s, "wchs"); w["num_connections"] != float64(1) || w["num_paths"] != float64(1) || w["num_total_watches"] != float64(1) {
		t.Errorf("wchs: %v", w)
	}
	if w := cmd(t, s, "wchc")["session_id_to_watched_paths"].(map[string]any); len(w) != 1 || w[sidKey].([]any)[0] != "/app" {
		t.Errorf("wchc: %v", w)
	}
	if w := cmd(t, s, "wchp")["path_to_session_ids"].(map[string]any); len(w) != 1 || w["/app"].([]any)[0] != sid {
		t.Errorf("wchp: %v", w)
	}

	conf := cmd(t, s, "conf")
	if conf["client_port"] != float64(s.Addr().(*net.TCPAddr).Port) || conf["tick_time"] != float64(2000) || conf["server_id"] != float64(0) {
		t.Errorf("conf: %v", conf)
	}
	if d := cmd(t, s, "dirs"); d["datadir_size"].(float64) <= 0 {
		t.Errorf("dirs: %v", d)
	}
	if m := cmd(t, s, "isro"); m["read_only"] != false {
		t.Errorf("isro: %v", m)
	}
	if _, m := adminGet(t, s, "/commands/leader"); m["error"] != "server is not initialized" {
		t.Errorf("standalone leader: %v", m)
	}
	if m := cmd(t, s, "voting_view"); len(m["current_config"].(map[string]any)) != 0 {
		t.Errorf("standalone voting_view: %v", m)
	}
	if m := cmd(t, s, "zabstate"); m["voting"] != false || m["zabstate"] != "" {
		t.Errorf("standalone zabstate: %v", m)
	}
	if m := cmd(t, s, "lsnp"); m["zxid"] == nil || m["timestamp"] == nil {
		t.Errorf("lsnp: %v", m)
	}
	if m := cmd(t, s, "icfg"); !strings.Contains(m["initial_configuration"].(string), "tickTime=2000\n") {
		t.Errorf("icfg: %v", m)
	}
	if m := cmd(t, s, "gtmk"); m["tracemask"] != float64(306) || fourLetter(t, s, "gtmk") != "306" {
		t.Errorf("gtmk: %v", m)
	}
	// Credentials are checked first, as in ZooKeeper: 401 without them,
	// then 503 because the command is off.
	if code, m := adminGet(t, s, "/commands/snapshot"); code != http.StatusUnauthorized || m["error"] == nil {
		t.Errorf("snapshot without credentials: %d %v", code, m)
	}
	if code, body := adminGetAuth(t, s, "/commands/snapshot", "digest u:p"); code != http.StatusServiceUnavailable ||
		!strings.Contains(string(body), "admin.snapshot.enabled") {
		t.Errorf("snapshot without admin.snapshot.enabled: %d %s", code, body)
	}

	checkMntrAgrees(t, s)
	checkEnviAgrees(t, s)

	// Resets: crst zeroes the connection's counters, srst the server's.
	cmd(t, s, "crst")
	if conn := cmd(t, s, "cons")["connections"].([]any)[0].(map[string]any); conn["packets_received"] != float64(0) || conn["last_operation"] != "NA" {
		t.Errorf("after crst: %v", conn)
	}
	cmd(t, s, "srst")
	if st := cmd(t, s, "srvr")["server_stats"].(map[string]any); st["packets_received"] != float64(0) || st["max_latency"] != float64(0) {
		t.Errorf("after srst: %v", st)
	}

	for _, p := range []string{"/ready", "/live"} {
		if code, m := adminGet(t, s, p); code != 200 || m["mode"] != "standalone" {
			t.Errorf("%s: %d %v", p, code, m)
		}
	}

	// Close stops the admin server too.
	addr := s.AdminAddr().String()
	s.Close()
	if nc, err := net.Dial("tcp", addr); err == nil {
		nc.Close()
		t.Errorf("admin server still listens after Close")
	}
}

// checkMntrAgrees compares the mntr command with the mntr four-letter
// word: every key of the word is in the JSON, with the same value for those
// that do not move by themselves.
func checkMntrAgrees(t *testing.T, s *Server) {
	t.Helper()
	words := fourLetter(t, s, "mntr")
	m := cmd(t, s, "mntr")
	sc := bufio.NewScanner(strings.NewReader(words))
	stable := map[string]bool{"version": true, "server_state": true, "ephemerals_count": true, "znode_count": true,
		"global_sessions": true, "watch_count": true, "approximate_data_size": true, "quorum_size": true,
		"outstanding_requests": true, "local_sessions": true, "peer_state": true}
	n := 0
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "\t")
		k = strings.TrimPrefix(k, "zk_")
		n++
		got, ok := m[k]
		if !ok {
			t.Errorf("mntr JSON lacks %s (four-letter word: %s)", k, v)
			continue
		}
		if stable[k] {
			if s, isStr := got.(string); (isStr && s != v) || (!isStr && strconv.FormatFloat(got.(float64), 'f', -1, 64) != v) {
				t.Errorf("mntr %s: JSON %v, four-letter word %s", k, got, v)
			}
		}
	}
	if n < 20 {
		t.Errorf("mntr four-letter word gave only %d keys:\n%s", n, words)
	}
}

// checkEnviAgrees compares envi's keys, in order, with the word's.
func checkEnviAgrees(t *testing.T, s *Server) {
	t.Helper()
	resp, err := http.Get("http://" + s.AdminAddr().String() + "/commands/envi")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.Token() // {
	var keys []string
	for dec.More() {
		k, _ := dec.Token()
		var v any
		dec.Decode(&v)
		if k != "command" && k != "error" {
			keys = append(keys, k.(string))
		}
	}
	var want []string
	for _, line := range strings.Split(strings.TrimSpace(fourLetter(t, s, "envi")), "\n")[1:] {
		k, _, _ := strings.Cut(line, "=")
		want = append(want, k)
	}
	if strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Errorf("envi keys\n JSON %v\n word %v", keys, want)
	}
}

// TestAdminSnapshot takes a snapshot over HTTP and restores it into a
// fresh state machine.
func TestAdminSnapshot(t *testing.T) {
	s := startServer(t, func(c *config.Config) { withAdmin(c); c.AdminSnapshotEnabled = true })
	c := dial(t, s.Addr().String())
	for i := range 20 {
		c.mustCreate("/n"+strconv.Itoa(i), strings.Repeat("x", i), 0)
	}
	// The root's ACL is world:anyone ALL, so any digest will do.
	req, err := http.NewRequest(http.MethodGet, "http://"+s.AdminAddr().String()+"/commands/snapshot", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "digest u:p")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("snapshot: %d %v", resp.StatusCode, err)
	}
	if got, want := resp.Header.Get("last_zxid"), "0x"+hex64(s.lastZxid()); got != want {
		t.Errorf("last_zxid header %s, want %s", got, want)
	}
	if resp.Header.Get("snapshot_size") != strconv.Itoa(len(data)) {
		t.Errorf("snapshot_size %s, body %d bytes", resp.Header.Get("snapshot_size"), len(data))
	}
	m := fsm.New(fsm.Options{})
	if err := m.Restore(data); err != nil {
		t.Fatalf("restoring the snapshot: %v", err)
	}
	if got, want := m.Tree().NodeCount(), s.nodeCount(); got != want {
		t.Errorf("restored %d znodes, server has %d", got, want)
	}
	if m.LastZxid() != s.lastZxid() {
		t.Errorf("restored zxid %x, server %x", m.LastZxid(), s.lastZxid())
	}
	code, body := adminGetAuth(t, s, "/commands/snapshot?streaming=false", "digest u:p")
	var rep map[string]any
	if err := json.Unmarshal(body, &rep); err != nil {
		t.Fatalf("snapshot report: %v\n%s", err, body)
	}
	if code != 200 || rep["last_zxid"] != "0x"+hex64(s.lastZxid()) || rep["snapshot_size"] != float64(len(data)) {
		t.Errorf("snapshot report: %d %v", code, rep)
	}
}

// TestAdminBindFailure checks a taken admin port fails Start, naming the
// keys, and leaves nothing running.
func TestAdminBindFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := config.Default()
	cfg.ClientPort = 0
	cfg.DataDir = t.TempDir()
	cfg.DataLogDir = cfg.DataDir
	cfg.AdminEnabled = true
	cfg.AdminPort = ln.Addr().(*net.TCPAddr).Port
	s, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Start()
	if err == nil {
		s.Close()
		t.Fatal("Start succeeded on a taken admin port")
	}
	if !strings.Contains(err.Error(), "admin.serverPort") || !strings.Contains(err.Error(), ln.Addr().String()) {
		t.Errorf("error %q does not name the admin address and key", err)
	}
	// The data directory is free again: a second server can use it.
	cfg2 := *cfg
	cfg2.AdminEnabled = false
	s2, err := New(&cfg2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Start(); err != nil {
		t.Fatalf("restart after the failed start: %v", err)
	}
	s2.Close()
}

// TestAdminEnsemble scrapes a three-member ensemble: one leader that all
// agree on, the voting view, Zab states, and /ready turning 503 on a member
// left without a leader.
func TestAdminEnsemble(t *testing.T) {
	ens := startEnsembleWith(t, 3, 0, withAdmin)
	var leader *Server
	var leaderID float64
	for _, s := range ens {
		m := cmd(t, s, "leader")
		if m["is_leader"] == true {
			if leader != nil {
				t.Fatalf("two members say they lead")
			}
			leader = s
		}
		if leaderID == 0 {
			leaderID = m["leader_id"].(float64)
		} else if m["leader_id"] != leaderID {
			t.Errorf("member %d: leader_id %v, others %v", s.cfg.ServerID, m["leader_id"], leaderID)
		}
		if m["leader_ip"] != "127.0.0.1" {
			t.Errorf("leader_ip %v", m["leader_ip"])
		}
		vv := cmd(t, s, "voting_view")["current_config"].(map[string]any)
		if len(vv) != 3 {
			t.Errorf("voting_view: %v", vv)
		}
		own := vv[strconv.FormatInt(s.cfg.ServerID, 10)].(map[string]any)
		if own["learner_type"] != "participant" || own["client_address"] != "127.0.0.1:"+strconv.Itoa(s.Addr().(*net.TCPAddr).Port) {
			t.Errorf("own voting_view entry: %v", own)
		}
		zab := cmd(t, s, "zabstate")
		if zab["zabstate"] != "broadcast" || zab["voting"] != true || zab["myid"] != float64(s.cfg.ServerID) ||
			zab["is_leader"] != (s == leader) || zab["quorum_address"].(map[string]any)["all_ports"] == nil {
			t.Errorf("member %d zabstate: %v", s.cfg.ServerID, zab)
		}
		if q := cmd(t, s, "mntr")["quorum_size"]; q != float64(3) {
			t.Errorf("quorum_size %v", q)
		}
		if st := cmd(t, s, "srvr")["server_stats"].(map[string]any)["server_state"]; st != s.mode() {
			t.Errorf("srvr server_state %v, mode %s", st, s.mode())
		}
	}
	if leader == nil || float64(leader.cfg.ServerID) != leaderID {
		t.Fatalf("leader %v, leader_id %v", leader, leaderID)
	}
	// The leader counts its synced followers once they replicate.
	deadline := time.Now().Add(10 * time.Second)
	for {
		m := cmd(t, leader, "mntr")
		if m["synced_followers"] == float64(2) && m["learners"] == float64(2) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("leader's mntr never showed 2 synced followers: %v", m)
		}
		time.Sleep(20 * time.Millisecond)
	}
	checkMntrAgrees(t, leader)

	// Stop the other two: the survivor loses its quorum and its leader.
	var survivor *Server
	for _, s := range ens {
		if s == leader {
			s.Close()
		} else if survivor == nil {
			survivor = s
		} else {
			s.Close()
		}
	}
	deadline = time.Now().Add(15 * time.Second)
	for {
		code, m := adminGet(t, survivor, "/ready")
		if code == http.StatusServiceUnavailable && m["ready"] == false {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/ready still %d %v on a member without a quorum", code, m)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code, m := adminGet(t, survivor, "/live"); code != 200 || m["live"] != true {
		t.Errorf("/live on a member without a leader: %d %v", code, m)
	}
	if _, m := adminGet(t, survivor, "/commands/srvr"); m["error"] != "This ZooKeeper instance is not currently serving requests" {
		t.Errorf("srvr on a member not serving: %v", m)
	}
	if m := cmd(t, survivor, "zabstate"); m["zabstate"] != "election" {
		t.Errorf("zabstate without a leader: %v", m["zabstate"])
	}
}
