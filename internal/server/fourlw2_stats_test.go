package server

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/metrics/metricstest"
	"github.com/paddockhq/paddock/internal/proto"
)

// srvrCounts returns srvr's Received and Sent.
func srvrCounts(t *testing.T, s *Server) (received, sent int64) {
	t.Helper()
	out := fourLetter(t, s, "srvr")
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		switch k {
		case "Received":
			received = n
		case "Sent":
			sent = n
		default:
			continue
		}
		if err != nil {
			t.Fatalf("srvr %s: %v", line, err)
		}
	}
	return received, sent
}

// TestFourLW2HandshakeCounted checks the handshake's accounting against
// ZooKeeper's: the ConnectRequest is a packet received and the
// ConnectResponse a packet sent, for the connection and the server; a new
// session is the connection's last operation (SESS, cxid 0, the session's
// zxid) and one request in the server's latency; a reconnect records no
// operation (ZooKeeper's fields keep their initial values: lop=null,
// lzxid=0x0); a refused reconnect is counted too.
func TestFourLW2HandshakeCounted(t *testing.T) {
	s := startServer(t, nil)
	r0, s0 := srvrCounts(t, s)
	c := dial(t, s.Addr().String())
	f := consFields(t, s, c.session)
	want := map[string]string{"recved": "1", "sent": "1", "lop": "SESS", "lcxid": "0x0",
		"lzxid": "0x" + strconv.FormatInt(s.lastZxid(), 16)}
	for k, v := range want {
		if f[k] != v {
			t.Errorf("cons after connecting: %s=%s, want %s", k, f[k], v)
		}
	}
	if f["lresp"] == "0" {
		t.Errorf("cons after connecting: lresp=0, want the ConnectResponse's time")
	}
	if _, _, _, n := s.stats.latency.get(); n != 1 {
		t.Errorf("server latency counts %d requests after a new session, want 1 (createSession)", n)
	}
	// srvr counts itself as received; the earlier srvr and cons answers as
	// sent; plus the handshake, received and sent.
	if r, sn := srvrCounts(t, s); r != r0+3 || sn != s0+3 {
		t.Errorf("srvr Received/Sent %d/%d after connecting, want %d/%d", r, sn, r0+3, s0+3)
	}

	c.nc.Close()
	c2 := redial(t, s.Addr().String(), c.session, c.passwd)
	if c2.session != c.session {
		t.Fatalf("reconnect got session %x, want %x", c2.session, c.session)
	}
	f = consFields(t, s, c.session)
	for k, v := range map[string]string{"recved": "1", "sent": "1", "lop": "null", "lcxid": "0x0", "lzxid": "0x0", "lresp": "0"} {
		if f[k] != v {
			t.Errorf("cons after a reconnect: %s=%s, want %s", k, f[k], v)
		}
	}
	if _, _, _, n := s.stats.latency.get(); n != 1 {
		t.Errorf("server latency counts %d requests after a reconnect, want still 1", n)
	}
	c2.mustCreate("/x", "", 0)
	if f = consFields(t, s, c.session); f["lop"] != "CREA" || f["recved"] != "2" || f["sent"] != "2" {
		t.Errorf("cons after a create on the resumed session: %v", f)
	}

	r1, s1 := srvrCounts(t, s)
	bad := redial(t, s.Addr().String(), c.session, make([]byte, 16)) // wrong password: refused
	if bad.session != 0 {
		t.Fatalf("a wrong password resumed session %x", bad.session)
	}
	if r, sn := srvrCounts(t, s); r != r1+2 || sn != s1+2 {
		t.Errorf("srvr Received/Sent %d/%d after a refused reconnect, want %d/%d", r, sn, r1+2, s1+2)
	}
}

