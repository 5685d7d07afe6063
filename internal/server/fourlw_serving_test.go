package server

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/config"
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
// println's newline.
func TestFourLetterNotServing(t *testing.T) {
	s := startLoneMember(t, nil)
	const notServing = "This ZooKeeper instance is not currently serving requests\n"
	for _, tt := range []struct{ word, want string }{
		{"isro", "null"},
		{"conf", notServing},
		{"dirs", notServing},
		{"srvr", notServing},
		{"ruok", "imok"},
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
