package admin

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// fakeSource is a Source with fixed answers and switchable state.
type fakeSource struct {
	live, serving  atomic.Bool
	standalone     bool
	connResets     atomic.Int32
	statResets     atomic.Int32
	snapshotErr    error
	snapshotData   []byte        // the snapshot's bytes; nil for "state bytes"
	snapshotCalled chan struct{} // if set, Snapshot signals it and waits for release
	release        chan struct{}
	rootACL        []proto.ACL // the ACL of "/"; nil for ZooKeeper's default, world:anyone ALL
}

func newFake() *fakeSource {
	f := &fakeSource{standalone: true}
	f.live.Store(true)
	f.serving.Store(true)
	return f
}

func (f *fakeSource) Live() bool    { return f.live.Load() }
func (f *fakeSource) Serving() bool { return f.serving.Load() }
func (f *fakeSource) Mode() string {
	if f.standalone {
		return "standalone"
	}
	return "follower"
}
func (f *fakeSource) ServerStats() ServerStats {
	return ServerStats{Version: "3.9.3-paddock", ServerStats: ServerCounters{ServerState: f.Mode(), AvgLatency: 1.5},
		ClientResponse: NoBufferStats, NodeCount: 5}
}
func (f *fakeSource) Connections(brief bool) []Connection {
	c := Connection{RemoteSocketAddress: "127.0.0.1:5000", InterestOps: 1, PacketsReceived: 3, PacketsSent: 2}
	if !brief {
		c.ConnectionDetails = &ConnectionDetails{SessionID: 1 << 56, LastOperation: "GETD", LastZxid: -1}
	}
	return []Connection{c}
}
func (f *fakeSource) ResetConnectionStats() { f.connResets.Add(1) }
func (f *fakeSource) ResetServerStats()     { f.statResets.Add(1) }
func (f *fakeSource) Monitor() Monitor {
	m := Monitor{Version: "v", ServerState: f.Mode(), ZnodeCount: 5}
	if !f.standalone {
		q := 3
		m.QuorumSize = &q
	}
	return m
}
func (f *fakeSource) Configuration() Configuration {
	return Configuration{ClientPort: 2181, ServerID: 1}
}
func (f *fakeSource) Environment() []Field {
	return []Field{{"zookeeper.version", "v"}, {"host.name", "h"}, {"go.version", "go1"}}
}
func (f *fakeSource) WatchSummary() WatchSummary { return WatchSummary{1, 2, 3} }
func (f *fakeSource) WatchesBySession() map[int64][]string {
	return map[int64][]string{7: {"/a", "/b"}}
}
func (f *fakeSource) WatchesByPath() map[string][]int64 { return nil }
func (f *fakeSource) Dump() Dump {
	return Dump{SessionIDToEphemeralPaths: map[int64][]string{7: {"/e"}}}
}
func (f *fakeSource) Dirs() Dirs { return Dirs{10, 20} }
func (f *fakeSource) Leader() (Leader, bool) {
	if f.standalone {
		return Leader{}, false
	}
	return Leader{IsLeader: false, LeaderID: 2, LeaderIP: "127.0.0.1"}, true
}
func (f *fakeSource) VotingView() map[int64]QuorumServer { return nil }
func (f *fakeSource) ZabState() ZabState                 { return ZabState{} }
func (f *fakeSource) LastSnapshot() LastSnapshot         { return LastSnapshot{"ffffffffffffffff", -1} }
func (f *fakeSource) InitialConfiguration() string       { return "tickTime=2000\n" }
func (f *fakeSource) TraceMask() int64                   { return 306 }
func (f *fakeSource) ACL(path string) ([]proto.ACL, bool) {
	if path != "/" {
		return nil, false
	}
	if f.rootACL == nil {
		return []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}, true
	}
	return f.rootACL, true
}
func (f *fakeSource) Snapshot() (int64, []byte, error) {
	if f.snapshotCalled != nil {
		f.snapshotCalled <- struct{}{}
		<-f.release
	}
	if f.snapshotErr != nil {
		return 0, nil, f.snapshotErr
	}
	if f.snapshotData != nil {
		return 0x1f, f.snapshotData, nil
	}
	return 0x1f, []byte("state bytes"), nil
}