// TestFourLW2AuthNotInServerLatency checks that auth and SASL packets,
// which ZooKeeper answers outside its request pipeline, count as packets
// but not in the server's latency.
func TestFourLW2AuthNotInServerLatency(t *testing.T) {
	s := startServer(t, nil)
	c := dial(t, s.Addr().String())
	_, _, _, before := s.stats.latency.get()
	c.write(proto.AppendRequestFrame(nil, proto.XidAuth, proto.OpAuth,
		&proto.AuthPacket{Scheme: "digest", Auth: []byte("u:p")}))
	if f := c.next(); f.hdr.Xid != proto.XidAuth || f.hdr.Err != proto.ErrOK {
		t.Fatalf("auth reply %+v", f.hdr)
	}
	// Without SASL the server reads no body: any record will do.
	xid := c.send(proto.OpSASL, &proto.ExistsRequest{Path: "token"})
	if f := c.next(); f.hdr.Xid != xid {
		t.Fatalf("sasl reply %+v", f.hdr)
	}
	// A read after them: its reply comes after they were recorded.
	if h, _ := c.call(proto.OpExists, &proto.ExistsRequest{Path: "/"}, nil); h.Err != proto.ErrOK {
		t.Fatalf("exists: %v", h.Err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, _, _, n := s.stats.latency.get()
		if n == before+1 {
			break
		}
		if n > before+1 || time.Now().After(deadline) {
			t.Fatalf("server latency counts %d requests, want %d (the exists, not the auth or sasl packet)", n, before+1)
		}
		time.Sleep(time.Millisecond)
	}
	if f := consFields(t, s, c.session); f["recved"] != "4" || f["sent"] != "4" {
		t.Errorf("cons: recved=%s sent=%s, want 4 and 4 (handshake, auth, sasl, exists)", f["recved"], f["sent"])
	}
}

// mntrKeyOrder returns mntr's keys in order and its values.
func mntrKeyOrder(t *testing.T, s *Server) ([]string, map[string]string) {
	t.Helper()
	out := fourLetter(t, s, "mntr")
	var keys []string
	vals := make(map[string]string)
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		k, v, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("mntr line %q", line)
		}
		keys = append(keys, k)
		vals[k] = v
	}
	return keys, vals
}

