package server

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// TestConsLastResponseElapsed checks cons's lresp and the admin API's
// last_response_time against ZooKeeper 3.8's: Time.currentElapsedTime,
// System.nanoTime in milliseconds (CLOCK_MONOTONIC on Linux, the time since
// boot), not the wall clock's Unix time that est= is.
func TestConsLastResponseElapsed(t *testing.T) {
	before, ok := systemElapsedMillis()
	if !ok {
		t.Skip("no system monotonic clock read on this system")
	}
	s := startServer(t, withAdmin)
	c := dial(t, s.Addr().String())
	c.mustCreate("/n", "", 0)
	after, _ := systemElapsedMillis()
	f := consFields(t, s, c.session)
	lresp, err := strconv.ParseInt(f["lresp"], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	// elapsedMillis truncates twice: it may read 1 ms low.
	if lresp < before-1 || lresp > after {
		t.Errorf("lresp=%d, want the monotonic clock's ms, between %d and %d (est=%s)", lresp, before, after, f["est"])
	}
	conn := cmd(t, s, "cons")["connections"].([]any)[0].(map[string]any)
	if got := conn["last_response_time"]; got != float64(lresp) {
		t.Errorf("admin cons last_response_time %v, want cons's lresp %d", got, lresp)
	}
}

// serverSent reads srvr's "Sent:" count, which leaves out srvr's own answer.
func serverSent(t *testing.T, s *Server) int64 {
	t.Helper()
	out := fourLetter(t, s, "srvr")
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "Sent: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("srvr without Sent:\n%s", out)
	return 0
}

// TestFourLetterWordPacketsSent checks how many packets a four-letter
// word's answer counts as sent in the server stats, as measured on
// ZooKeeper 3.8 (NIO): one per 8192 chars begun, none for an empty
// answer. (ZooKeeper's mntr, 16314 chars, counts 2; wchp answers of 8192
// and 8217 chars count 1 and 2, 16402 and 20000 chars 3.)
func TestFourLetterWordPacketsSent(t *testing.T) {
	s := startServer(t, nil)
	c := dial(t, s.Addr().String())
	// Exist watches on long paths make wchp's answer 2 to 3 buffers long.
	for i := range 20 {
		path := fmt.Sprintf("/w%02d-%s", i, strings.Repeat("x", 1000))
		if h, _ := c.call(proto.OpExists, &proto.ExistsRequest{Path: path, Watch: true}, nil); h.Err != proto.ErrNoNode {
			t.Fatalf("exists: %v", h.Err)
		}
	}
	wchpLen := int64(len(fourLetter(t, s, "wchp")))
	if wchpLen <= 2*fourLetterChunk || wchpLen > 3*fourLetterChunk {
		t.Fatalf("wchp answers %d bytes, want 2 to 3 buffers", wchpLen)
	}
	for _, tc := range []struct {
		word string
		want int64
	}{
		{"ruok", 1},
		{"hash", 0}, // a standalone server's digest log is empty
		{"wchp", 3},
		{"srvr", 1},
	} {
		before := serverSent(t, s)
		fourLetter(t, s, tc.word)
		if got := serverSent(t, s) - before - 1; got != tc.want {
			t.Errorf("%s counted %d packets sent, want %d", tc.word, got, tc.want)
		}
	}
}

func TestFourLetterPackets(t *testing.T) {
	for _, tc := range []struct {
		name string
		out  string
		want int64
	}{
		{"empty", "", 0},
		{"imok", "imok", 1},
		{"one buffer", strings.Repeat("x", 8192), 1},
		{"a char more", strings.Repeat("x", 8193), 2},
		{"two buffers", strings.Repeat("x", 16384), 2},
		{"two and a char", strings.Repeat("x", 16385), 3},
		{"two-byte chars", strings.Repeat("é", 8192), 1},
		{"surrogate pairs", strings.Repeat("😀", 4096), 1},
		{"a pair more", strings.Repeat("😀", 4097), 2},
		{"invalid bytes", strings.Repeat("\xff", 8193), 2},
	} {
		if got := fourLetterPackets(tc.out); got != tc.want {
			t.Errorf("%s: %d packets, want %d", tc.name, got, tc.want)
		}
	}
}