func newTestServer(t *testing.T, src Source, opts Options) *httptest.Server {
	t.Helper()
	opts.Source = src
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts
}

// get fetches path and decodes a JSON object answer.
func get(t *testing.T, url string) (int, http.Header, map[string]any) {
	t.Helper()
	return getAuth(t, url, "")
}

// anyDigest is an Authorization header that passes ZooKeeper's default
// root ACL, world:anyone ALL.
const anyDigest = "digest u:p"

// getAuth is get with an Authorization header (none if auth is "").
func getAuth(t *testing.T, url, auth string) (int, http.Header, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
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
		t.Fatalf("GET %s: %d, body is not a JSON object: %v\n%s", url, resp.StatusCode, err, body)
	}
	return resp.StatusCode, resp.Header, m
}

// TestCommandsAnswerWithNamesAndAliases runs every name of every command
// and checks the primary name, the error and one field each.
func TestCommandsAnswerWithNamesAndAliases(t *testing.T) {
	ts := newTestServer(t, newFake(), Options{SnapshotEnabled: true})
	tests := []struct {
		names   []string
		primary string
		field   string // a field the answer must have ("" for none)
		errMsg  any    // nil or the expected error
	}{
		{[]string{"ruok"}, "ruok", "", nil},
		{[]string{"srvr", "server_stats"}, "server_stats", "server_stats", nil},
		{[]string{"stat", "stats"}, "stats", "connections", nil},
		{[]string{"mntr", "monitor"}, "monitor", "znode_count", nil},
		{[]string{"conf", "configuration", "config"}, "configuration", "client_port", nil},
		{[]string{"cons", "connections"}, "connections", "secure_connections", nil},
		{[]string{"crst", "connection_stat_reset"}, "connection_stat_reset", "", nil},
		{[]string{"srst", "stat_reset"}, "stat_reset", "", nil},
		{[]string{"dump"}, "dump", "expiry_time_to_session_ids", nil},
		{[]string{"envi", "environment", "env"}, "environment", "go.version", nil},
		{[]string{"wchs", "watch_summary"}, "watch_summary", "num_total_watches", nil},
		{[]string{"wchc", "watches"}, "watches", "session_id_to_watched_paths", nil},
		{[]string{"wchp", "watches_by_path"}, "watches_by_path", "path_to_session_ids", nil},
		{[]string{"dirs"}, "dirs", "logdir_size", nil},
		{[]string{"isro", "is_read_only"}, "is_read_only", "read_only", nil},
		{[]string{"lead", "leader"}, "leader", "", errNotInitialized},
		{[]string{"voting_view"}, "voting_view", "current_config", nil},
		{[]string{"zabstate"}, "zabstate", "zabstate", nil},
		{[]string{"lsnp", "last_snapshot"}, "last_snapshot", "timestamp", nil},
		{[]string{"icfg", "initial_configuration"}, "initial_configuration", "initial_configuration", nil},
		{[]string{"gtmk", "get_trace_mask"}, "get_trace_mask", "tracemask", nil},
		{[]string{"hash"}, "hash", "digests", nil},
		{[]string{"frobnicate"}, "frobnicate", "", "Unknown command: frobnicate"},
	}
	for _, tt := range tests {
		for _, name := range tt.names {
			t.Run(name, func(t *testing.T) {
				status, hdr, m := get(t, ts.URL+"/commands/"+name)
				if status != http.StatusOK {
					t.Errorf("status %d, want 200", status)
				}
				if ct := hdr.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
				if m["command"] != tt.primary {
					t.Errorf("command %v, want %s", m["command"], tt.primary)
				}
				if e, ok := m["error"]; !ok || e != tt.errMsg {
					t.Errorf("error %#v (present %v), want %#v", e, ok, tt.errMsg)
				}
				if tt.field != "" {
					if _, ok := m[tt.field]; !ok {
						t.Errorf("no %q field in %v", tt.field, m)
					}
				}
			})
		}
	}
}

