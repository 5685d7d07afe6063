package admin

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestGateAnswersNameAsAsked checks the name in "command" of the answers
// ZooKeeper's Commands.runCommand gives before the command runs: the
// serving gate (ZooKeeper 3.8 and 3.9) and the credentials check (3.9)
// answer under the name as asked, alias or primary, not the primary one.
// A command that runs answers under its primary name.
func TestGateAnswersNameAsAsked(t *testing.T) {
	src := newFake()
	src.serving.Store(false)
	ts := newTestServer(t, src, Options{SnapshotEnabled: true})
	for _, name := range []string{"srvr", "server_stats", "conf", "config", "cons", "wchp", "lsnp", "snap", "snapshot"} {
		status, _, m := get(t, ts.URL+"/commands/"+name)
		if status != http.StatusOK || m["command"] != name || m["error"] != errNotServing {
			t.Errorf("not serving, %s: %d %v, want 200, command %q, error %q", name, status, m, name, errNotServing)
		}
	}
	// Not gated: runs, under the primary name.
	if _, _, m := get(t, ts.URL+"/commands/mntr"); m["command"] != "monitor" {
		t.Errorf("not serving, mntr: %v, want command monitor", m)
	}

	src.serving.Store(true)
	for _, tt := range []struct {
		name, auth string
		status     int
		errMsg     string
	}{
		{"snap", "", http.StatusUnauthorized, errAuthMissing},
		{"snap", "sasl x", http.StatusUnauthorized, errNotAuthenticated},
		{"snapshot", "", http.StatusUnauthorized, errAuthMissing},
	} {
		code, _, m := getAuth(t, ts.URL+"/commands/"+tt.name, tt.auth)
		if code != tt.status || m["command"] != tt.name || m["error"] != tt.errMsg {
			t.Errorf("%s with %q: %d %v, want %d, command %q, error %q", tt.name, tt.auth, code, m, tt.status, tt.name, tt.errMsg)
		}
	}
	// Past the credentials, snapshot answers as itself.
	ts = newTestServer(t, newFake(), Options{})
	if code, _, m := getAuth(t, ts.URL+"/commands/snap", anyDigest); code != http.StatusServiceUnavailable || m["command"] != "snapshot" {
		t.Errorf("disabled snap with credentials: %d %v, want 503 under snapshot", code, m)
	}
}

// TestSnapshotStreamingParsedAsJava checks ?streaming= as ZooKeeper 3.9's
// SnapshotCommand reads it: Boolean.parseBoolean of the first value when
// the parameter is present, so only "true" in any case streams, anything
// else (empty, "1", "yes", "maybe") answers the JSON report; absent means
// streaming. No value is an error.
func TestSnapshotStreamingParsedAsJava(t *testing.T) {
	ts := newTestServer(t, newFake(), Options{SnapshotEnabled: true})
	for _, tt := range []struct {
		query  string
		stream bool
	}{
		{"", true},
		{"?streaming=true", true},
		{"?streaming=TRUE", true},
		{"?streaming=True", true},
		{"?streaming=false", false},
		{"?streaming=", false},
		{"?streaming", false},
		{"?streaming=1", false},
		{"?streaming=t", false},
		{"?streaming=yes", false},
		{"?streaming=maybe", false},
		{"?streaming=false&streaming=true", false},
		{"?other=1", true},
	} {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/commands/snapshot"+tt.query, nil)
		req.Header.Set("Authorization", anyDigest)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ct := resp.Header.Get("Content-Type")
		switch {
		case resp.StatusCode != http.StatusOK:
			t.Errorf("%q: status %d %s, want 200", tt.query, resp.StatusCode, body)
		case tt.stream && (ct != "application/octet-stream" || string(body) != "state bytes"):
			t.Errorf("%q: %s %q, want the snapshot's bytes", tt.query, ct, body)
		case !tt.stream && (ct != "application/json" || !strings.Contains(string(body), `"snapshot_size": 11`)):
			t.Errorf("%q: %s %q, want the JSON report", tt.query, ct, body)
		}
	}
}