// TestFourLW2EnsembleStats checks what ZooKeeper 3.8's ensemble members
// print beyond a standalone server's: zk_peer_state third on every member,
// zk_observer_master_id fourth on an observer, zk_quorum_size last; on the
// leader its own gauges among the others, in ZooKeeper's order, with its
// uptime as leader and its proposal sizes, which srvr prints last.
func TestFourLW2EnsembleStats(t *testing.T) {
	ens := startEnsembleWith(t, 3, 1, nil)
	var leader, follower, observer *Server
	for _, s := range ens {
		switch s.mode() {
		case "leader":
			leader = s
		case "follower":
			follower = s
		case "observer":
			observer = s
		}
	}
	if leader == nil || follower == nil || observer == nil {
		t.Fatal("no leader, follower or observer")
	}
	order := func(role string, keys []string, want ...string) {
		t.Helper()
		i := 0
		for _, k := range keys {
			if i < len(want) && k == want[i] {
				i++
			}
		}
		if i < len(want) {
			t.Errorf("%s mntr: %s missing or out of order (want %v in that order):\n%v", role, want[i], want, keys)
		}
	}
	fk, fv := mntrKeyOrder(t, follower)
	if len(fk) < 3 || fk[2] != "zk_peer_state" || fk[len(fk)-1] != "zk_quorum_size" {
		t.Errorf("follower mntr: want zk_peer_state third and zk_quorum_size last:\n%v", fk)
	}
	if _, ok := fv["zk_observer_master_id"]; ok {
		t.Errorf("follower mntr prints zk_observer_master_id")
	}
	ok, ov := mntrKeyOrder(t, observer)
	if len(ok) < 4 || ok[2] != "zk_peer_state" || ok[3] != "zk_observer_master_id" {
		t.Errorf("observer mntr: want zk_peer_state third, zk_observer_master_id fourth:\n%v", ok)
	}
	if got, want := ov["zk_observer_master_id"], strconv.FormatInt(leader.cfg.ServerID, 10); got != want {
		t.Errorf("observer zk_observer_master_id = %s, want the leader's id %s", got, want)
	}
	lk, lv := mntrKeyOrder(t, leader)
	order("leader", lk, "zk_version", "zk_server_state", "zk_peer_state", "zk_ephemerals_count",
		"zk_avg_latency", "zk_min_proposal_size", "zk_outstanding_requests", "zk_packets_received",
		"zk_max_proposal_size", "zk_synced_followers", "zk_connection_drop_probability", "zk_watch_count",
		"zk_synced_non_voting_followers", "zk_synced_observers", "zk_min_latency", "zk_open_file_descriptor_count",
		"zk_last_proposal_size", "zk_pending_syncs", "zk_leader_uptime", "zk_local_sessions", "zk_uptime",
		"zk_outstanding_tls_handshake", "zk_learners", "zk_non_mtls_local_conn_count", "zk_quorum_size")
	if lk[2] != "zk_peer_state" || lk[len(lk)-1] != "zk_quorum_size" {
		t.Errorf("leader mntr: want zk_peer_state third and zk_quorum_size last:\n%v", lk)
	}
	if up, err := strconv.ParseInt(lv["zk_leader_uptime"], 10, 64); err != nil || up < 0 ||
		time.Duration(up)*time.Millisecond > time.Since(leader.started) {
		t.Errorf("leader zk_leader_uptime = %q", lv["zk_leader_uptime"])
	}
	if _, ok := fv["zk_leader_uptime"]; ok {
		t.Errorf("follower mntr prints zk_leader_uptime")
	}

	proposalLine := func(s *Server) string {
		t.Helper()
		out := fourLetter(t, s, "srvr")
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		return lines[len(lines)-1]
	}
	// The sizes apply records while this member leads.
	leader.observeProposal(120)
	leader.observeProposal(48)
	leader.observeProposal(60)
	if got, want := proposalLine(leader), "Proposal sizes last/min/max: 60/48/120"; got != want {
		t.Errorf("leader srvr ends with %q, want %q", got, want)
	}
	_, lv = mntrKeyOrder(t, leader)
	for k, want := range map[string]string{"zk_last_proposal_size": "60", "zk_min_proposal_size": "48", "zk_max_proposal_size": "120"} {
		if lv[k] != want {
			t.Errorf("leader mntr %s = %s, want %s", k, lv[k], want)
		}
	}
	// srst resets them with the server stats, as on ZooKeeper's leader.
	fourLetter(t, leader, "srst")
	if got, want := proposalLine(leader), "Proposal sizes last/min/max: -1/-1/-1"; got != want {
		t.Errorf("leader srvr after srst ends with %q, want %q", got, want)
	}
	follower.observeProposal(99) // not leading: not a proposal of its own
	if got := proposalLine(follower); !strings.HasPrefix(got, "Node count: ") {
		t.Errorf("follower srvr ends with %q, want the node count", got)
	}
	if l, _, _ := follower.stats.proposals.get(); l != -1 {
		t.Errorf("a follower recorded a proposal size: %d", l)
	}
}

// TestFourLW2MetricsObserver checks that an observer exports no
// synced_observers gauge (ZooKeeper registers it on the leader and the
// followers only), and a follower does.
func TestFourLW2MetricsObserver(t *testing.T) {
	ens := startEnsembleWith(t, 3, 1, withMetrics)
	for _, s := range ens {
		fams := metricstest.Scrape(t, s.MetricsAddr().String())
		switch s.mode() {
		case "observer":
			if _, ok := fams.Value("synced_observers"); ok {
				t.Errorf("observer exports synced_observers")
			}
		case "follower":
			if v, ok := fams.Value("synced_observers"); !ok || v != 0 {
				t.Errorf("follower synced_observers = %v, %v; want 0", v, ok)
			}
		case "leader":
			for _, name := range []string{"last_proposal_size", "min_proposal_size", "max_proposal_size"} {
				if _, ok := fams.Value(name); !ok {
					t.Errorf("leader does not export %s", name)
				}
			}
		}
	}
}
