package admin_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/paddockhq/paddock/internal/zktest"
)

// allowedDiff is a deliberate difference between the JSON fields of
// ZooKeeper 3.8 and Paddock for one command: field paths Paddock lacks
// (missing) or adds (extra). Roles limits it to members of that part
// ("standalone", "leader", "follower"); empty means every part.
type allowedDiff struct {
	command        string
	roles          []string
	missing, extra []string
	why            string
}

// allowedDiffs lists every difference the comparison accepts. Each must
// show up where it applies (a fixed difference must leave the list).
var allowedDiffs = []allowedDiff{
	{command: "server_stats", missing: []string{"server_stats/auth_failed_count"},
		why: "Paddock does not count failed authentications (mntr leaves zk_auth_failed_count out too)"},
	{command: "stats", missing: []string{"server_stats/auth_failed_count"},
		why: "as server_stats"},
	{command: "environment",
		missing: []string{"java.version", "java.vendor", "java.home", "java.class.path", "java.library.path", "java.io.tmpdir", "java.compiler",
			// Reported only when a Go soft memory limit (GOMEMLIMIT) is set;
			// the test runs without one.
			"os.memory.max"},
		extra: []string{"go.version"},
		why:   "Paddock runs on the Go runtime, not a JVM"},
	{command: "monitor", missing: []string{"last_client_response_size", "max_client_response_size", "min_client_response_size", "auth_failed_count"},
		why: "Paddock records no response sizes and counts no failed authentications; mntr leaves them out too. " +
			"ZooKeeper's metrics-provider counters and summaries, which follow its gauges, are all left out (see compareMonitor)"},
}

// commandsNotInPaddock are ZooKeeper 3.8's commands Paddock leaves out.
var commandsNotInPaddock = []string{
	"observer_connection_stat_reset", // Paddock's observers are raft learners, with no connection to reset
	"observers",                      // likewise: no observer learner handlers to list
	"set_trace_mask",                 // Paddock has no request tracing; the stmk four-letter word sets the mask get_trace_mask reports
	"system_properties",              // JVM system properties
}

// commandsOnlyInPaddock are Paddock's commands ZooKeeper 3.8 lacks.
var commandsOnlyInPaddock = []string{
	"snapshot", // ZooKeeper 3.9's snapshot command
}

// aliases are ZooKeeper 3.8's names of each command Paddock has, the
// primary name first (Commands.java).
var aliases = [][]string{
	{"ruok"}, {"server_stats", "srvr"}, {"stats", "stat"}, {"monitor", "mntr"},
	{"configuration", "conf", "config"}, {"connections", "cons"}, {"connection_stat_reset", "crst"},
	{"stat_reset", "srst"}, {"dump"}, {"environment", "env", "envi"}, {"watch_summary", "wchs"},
	{"watches", "wchc"}, {"watches_by_path", "wchp"}, {"dirs"}, {"is_read_only", "isro"},
	{"leader", "lead"}, {"voting_view"}, {"zabstate"}, {"last_snapshot", "lsnp"},
	{"initial_configuration", "icfg"}, {"get_trace_mask", "gtmk"}, {"hash"},
}

// zkClasspath is Debian's ZooKeeper classpath plus what its AdminServer
// needs and the Debian package does not put on it: Jetty, the servlet API
// and Jackson.
func zkClasspath(t *testing.T) []string {
	cp := zktest.DefaultZKClasspath()
	for _, jar := range []string{"servlet-api", "jetty9-server", "jetty9-servlet", "jetty9-http", "jetty9-io",
		"jetty9-util", "jetty9-security", "jackson-databind", "jackson-core", "jackson-annotations"} {
		path := "/usr/share/java/" + jar + ".jar"
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("ZooKeeper's AdminServer needs %s: %v", path, err)
		}
		cp = append(cp, path)
	}
	return cp
}

// adminConfig turns the AdminServer on at 127.0.0.1:port (0: a free port).
func adminConfig(port int) []string {
	return []string{"admin.enableServer=true", "admin.serverAddress=127.0.0.1", "admin.serverPort=" + strconv.Itoa(port)}
}

