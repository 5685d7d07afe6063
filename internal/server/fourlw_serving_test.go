package server

import (
	"encoding/binary"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/proto"
)

// startLoneMember starts member 1 of a three-voter ensemble whose other
// members never start: it never learns of a leader, so it never serves.
func startLoneMember(t *testing.T, mutate func(*config.Config)) *Server {
	t.Helper()
	var servers []config.Server
	for id := int64(1); id <= 3; id++ {
		servers = append(servers, config.Server{ID: id, Role: config.Participant,
			Addrs: []config.PeerAddr{{Host: "127.0.0.1", QuorumPort: freePort(t), ElectionPort: freePort(t)}}})
	}
	s := startServerHooked(t, func(cfg *config.Config) {
		cfg.TickTime = 200 * time.Millisecond
		cfg.ServerID = 1
		cfg.Servers = servers
		if mutate != nil {
			mutate(cfg)
		}
	}, nil)
	if s.Serving() {
		t.Fatal("a lone member of three serves")
	}
	return s
}

// TestFourLetterNotServing checks the words that run on a member that does
// not serve answer as ZooKeeper's IsroCommand, ConfCommand and DirsCommand
// do then: isro prints "null", conf and dirs print ZK_NOT_SERVING with
// println's newline, hash (DigestCommand) prints it without.
func TestFourLetterNotServing(t *testing.T) {
	s := startLoneMember(t, nil)
	const notServing = "This ZooKeeper instance is not currently serving requests\n"
	for _, tt := range []struct{ word, want string }{
		{"isro", "null"},
		{"conf", notServing},
		{"dirs", notServing},
		{"srvr", notServing},
		{"ruok", "imok"},
		// DigestCommand prints ZK_NOT_SERVING without println's newline.
		{"hash", strings.TrimSuffix(notServing, "\n")},
		{"gtmk", "306"},
	} {
		if got := fourLetter(t, s, tt.word); got != tt.want {
			t.Errorf("%s on a member not serving: %q, want %q", tt.word, got, tt.want)
		}
	}
}

// TestFourLetterServingIsro checks isro on a serving server.
func TestFourLetterServingIsro(t *testing.T) {
	s := startServer(t, nil)
	if got := fourLetter(t, s, "isro"); got != "rw" {
		t.Errorf("isro: %q, want rw", got)
	}
}

// setTraceMask sends stmk followed by mask as a big-endian long, as
// ZooKeeper's NIOServerCnxn reads it, and returns the answer.
func setTraceMask(t *testing.T, s *Server, mask int64) string {
	t.Helper()
	return fourLetter(t, s, "stmk"+string(binary.BigEndian.AppendUint64(nil, uint64(mask))))
}

// TestTraceMask checks gtmk starts at ZooTrace's default (306), stmk sets
// the mask and echoes it, gtmk and the admin get_trace_mask then report it,
// and the mask belongs to the server, not the process.
func TestTraceMask(t *testing.T) {
	s := startServer(t, withAdmin)
	if got := fourLetter(t, s, "gtmk"); got != "306" {
		t.Fatalf("gtmk on a new server: %q, want 306", got)
	}
	if m := cmd(t, s, "get_trace_mask"); m["tracemask"] != float64(306) {
		t.Errorf("get_trace_mask on a new server: %v", m)
	}
	if got := setTraceMask(t, s, 0x1234); got != "4660" {
		t.Errorf("stmk 0x1234: %q, want 4660", got)
	}
	if got := fourLetter(t, s, "gtmk"); got != "4660" {
		t.Errorf("gtmk after stmk: %q, want 4660", got)
	}
	if m := cmd(t, s, "gtmk"); m["tracemask"] != float64(4660) {
		t.Errorf("get_trace_mask after stmk: %v", m)
	}
	if got := setTraceMask(t, s, -2); got != "-2" {
		t.Errorf("stmk -2: %q, want -2 (a signed long)", got)
	}
	if got := fourLetter(t, s, "gtmk"); got != "-2" {
		t.Errorf("gtmk after stmk -2: %q", got)
	}

	// Another server in the same process keeps its own mask.
	other := startServer(t, nil)
	if got := fourLetter(t, other, "gtmk"); got != "306" {
		t.Errorf("gtmk on a second server: %q, want 306", got)
	}

	// A mask cut short sets nothing and answers nothing, as ZooKeeper,
	// which fails reading it, closes the connection without an answer.
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	nc.Write([]byte("stmk\x00\x00"))
	nc.(*net.TCPConn).CloseWrite()
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	n, _ := nc.Read(buf)
	nc.Close()
	if n != 0 {
		t.Errorf("stmk with a short mask answered %q", buf[:n])
	}
	if got := fourLetter(t, s, "gtmk"); got != "-2" {
		t.Errorf("gtmk after a short stmk: %q, want -2", got)
	}
}