// TestCommandURLNeedsNoPattern checks that a command URL is a plain path
// prefix: characters that mean something in a ServeMux pattern ("{", "}",
// a tab) neither panic New nor change what is served.
func TestCommandURLNeedsNoPattern(t *testing.T) {
	for _, u := range []string{"/x{y", "/x{y}", "/zk/{$}", "/{name}", "/a\tb"} {
		var s *Server
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("New with command URL %q panics: %v", u, r)
				}
			}()
			s, err = New(Options{Source: newFake(), CommandURL: u})
		}()
		if s == nil || err != nil {
			if err == nil {
				continue // panicked, reported above
			}
			t.Errorf("New with command URL %q: %v", u, err)
			continue
		}
		ts := httptest.NewServer(s.Handler())
		t.Cleanup(ts.Close)
		prefix := strings.TrimRight(u, "/")
		code, _, m := get(t, ts.URL+escapePath(prefix)+"/srvr")
		if code != http.StatusOK || m["command"] != "server_stats" {
			t.Errorf("command URL %q: srvr answers %d %v", u, code, m)
		}
		if code, _, m = get(t, ts.URL+"/ready"); code != http.StatusOK || m["ready"] != true {
			t.Errorf("command URL %q: /ready answers %d %v", u, code, m)
		}
		resp, err := http.Get(ts.URL + "/other/srvr")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("command URL %q: /other/srvr answers %d, want 404", u, resp.StatusCode)
		}
	}
}

// escapePath percent-encodes what a URL path cannot carry as is.
func escapePath(p string) string {
	r := strings.NewReplacer("{", "%7B", "}", "%7D", "$", "%24", "\t", "%09")
	return r.Replace(p)
}

// TestStalledReaderReleasesSnapshot checks that a client that asks for a
// snapshot and then reads nothing does not hold the one-at-a-time slot
// (and the snapshot's bytes) forever: like Jetty's idle timeout, a write
// that makes no progress for the idle timeout ends the answer, and the
// next snapshot can be taken.
func TestStalledReaderReleasesSnapshot(t *testing.T) {
	src := newFake()
	src.snapshotData = make([]byte, 64<<20) // far beyond the loopback socket buffers
	s, err := New(Options{Source: src, SnapshotEnabled: true, IdleTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	base := "http://" + ln.Addr().String()

	// The stalled client: sends its request, reads the status line, then
	// nothing more.
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /commands/snapshot HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\n\r\n", anyDigest)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Fatalf("stalled client's status line %q, %v", line, err)
	}

	client := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, base+"/commands/snapshot?streaming=false", nil)
		req.Header.Set("Authorization", anyDigest)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return
		}
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("second snapshot: %d", resp.StatusCode)
		}
		if time.Now().After(deadline) {
			t.Fatalf("a client that reads nothing still holds the snapshot after 10s (idle timeout 200ms)")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestDoublesKeepTheirFraction checks that the fields ZooKeeper writes as
// Java doubles (avg_latency, connection_drop_probability) keep a fraction
// when integral: 0.0, as Jackson writes them, not 0.
func TestDoublesKeepTheirFraction(t *testing.T) {
	ts := httptest.NewServer(mustNew(t, Options{Source: newFake()}).Handler())
	t.Cleanup(ts.Close)
	resp, err := http.Get(ts.URL + "/commands/mntr")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`"avg_latency": 0.0,`, `"connection_drop_probability": 0.0,`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("mntr lacks %s:\n%s", want, body)
		}
	}
	for _, tt := range []struct {
		d    Double
		want string
	}{{0, "0.0"}, {2, "2.0"}, {1.5, "1.5"}, {-3, "-3.0"}, {1e21, "1e+21"}, {1e-7, "1e-7"}} {
		if b, err := json.Marshal(tt.d); err != nil || string(b) != tt.want {
			t.Errorf("Double(%v) = %s, %v; want %s", float64(tt.d), b, err, tt.want)
		}
	}
}

func mustNew(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSnapshotHeadersKeepTheirCase checks that the snapshot's headers go
// out as ZooKeeper 3.9 spells them, last_zxid and snapshot_size, not
// canonicalised to Last_zxid: header names are case-insensitive, but
// scripts grep curl's output for them.
func TestSnapshotHeadersKeepTheirCase(t *testing.T) {
	ts := httptest.NewServer(mustNew(t, Options{Source: newFake(), SnapshotEnabled: true}).Handler())
	t.Cleanup(ts.Close)
	for _, query := range []string{"", "?streaming=false"} {
		c, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "GET /commands/snapshot%s HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nConnection: close\r\n\r\n", query, anyDigest)
		raw, err := io.ReadAll(c)
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		head, _, _ := strings.Cut(string(raw), "\r\n\r\n")
		for _, want := range []string{"\r\nlast_zxid: 0x1f\r\n", "\r\nsnapshot_size: 11\r\n"} {
			if !strings.Contains(head+"\r\n", want) {
				t.Errorf("snapshot%s: no %q in\n%s", query, strings.TrimSpace(want), head)
			}
		}
	}
}