// answer is one command's decoded JSON object, with its keys in order.
type answer struct {
	fields map[string]any
	keys   []string
}

// fetch runs a command on the admin server at base ("http://host:port").
func fetch(t *testing.T, base, command string) answer {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(base + "/commands/" + command)
	if err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("%s %s: status %d\n%s", base, command, resp.StatusCode, body)
	}
	var a answer
	// Numbers stay json.Number, so that schema tells an integer literal
	// from a fractional one (Jackson writes a double as 0.0, never 0).
	fd := json.NewDecoder(strings.NewReader(string(body)))
	fd.UseNumber()
	if err := fd.Decode(&a.fields); err != nil {
		t.Fatalf("%s %s: %v\n%s", base, command, err, body)
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		var skip json.RawMessage
		dec.Decode(&skip)
		a.keys = append(a.keys, k.(string))
	}
	return a
}

// dataKeyed are the objects whose keys are data (ids, paths, times).
var dataKeyed = map[string]bool{
	"expiry_time_to_session_ids": true, "session_id_to_ephemeral_paths": true,
	"session_id_to_watched_paths": true, "path_to_session_ids": true, "current_config": true,
}

// schema flattens v into field path -> JSON type. Path elements are
// joined by "/", array elements are "[]" and data keys "*".
func schema(v any, path string, out map[string]string) {
	set := func(typ string) {
		if path != "" {
			out[path] = typ
		}
	}
	switch x := v.(type) {
	case nil:
		set("null")
	case bool:
		set("bool")
	case json.Number:
		// An integer or a double: Jackson writes Java's double fields
		// with a fraction or an exponent, its integers without.
		if strings.ContainsAny(string(x), ".eE") {
			set("double")
		} else {
			set("integer")
		}
	case string:
		set("string")
	case []any:
		set("array")
		for _, e := range x {
			schema(e, path+"[]", out)
		}
	case map[string]any:
		set("object")
		for k, e := range x {
			if dataKeyed[strings.TrimSuffix(path, "[]")] {
				k = "*"
			}
			p := k
			if path != "" {
				p = path + "/" + k
			}
			schema(e, p, out)
		}
	}
}

// compare checks one command's field paths and types on both servers.
func compare(t *testing.T, role, command string, zkA, pdA answer) {
	t.Helper()
	zs, ps := map[string]string{}, map[string]string{}
	schema(zkA.fields, "", zs)
	schema(pdA.fields, "", ps)
	var missing, extra []string
	for p, typ := range zs {
		pt, ok := ps[p]
		switch {
		case !ok:
			missing = append(missing, p)
		case pt != typ:
			t.Errorf("%s %s: %s is %s in ZooKeeper, %s in Paddock", role, command, p, typ, pt)
		}
	}
	for p := range ps {
		if _, ok := zs[p]; !ok {
			extra = append(extra, p)
		}
	}
	if command == "monitor" {
		missing = gaugesOnly(zkA.keys, pdA.fields, missing)
	}
	var allowMissing, allowExtra []string
	for _, d := range allowedDiffs {
		if d.command == command && (d.roles == nil || slices.Contains(d.roles, role)) {
			allowMissing = append(allowMissing, d.missing...)
			allowExtra = append(allowExtra, d.extra...)
		}
	}
	check := func(what string, got, allowed []string) {
		sort.Strings(got)
		for _, p := range got {
			if !slices.Contains(allowed, p) {
				t.Errorf("%s %s: %s %s is not an allowed difference", role, command, what, p)
			}
		}
		for _, p := range allowed {
			if !slices.Contains(got, p) {
				t.Errorf("%s %s: allowed difference %s %s did not show; drop it from allowedDiffs", role, command, what, p)
			}
		}
	}
	check("missing field", missing, allowMissing)
	check("extra field", extra, allowExtra)
}