// TestAnswerShapes checks details of the JSON encoding: maps keyed by
// session id, brief and full connections, and empty collections as [] and
// {} rather than null.
func TestAnswerShapes(t *testing.T) {
	ts := newTestServer(t, newFake(), Options{})
	_, _, stat := get(t, ts.URL+"/commands/stat")
	conn := stat["connections"].([]any)[0].(map[string]any)
	if _, ok := conn["session_id"]; ok {
		t.Errorf("stat's brief connection has session details: %v", conn)
	}
	if s, ok := stat["secure_connections"].([]any); !ok || len(s) != 0 {
		t.Errorf("secure_connections = %#v, want []", stat["secure_connections"])
	}
	_, _, cons := get(t, ts.URL+"/commands/cons")
	full := cons["connections"].([]any)[0].(map[string]any)
	if full["session_id"] != float64(1<<56) || full["last_operation"] != "GETD" || full["remote_socket_address"] != "127.0.0.1:5000" {
		t.Errorf("cons connection = %v", full)
	}
	_, _, wchc := get(t, ts.URL+"/commands/wchc")
	if got := wchc["session_id_to_watched_paths"].(map[string]any)["7"]; !slices.Equal(toStrings(got), []string{"/a", "/b"}) {
		t.Errorf("wchc session 7 = %v", got)
	}
	_, _, wchp := get(t, ts.URL+"/commands/wchp")
	if m, ok := wchp["path_to_session_ids"].(map[string]any); !ok || len(m) != 0 {
		t.Errorf("wchp with no watches = %#v, want {}", wchp["path_to_session_ids"])
	}
	_, _, dump := get(t, ts.URL+"/commands/dump")
	if m, ok := dump["expiry_time_to_session_ids"].(map[string]any); !ok || len(m) != 0 {
		t.Errorf("dump expiry = %#v, want {}", dump["expiry_time_to_session_ids"])
	}
	_, _, srvr := get(t, ts.URL+"/commands/srvr")
	if cr := srvr["client_response"].(map[string]any); cr["last_buffer_size"] != float64(-1) {
		t.Errorf("client_response = %v", cr)
	}
	_, _, mntr := get(t, ts.URL+"/commands/mntr")
	if _, ok := mntr["quorum_size"]; ok {
		t.Errorf("standalone mntr has quorum_size")
	}
	_, _, zab := get(t, ts.URL+"/commands/zabstate")
	if zab["voting"] != false || zab["zabstate"] != "" || len(zab) != 4 {
		t.Errorf("standalone zabstate = %v, want voting, zabstate, command and error only", zab)
	}
	// envi keeps the source's order.
	resp, err := http.Get(ts.URL + "/commands/envi")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	s := string(body)
	if i, j, k := strings.Index(s, "zookeeper.version"), strings.Index(s, "host.name"), strings.Index(s, `"command"`); !(i < j && j < k && i >= 0) {
		t.Errorf("envi out of order:\n%s", s)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestNotServing checks ZooKeeper's gate: commands that need a serving
// server say so (still 200), the others answer.
func TestNotServing(t *testing.T) {
	src := newFake()
	src.serving.Store(false)
	ts := newTestServer(t, src, Options{})
	for _, name := range []string{"ruok", "srvr", "stat", "cons", "conf", "dump", "wchc", "dirs", "lsnp", "snapshot", "crst"} {
		status, _, m := get(t, ts.URL+"/commands/"+name)
		if status != http.StatusOK || m["error"] != errNotServing {
			t.Errorf("%s: %d %v, want 200 and %q", name, status, m, errNotServing)
		}
	}
	if src.connResets.Load() != 0 {
		t.Errorf("crst ran while not serving")
	}
	for _, name := range []string{"mntr", "envi", "zabstate", "gtmk"} {
		if _, _, m := get(t, ts.URL+"/commands/"+name); m["error"] != nil {
			t.Errorf("%s: error %v, want none", name, m["error"])
		}
	}
}

func TestResets(t *testing.T) {
	src := newFake()
	ts := newTestServer(t, src, Options{})
	get(t, ts.URL+"/commands/crst")
	get(t, ts.URL+"/commands/srst")
	get(t, ts.URL+"/commands/stat_reset")
	if src.connResets.Load() != 1 || src.statResets.Load() != 2 {
		t.Errorf("resets: connection %d, server %d; want 1 and 2", src.connResets.Load(), src.statResets.Load())
	}
}

// TestProbes checks /ready and /live follow the source, 200 or 503.
func TestProbes(t *testing.T) {
	src := newFake()
	ts := newTestServer(t, src, Options{})
	tests := []struct {
		live, serving       bool
		readyCode, liveCode int
	}{
		{true, true, 200, 200},
		{true, false, 503, 200},
		{false, false, 503, 503},
	}
	for _, tt := range tests {
		src.live.Store(tt.live)
		src.serving.Store(tt.serving)
		code, hdr, m := get(t, ts.URL+"/ready")
		if code != tt.readyCode || m["ready"] != tt.serving || m["mode"] != "standalone" {
			t.Errorf("serving=%v: /ready %d %v", tt.serving, code, m)
		}
		if hdr.Get("Cache-Control") != "no-store" {
			t.Errorf("/ready may be cached")
		}
		code, _, m = get(t, ts.URL+"/live")
		if code != tt.liveCode || m["live"] != tt.live {
			t.Errorf("live=%v: /live %d %v", tt.live, code, m)
		}
	}
}

func TestListAndRouting(t *testing.T) {
	ts := newTestServer(t, newFake(), Options{CommandURL: "/zk/"})
	for _, path := range []string{"/zk", "/zk/"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), `<a href="/zk/server_stats">server_stats</a>`) ||
			!strings.Contains(string(body), `<a href="/zk/snapshot">snapshot</a>`) || strings.Contains(string(body), ">srvr<") {
			t.Errorf("GET %s: %d\n%s", path, resp.StatusCode, body)
		}
	}
	if _, _, m := get(t, ts.URL+"/zk/ruok"); m["command"] != "ruok" {
		t.Errorf("ruok under /zk: %v", m)
	}
	for _, tt := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/commands/ruok", 404},
		{"GET", "/", 404},
		{"POST", "/zk/ruok", 405},
		{"DELETE", "/ready", 405},
		{"HEAD", "/live", 200},
	} {
		req, _ := http.NewRequest(tt.method, ts.URL+tt.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.path, resp.StatusCode, tt.want)
		}
	}
}

