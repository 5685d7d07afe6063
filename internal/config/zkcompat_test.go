package config

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestParseRepeatedKeyOnlyLastValueRead: java.util.Properties keeps only
// the last value of a repeated key, so ZooKeeper 3.8 never sees the earlier
// ones: "tickTime=abc" followed by "tickTime=2000" starts (checked with
// QuorumPeerConfig.parse). Paddock must not fail on a value it replaces.
func TestParseRepeatedKeyOnlyLastValueRead(t *testing.T) {
	for _, in := range []string{
		"tickTime=abc\ntickTime=3000\n",
		"clientPort=x\nclientPort=2181\nclientPortAddress=127.0.0.2\n",
		"server.1=nonsense\nserver.1=127.0.0.1:2888:3888\n",
	} {
		cfg, warnings, err := Parse(strings.NewReader(in))
		if err != nil {
			t.Errorf("Parse(%q): %v; ZooKeeper reads only the last value", in, err)
			continue
		}
		if len(warnings) != 1 || !regexp.MustCompile(`^line 2: \S+ is set again; the value from line 1 is replaced$`).MatchString(warnings[0]) {
			t.Errorf("Parse(%q): warnings %q, want one naming the replaced line", in, warnings)
		}
		_ = cfg
	}
	cfg, _ := mustParse(t, "tickTime=abc\ntickTime=3000\n")
	if cfg.TickTime != 3*time.Second {
		t.Errorf("TickTime = %v, want 3s", cfg.TickTime)
	}
}

// TestLoadDynamicConfigFileRepeatedKey: the dynamic file is read with
// Properties too, so a replaced server.N line is never parsed.
func TestLoadDynamicConfigFileRepeatedKey(t *testing.T) {
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	writeTemp(t, dir, "data/myid", "1\n")
	dyn := writeTemp(t, dir, "zoo.cfg.dynamic", "server.1=bad\nserver.1=h1:2888:3888\nserver.2=h2:2888:3888\nserver.3=h3:2888:3888\n")
	static := writeTemp(t, dir, "zoo.cfg", "dataDir="+dataDir+"\ndynamicConfigFile="+dyn+"\n")
	cfg, _, err := Load(static)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if len(cfg.Servers) != 3 || cfg.Servers[0].Addrs[0].Host != "h1" {
		t.Errorf("Servers = %+v", cfg.Servers)
	}
}

// TestParseServerTrailingSeparators: ZooKeeper splits a server.N value with
// String.split, which drops trailing empty fields, so a trailing ';' or ':'
// is accepted (QuorumPeerConfig.parse of ZooKeeper 3.8 reads
// "h:2888:3888;" as no client address, "h:2888:3888:" as a participant,
// "h:2888:3888;2181:" as client port 2181).
func TestParseServerTrailingSeparators(t *testing.T) {
	tests := []struct {
		value      string
		role       Role
		clientHost string
		clientPort int
	}{
		{"127.0.0.1:2888:3888;", Participant, "", 0},
		{"127.0.0.1:2888:3888:", Participant, "", 0},
		{"127.0.0.1:2888:3888:observer:", Observer, "", 0},
		{"127.0.0.1:2888:3888;2181;", Participant, "0.0.0.0", 2181},
		{"127.0.0.1:2888:3888;2181:", Participant, "0.0.0.0", 2181},
		{"127.0.0.1:2888:3888;127.0.0.5:2181:", Participant, "127.0.0.5", 2181},
		{"[::1]:2888:3888:observer:;[::1]:2181", Observer, "::1", 2181},
	}
	for _, tt := range tests {
		srv, err := parseServer(4, tt.value)
		if err != nil {
			t.Errorf("parseServer(%q): %v; ZooKeeper accepts it", tt.value, err)
			continue
		}
		if len(srv.Addrs) != 1 || srv.Addrs[0].QuorumPort != 2888 || srv.Addrs[0].ElectionPort != 3888 ||
			srv.Role != tt.role || srv.ClientHost != tt.clientHost || srv.ClientPort != tt.clientPort {
			t.Errorf("parseServer(%q) = %+v", tt.value, srv)
		}
	}
	// What ZooKeeper refuses stays refused.
	for _, bad := range []string{
		"127.0.0.1:2888:3888;2181;x", "127.0.0.1::3888", "127.0.0.1:2888", ";2181",
		"127.0.0.1:2888:3888;1.2.3.4:2181:5", "127.0.0.1:2888:3888:observer:x",
	} {
		if _, err := parseServer(4, bad); err == nil {
			t.Errorf("parseServer(%q) succeeded; ZooKeeper refuses it", bad)
		}
	}
}

// TestParseEmptyClientPortAddress: ZooKeeper resolves clientPortAddress
// with InetAddress.getByName, which maps "" to the loopback address: a
// zoo.cfg with an empty clientPortAddress listens on 127.0.0.1 only
// (checked with ZooKeeper 3.8: "localhost/127.0.0.1:2181"), not on every
// interface. The --address "" flag keeps its documented meaning.
func TestParseEmptyClientPortAddress(t *testing.T) {
	cfg, _ := mustParse(t, "clientPort=2181\nclientPortAddress=\n")
	if got := cfg.ClientAddr(); got != "127.0.0.1:2181" {
		t.Errorf("ClientAddr = %q, want 127.0.0.1:2181 as ZooKeeper listens", got)
	}
	cfg, _ = mustParse(t, "clientPort=2181\nclientPortAddress=127.0.0.2\n",
		Setting{Key: "clientPortAddress", Value: "", Source: "flag --address"})
	if got := cfg.ClientAddr(); got != ":2181" {
		t.Errorf("with --address \"\": ClientAddr = %q, want :2181", got)
	}
}

// TestLoadMyIDFirstLine: ZooKeeper reads only the first line of myid
// (BufferedReader.readLine, then Long.parseLong), so whatever follows it
// does not stop an ensemble member from starting.
func TestLoadMyIDFirstLine(t *testing.T) {
	dir := t.TempDir()
	ensemble := "server.1=h1:2888:3888\nserver.2=h2:2888:3888\nserver.7=h7:2888:3888\n"
	for text, want := range map[string]int64{
		"2\n7\n":            2,
		"007\n":             7,
		"2\r\n# by ansible": 2,
		" 7 \n":             7,
	} {
		dataDir := t.TempDir()
		writeTemp(t, dataDir, "myid", text)
		cfgPath := writeTemp(t, dir, "zoo.cfg", "dataDir="+dataDir+"\n"+ensemble)
		cfg, _, err := Load(cfgPath)
		if err != nil {
			t.Errorf("myid %q: %v", text, err)
			continue
		}
		if cfg.ServerID != want {
			t.Errorf("myid %q: ServerID %d, want %d", text, cfg.ServerID, want)
		}
	}
}