// gaugesOnly drops from monitor's missing fields ZooKeeper's
// metrics-provider counters and summaries: everything ZooKeeper prints
// after the last of its gauges that Paddock also has (its gauges come first).
func gaugesOnly(zkKeys []string, pd map[string]any, missing []string) []string {
	last := -1
	for i, k := range zkKeys {
		if _, ok := pd[k]; ok && k != "command" && k != "error" {
			last = i
		}
	}
	var out []string
	for _, p := range missing {
		if i := slices.Index(zkKeys, p); i >= 0 && i < last {
			out = append(out, p)
		}
	}
	return out
}

// commandList returns the primary names the server lists under /commands.
func commandList(t *testing.T, base string) []string {
	t.Helper()
	resp, err := http.Get(base + "/commands")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var names []string
	for _, m := range regexp.MustCompile(`<a href="/commands/([a-z_]+)">`).FindAllStringSubmatch(string(body), -1) {
		names = append(names, m[1])
	}
	sort.Strings(names)
	return names
}

// populate gives a server a session with nodes, an ephemeral and watches.
func populate(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	c, _, err := zk.Connect([]string{addr}, 20*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	acl := zk.WorldACL(zk.PermAll)
	for _, p := range []string{"/app", "/app/x"} {
		if _, err := c.Create(p, []byte("data"), 0, acl); err != nil {
			t.Fatalf("%s: create %s: %v", addr, p, err)
		}
	}
	if _, err := c.Create("/eph", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatalf("%s: create /eph: %v", addr, err)
	}
	if _, _, _, err := c.GetW("/app"); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.ChildrenW("/app"); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestStandaloneFieldsMatchZooKeeper compares every command of a
// standalone Paddock with Apache ZooKeeper 3.8's, in the same state.
func TestStandaloneFieldsMatchZooKeeper(t *testing.T) {
	zkPort, pdPort := zktest.FreePort(t), zktest.FreePort(t)
	zkp := zktest.StartZooKeeper(t, zktest.ZKOptions{Classpath: zkClasspath(t), ExtraConfig: adminConfig(zkPort)})
	pdp := zktest.StartPaddock(t, zktest.PaddockOptions{ExtraConfig: []string{"admin.enableServer=true", "admin.serverPort=" + strconv.Itoa(pdPort)}})
	zkBase, pdBase := fmt.Sprintf("http://127.0.0.1:%d", zkPort), fmt.Sprintf("http://127.0.0.1:%d", pdPort)
	populate(t, zkp.Addr)
	populate(t, pdp.Addr)

	t.Run("command list", func(t *testing.T) {
		zkNames, pdNames := commandList(t, zkBase), commandList(t, pdBase)
		var onlyZK, onlyPD []string
		for _, n := range zkNames {
			if !slices.Contains(pdNames, n) {
				onlyZK = append(onlyZK, n)
			}
		}
		for _, n := range pdNames {
			if !slices.Contains(zkNames, n) {
				onlyPD = append(onlyPD, n)
			}
		}
		if !slices.Equal(onlyZK, commandsNotInPaddock) || !slices.Equal(onlyPD, commandsOnlyInPaddock) {
			t.Errorf("commands only in ZooKeeper %v (allowed %v), only in Paddock %v (allowed %v)",
				onlyZK, commandsNotInPaddock, onlyPD, commandsOnlyInPaddock)
		}
	})
	t.Run("aliases", func(t *testing.T) {
		for _, names := range aliases {
			for _, n := range names {
				zkA, pdA := fetch(t, zkBase, n), fetch(t, pdBase, n)
				if zkA.fields["command"] != names[0] || pdA.fields["command"] != names[0] {
					t.Errorf("%s: ZooKeeper answers as %v, Paddock as %v", n, zkA.fields["command"], pdA.fields["command"])
				}
			}
		}
		zkA, pdA := fetch(t, zkBase, "nosuch"), fetch(t, pdBase, "nosuch")
		if zkA.fields["error"] != pdA.fields["error"] || pdA.fields["command"] != "nosuch" {
			t.Errorf("unknown command: ZooKeeper %v, Paddock %v", zkA.fields, pdA.fields)
		}
	})
	t.Run("http", func(t *testing.T) { compareHTTP(t, zkBase, pdBase) })
	t.Run("fields", func(t *testing.T) {
		// The resets go last, and snapshot is not in ZooKeeper 3.8.
		for _, names := range aliases {
			command := names[0]
			compare(t, "standalone", command, fetch(t, zkBase, command), fetch(t, pdBase, command))
		}
	})
}

// TestEnsembleFieldsMatchZooKeeper compares the commands whose answers
// depend on a member's part, on the leader and a follower of three-member
// ensembles.
func TestEnsembleFieldsMatchZooKeeper(t *testing.T) {
	zkEns := zktest.StartZooKeeperEnsemble(t, zktest.EnsembleOptions{Members: 3, Classpath: zkClasspath(t), ExtraConfig: adminConfig(0)})
	pdEns := zktest.StartPaddockEnsemble(t, zktest.EnsembleOptions{Members: 3, ExtraConfig: []string{"admin.enableServer=true", "admin.serverPort=0"}})
	zkRoles, pdRoles := roles(t, zkEns), roles(t, pdEns)
	for _, role := range []string{"leader", "follower"} {
		for _, command := range []string{"leader", "voting_view", "zabstate", "monitor", "server_stats", "configuration"} {
			compare(t, role, command, fetch(t, zkRoles[role], command), fetch(t, pdRoles[role], command))
		}
	}

	// Left alone, a member serves nothing: every name of every command
	// that needs a serving server answers 200 with ZooKeeper's error,
	// under the name as asked.
	zkBase := fmt.Sprintf("http://127.0.0.1:%d", adminPort(t, zkEns.Members[0], 1))
	pdBase := fmt.Sprintf("http://127.0.0.1:%d", adminPort(t, pdEns.Members[0], 1))
	for _, e := range []*zktest.Ensemble{zkEns, pdEns} {
		for _, m := range e.Members[1:] {
			if err := m.Kill(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, base := range []string{zkBase, pdBase} {
		deadline := time.Now().Add(30 * time.Second)
		for fetch(t, base, "srvr").fields["error"] == nil {
			if time.Now().After(deadline) {
				t.Fatalf("%s still serves 30s after losing its quorum", base)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for _, names := range aliases {
		switch names[0] {
		case "monitor", "zabstate":
			// Not gated. ZooKeeper 3.8's monitor fails (500) without a
			// ZooKeeperServer and its zabstate then answers the standalone
			// shape; Paddock's report the member (docs/admin.md).
			continue
		}
		for _, n := range append(slices.Clone(names), "nosuch") {
			zk, pd := do(t, "GET", zkBase+"/commands/"+n), do(t, "GET", pdBase+"/commands/"+n)
			if zk != pd {
				t.Errorf("not serving, %s: ZooKeeper %+v, Paddock %+v", n, zk, pd)
			}
		}
	}
}

// roles returns the admin base URL of the ensemble's leader and of one
// follower, once they agree on a leader.
func roles(t *testing.T, e *zktest.Ensemble) map[string]string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out := map[string]string{}
		for i, m := range e.Members {
			base := fmt.Sprintf("http://127.0.0.1:%d", adminPort(t, m, i+1))
			a := fetch(t, base, "leader")
			switch a.fields["is_leader"] {
			case true:
				out["leader"] = base
			case false:
				out["follower"] = base
			}
		}
		if len(out) == 2 {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("no leader and follower found: %v", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// adminPort finds the port the member's admin server picked (the
// configuration says 0): the one port it listens on that is neither its
// client port nor one of its server.N ports.
func adminPort(t *testing.T, p *zktest.Process, id int) int {
	t.Helper()
	cfg, err := os.ReadFile(p.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	known := map[int]bool{p.Port: true}
	re := regexp.MustCompile(`(?m)^server\.` + strconv.Itoa(id) + `=[^:]+:(\d+):(\d+)`)
	m := re.FindStringSubmatch(string(cfg))
	if m == nil {
		t.Fatalf("no server.%d line in %s", id, p.ConfigPath)
	}
	for _, s := range m[1:] {
		n, _ := strconv.Atoi(s)
		known[n] = true
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var others []int
		for _, port := range listeningPorts(t, p.Pid()) {
			if !known[port] {
				others = append(others, port)
			}
		}
		if len(others) == 1 {
			return others[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("member %d listens on %v besides %v: cannot tell its admin port", id, others, known)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// listeningPorts lists the TCP ports process pid listens on, from
// /proc/<pid>/fd and /proc/net/tcp{,6}.
func listeningPorts(t *testing.T, pid int) []int {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatalf("listing the sockets of pid %d: %v", pid, err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if ino, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
			inodes[strings.TrimSuffix(ino, "]")] = true
		}
	}
	var ports []int
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			// local_address is f[1] ("ADDR:PORT" in hex), st is f[3]
			// (0A: LISTEN), inode is f[9].
			if len(f) < 10 || f[3] != "0A" || !inodes[f[9]] {
				continue
			}
			_, hexPort, _ := strings.Cut(f[1], ":")
			if port, err := strconv.ParseInt(hexPort, 16, 32); err == nil {
				ports = append(ports, int(port))
			}
		}
	}
	return ports
}

// exchange is what compareHTTP compares of one answer: the status, the
// media type, and for a JSON answer its "command" and "error".
type exchange struct {
	status         int
	mediaType      string
	command, error any
	contentLength  bool
}

// do sends one request and sums up its answer.
func do(t *testing.T, method, url string) exchange {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	mt, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	e := exchange{status: resp.StatusCode, mediaType: mt, contentLength: resp.Header.Get("Content-Length") != ""}
	if mt == "application/json" && method != http.MethodHead {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("%s %s: %v\n%s", method, url, err, body)
		}
		e.command, e.error = m["command"], m["error"]
	}
	return e
}

// compareHTTP compares the HTTP side of both admin servers: methods,
// paths around the command URL, odd command names and query parameters.
// Error pages are compared by status only (Jetty's are HTML, Go's text).
func compareHTTP(t *testing.T, zkBase, pdBase string) {
	for _, tt := range []struct {
		method, path string
		statusOnly   bool
	}{
		{"GET", "/commands/srvr", false},
		{"HEAD", "/commands/srvr", false},
		{"GET", "/commands/srvr?x=1&streaming=false", false},
		{"GET", "/commands/%73rvr", false},
		{"GET", "/commands/nosuch", false},
		{"GET", "/commands/SRVR", false},
		{"GET", "/commands/srvr/", false},
		{"GET", "/commands/srvr/x", false},
		{"GET", "/commands//srvr", false},
		{"GET", "/commands/a%2Fb", false},
		{"GET", "/commands/snapshot", false}, // ZooKeeper 3.8 has none; Paddock's says 401
		{"POST", "/commands/srvr", true},
		{"PUT", "/commands/srvr", true},
		{"DELETE", "/commands/srvr", true},
		{"POST", "/commands", true},
		{"GET", "/commandsx", true},
		{"GET", "/", true},
		{"GET", "/foo/srvr", true},
	} {
		zk, pd := do(t, tt.method, zkBase+tt.path), do(t, tt.method, pdBase+tt.path)
		if tt.path == "/commands/snapshot" {
			// The one command only Paddock has: unknown to ZooKeeper 3.8,
			// a 401 JSON answer under the same name from Paddock.
			if zk.error != "Unknown command: snapshot" || pd.status != http.StatusUnauthorized || pd.command != "snapshot" {
				t.Errorf("GET %s: ZooKeeper %+v, Paddock %+v", tt.path, zk, pd)
			}
			continue
		}
		if tt.statusOnly {
			zk.mediaType, pd.mediaType = "", ""
		}
		if zk != pd {
			t.Errorf("%s %s: ZooKeeper %+v, Paddock %+v", tt.method, tt.path, zk, pd)
		}
	}
}