func TestSnapshot(t *testing.T) {
	t.Run("disabled", func(t *testing.T) {
		ts := newTestServer(t, newFake(), Options{})
		code, _, m := getAuth(t, ts.URL+"/commands/snapshot", anyDigest)
		if code != http.StatusServiceUnavailable || !strings.Contains(m["error"].(string), "admin.snapshot.enabled") {
			t.Errorf("disabled snapshot: %d %v", code, m)
		}
	})
	t.Run("streaming", func(t *testing.T) {
		ts := newTestServer(t, newFake(), Options{SnapshotEnabled: true})
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/commands/snap", nil)
		req.Header.Set("Authorization", anyDigest)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "state bytes" || resp.Header.Get("last_zxid") != "0x1f" ||
			resp.Header.Get("snapshot_size") != "11" || resp.Header.Get("Content-Type") != "application/octet-stream" {
			t.Errorf("snapshot: %d %v %q", resp.StatusCode, resp.Header, body)
		}
	})
	t.Run("report", func(t *testing.T) {
		ts := newTestServer(t, newFake(), Options{SnapshotEnabled: true})
		code, _, m := getAuth(t, ts.URL+"/commands/snapshot?streaming=false", anyDigest)
		if code != 200 || m["last_zxid"] != "0x1f" || m["snapshot_size"] != float64(11) || m["error"] != nil {
			t.Errorf("snapshot report: %d %v", code, m)
		}
		// As ZooKeeper's Boolean.parseBoolean: anything but "true" is false.
		code, _, m = getAuth(t, ts.URL+"/commands/snapshot?streaming=maybe", anyDigest)
		if code != http.StatusOK || m["snapshot_size"] != float64(11) || m["error"] != nil {
			t.Errorf("streaming=maybe: %d %v, want the report", code, m)
		}
	})
	t.Run("failure", func(t *testing.T) {
		src := newFake()
		src.snapshotErr = errors.New("disk on fire")
		ts := newTestServer(t, src, Options{SnapshotEnabled: true})
		code, _, m := getAuth(t, ts.URL+"/commands/snapshot", anyDigest)
		if code != http.StatusInternalServerError || !strings.Contains(m["error"].(string), "disk on fire") {
			t.Errorf("failed snapshot: %d %v", code, m)
		}
	})
	t.Run("one at a time", func(t *testing.T) {
		src := newFake()
		src.snapshotCalled, src.release = make(chan struct{}), make(chan struct{})
		ts := newTestServer(t, src, Options{SnapshotEnabled: true})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, ts.URL+"/commands/snapshot", nil)
			req.Header.Set("Authorization", anyDigest)
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
			}
		}()
		<-src.snapshotCalled
		code, _, m := getAuth(t, ts.URL+"/commands/snapshot", anyDigest)
		close(src.release)
		wg.Wait()
		if code != http.StatusTooManyRequests || m["error"] == nil {
			t.Errorf("concurrent snapshot: %d %v, want 429", code, m)
		}
	})
}