// consFields returns the fields of session id's line in cons, by name.
func consFields(t *testing.T, s *Server, id int64) map[string]string {
	t.Helper()
	out := fourLetter(t, s, "cons")
	for _, line := range strings.Split(out, "\n") {
		_, rest, ok := strings.Cut(line, "](")
		if !ok || !strings.Contains(line, ",sid="+hexSession(id)+",") {
			continue
		}
		f := make(map[string]string)
		for _, kv := range strings.Split(strings.TrimSuffix(rest, ")"), ",") {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
		return f
	}
	t.Fatalf("cons has no line for session %s:\n%s", hexSession(id), out)
	return nil
}

// TestConsLastOperation checks what ZooKeeper's FinalRequestProcessor
// reports as a connection's last operation and cxid: a write that fails
// (an error txn) leaves lop=NA, a read that fails and a multi that fails
// keep their names, an auth packet (answered outside the pipeline)
// changes nothing, and a request with xid 0 is the last cxid 0x0.
func TestConsLastOperation(t *testing.T) {
	s := startServer(t, nil)
	c := dial(t, s.Addr().String())
	lop := func(want, wantCxid string) {
		t.Helper()
		f := consFields(t, s, c.session)
		if f["lop"] != want || f["lcxid"] != wantCxid {
			t.Errorf("cons: lop=%s lcxid=%s, want lop=%s lcxid=%s", f["lop"], f["lcxid"], want, wantCxid)
		}
	}
	c.mustCreate("/n", "", 0) // xid 1
	lop("CREA", "0x1")
	if h, _ := c.call(proto.OpDelete, &proto.DeleteRequest{Path: "/missing", Version: -1}, nil); h.Err != proto.ErrNoNode {
		t.Fatalf("delete /missing: %v", h.Err)
	}
	lop("NA", "0x2")
	if f := consFields(t, s, c.session); f["lzxid"] != "0x"+strconv.FormatInt(s.lastZxid(), 16) {
		t.Errorf("cons after a failed write: lzxid=%s, want the last zxid 0x%x", f["lzxid"], s.lastZxid())
	}
	if h, _ := c.call(proto.OpSetData, &proto.SetDataRequest{Path: "/n", Version: 7}, nil); h.Err != proto.ErrBadVersion {
		t.Fatalf("setData with a bad version: %v", h.Err)
	}
	lop("NA", "0x3")
	if h, _ := c.call(proto.OpGetData, &proto.GetDataRequest{Path: "/missing"}, nil); h.Err != proto.ErrNoNode {
		t.Fatalf("getData /missing: %v", h.Err)
	}
	lop("GETD", "0x4")
	multi := &proto.MultiRequest{Ops: []proto.MultiOp{{Op: proto.OpDelete, Path: "/missing", Version: -1}}}
	if h, _ := c.call(proto.OpMulti, multi, nil); h.Err != proto.ErrOK && h.Err != proto.ErrNoNode {
		t.Fatalf("failing multi: %v", h.Err)
	}
	lop("MULT", "0x5")

	// An auth packet: answered, counted as a packet, but no operation.
	c.write(proto.AppendRequestFrame(nil, proto.XidAuth, proto.OpAuth,
		&proto.AuthPacket{Scheme: "digest", Auth: []byte("u:p")}))
	if f := c.next(); f.hdr.Xid != proto.XidAuth || f.hdr.Err != proto.ErrOK {
		t.Fatalf("auth reply %+v", f.hdr)
	}
	lop("MULT", "0x5")

	// A request with xid 0 is a real one (ZooKeeper skips only
	// negative, special xids).
	c.write(proto.AppendRequestFrame(nil, 0, proto.OpExists, &proto.ExistsRequest{Path: "/n"}))
	if f := c.next(); f.hdr.Xid != 0 || f.hdr.Err != proto.ErrOK {
		t.Fatalf("exists with xid 0: reply %+v", f.hdr)
	}
	lop("EXIS", "0x0")
}

// TestConsResetClearsLastResponse checks crst as ZooKeeper's
// ServerCnxn.resetStats: the last response time goes back to 0 along with
// the counters, and the connection's expiry in dump is left alone.
func TestConsResetClearsLastResponse(t *testing.T) {
	s := startServer(t, nil)
	c := dial(t, s.Addr().String())
	c.mustCreate("/n", "", 0)
	if f := consFields(t, s, c.session); f["lresp"] == "0" {
		t.Fatalf("lresp=0 after a reply: %v", f)
	}
	dumpBefore := connectionsDump(t, s)
	if got := fourLetter(t, s, "crst"); got != "Connection stats reset.\n" {
		t.Fatalf("crst: %q", got)
	}
	f := consFields(t, s, c.session)
	for k, want := range map[string]string{"recved": "0", "sent": "0", "lop": "NA",
		"lzxid": "0xffffffffffffffff", "lresp": "0", "llat": "0", "minlat": "0", "avglat": "0", "maxlat": "0"} {
		if f[k] != want {
			t.Errorf("after crst, cons %s=%s, want %s", k, f[k], want)
		}
	}
	if after := connectionsDump(t, s); !strings.Contains(after, dumpBefore) {
		t.Errorf("crst moved the session's connection in dump:\nbefore:\n%s\nafter:\n%s", dumpBefore, after)
	}
}

// connectionsDump returns dump's expiry bucket of the connections with a
// session: the "N expire at" line and its entries with a session id.
func connectionsDump(t *testing.T, s *Server) string {
	t.Helper()
	out := fourLetter(t, s, "dump")
	_, conns, ok := strings.Cut(out, "Connections dump:\n")
	if !ok {
		t.Fatalf("dump has no connections: %q", out)
	}
	var b strings.Builder
	header := ""
	for _, line := range strings.Split(conns, "\n") {
		if strings.Contains(line, " expire at ") {
			header = line
			continue
		}
		if strings.HasPrefix(line, "\tip: ") && !strings.HasSuffix(line, " sessionId: 0x0") {
			b.WriteString(header + "\n" + line + "\n")
		}
	}
	return b.String()
}