// TestStartCloseAndBindFailure runs a real listener.
func TestStartCloseAndBindFailure(t *testing.T) {
	s, err := New(Options{Source: newFake()})
	if err != nil {
		t.Fatal(err)
	}
	if s.Addr() != nil {
		t.Errorf("Addr before Start = %v", s.Addr())
	}
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	addr := s.Addr().String()
	if _, _, m := get(t, "http://"+addr+"/commands/ruok"); m["command"] != "ruok" {
		t.Errorf("ruok: %v", m)
	}
	other, _ := New(Options{Source: newFake()})
	if err := other.Start(addr); err == nil || !strings.Contains(err.Error(), addr) {
		t.Errorf("second Start on %s: %v, want a listen error naming the address", addr, err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Errorf("still listening after Close")
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, o := range []Options{{}, {Source: newFake(), CommandURL: "commands"}, {Source: newFake(), CommandURL: "/ready"}, {Source: newFake(), CommandURL: "/"}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}

func TestEncodeResponse(t *testing.T) {
	tests := []struct {
		name    string
		data    any
		errMsg  string
		want    string
		wantErr bool
	}{
		{"no data", nil, "", "{\n  \"command\": \"ruok\",\n  \"error\": null\n}\n", false},
		{"error", nil, "boom", "{\n  \"command\": \"ruok\",\n  \"error\": \"boom\"\n}\n", false},
		{"object", Object{{"b", 1}, {"a", "x"}}, "", "{\n  \"b\": 1,\n  \"a\": \"x\",\n  \"command\": \"ruok\",\n  \"error\": null\n}\n", false},
		{"empty object", struct{}{}, "", "{\n  \"command\": \"ruok\",\n  \"error\": null\n}\n", false},
		{"not an object", []int{1}, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := encodeResponse("ruok", tt.data, tt.errMsg)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if !tt.wantErr && string(got) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
