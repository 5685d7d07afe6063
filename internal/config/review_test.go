package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTemp writes text to name under dir and returns its path.
func writeTemp(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoadDynamicConfigFile: ZooKeeper 3.5+ keeps the ensemble in the file
// dynamicConfigFile names. Ignoring it would start every member standalone,
// each with its own copy of the data (a split brain).
func TestLoadDynamicConfigFile(t *testing.T) {
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	writeTemp(t, dir, "data/myid", "2\n")
	dyn := writeTemp(t, dir, "zoo.cfg.dynamic.100000000",
		"server.1=h1:2888:3888:participant;0.0.0.0:2181\n"+
			"server.2=h2:2888:3888:participant;0.0.0.0:2182\n"+
			"server.3=h3:2888:3888:observer;2183\n"+
			"server.4=h4:2888:3888\n")
	static := writeTemp(t, dir, "zoo.cfg",
		"tickTime=2000\ninitLimit=10\nsyncLimit=5\ndataDir="+dataDir+"\ndynamicConfigFile="+dyn+"\n")
	cfg, warnings, err := Load(static)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}
	if cfg.Standalone() || len(cfg.Servers) != 4 {
		t.Fatalf("Servers = %+v: want the 4 members of the dynamic file", cfg.Servers)
	}
	if cfg.ServerID != 2 || cfg.Servers[2].Role != Observer {
		t.Errorf("ServerID %d, server.3 role %v", cfg.ServerID, cfg.Servers[2].Role)
	}
	// This member's client address comes from its line, as in ZooKeeper.
	if got := cfg.ClientAddr(); got != "0.0.0.0:2182" {
		t.Errorf("ClientAddr = %q, want 0.0.0.0:2182", got)
	}
}

func TestLoadDynamicConfigFileErrors(t *testing.T) {
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	writeTemp(t, dir, "data/myid", "1\n")
	servers := "server.1=h1:2888:3888\nserver.2=h2:2888:3888\nserver.3=h3:2888:3888\n"
	good := writeTemp(t, dir, "good.dynamic", servers)
	withKey := writeTemp(t, dir, "key.dynamic", servers+"tickTime=1000\n")
	withVersion := writeTemp(t, dir, "version.dynamic", servers+"version=100000000\n")
	head := "tickTime=2000\ninitLimit=10\nsyncLimit=5\ndataDir=" + dataDir + "\n"
	tests := []struct {
		name, static, key, want string
	}{
		{"server line in the static file", head + "server.1=h1:2888:3888\ndynamicConfigFile=" + good + "\n",
			"server.1", "must be in the dynamic config file"},
		{"missing dynamic file", head + "dynamicConfigFile=" + filepath.Join(dir, "none") + "\n",
			"dynamicConfigFile", "no such file"},
		{"dynamic file is a directory", head + "dynamicConfigFile=" + dir + "\n",
			"dynamicConfigFile", "is a directory"},
		{"empty value", head + "dynamicConfigFile=\n", "dynamicConfigFile", "must name a file"},
		{"other key in the dynamic file", head + "dynamicConfigFile=" + withKey + "\n",
			"tickTime", withKey + ":4: tickTime"},
		{"version in the dynamic file", head + "dynamicConfigFile=" + withVersion + "\n",
			"version", "version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeTemp(t, t.TempDir(), "zoo.cfg", tt.static)
			_, _, err := Load(p)
			if err == nil {
				t.Fatal("Load succeeded")
			}
			wantKeyError(t, err, tt.key, tt.want)
		})
	}
}

// TestParseDynamicConfigFileRefused: Parse reads no files, so it cannot
// honour dynamicConfigFile; it must not start a standalone server instead.
func TestParseDynamicConfigFileRefused(t *testing.T) {
	_, _, err := Parse(strings.NewReader("dynamicConfigFile=/etc/zookeeper/zoo.cfg.dynamic\n"))
	wantKeyError(t, err, "dynamicConfigFile", "")
}

// TestParseJavaIntegerDecode: ZooKeeper reads jute.maxbuffer, snapCount,
// globalOutstandingLimit, znode.container.* and fsync.warningthresholdms as
// Java system properties with Integer.getInteger/Long.getLong, that is with
// Integer.decode: an optional sign, then decimal, 0x, 0X or # hex.
func TestParseJavaIntegerDecode(t *testing.T) {
	tests := []struct {
		in   string
		get  func(*Config) int64
		want int64
	}{
		{"jute.maxbuffer=#fffff", func(c *Config) int64 { return int64(c.JuteMaxBuffer) }, 0xfffff},
		{"jute.maxbuffer=+0x400000", func(c *Config) int64 { return int64(c.JuteMaxBuffer) }, 0x400000},
		{"jute.maxbuffer=+4194304", func(c *Config) int64 { return int64(c.JuteMaxBuffer) }, 4194304},
		{"jute.maxbuffer=0X10", func(c *Config) int64 { return int64(c.JuteMaxBuffer) }, 16},
		{"zookeeper.snapCount=0x186a0", func(c *Config) int64 { return int64(c.SnapCount) }, 100000},
		{"globalOutstandingLimit=#3e8", func(c *Config) int64 { return int64(c.GlobalOutstandingLimit) }, 1000},
		{"znode.container.maxPerMinute=0x10", func(c *Config) int64 { return int64(c.ContainerMaxPerMinute) }, 16},
		{"znode.container.checkIntervalMs=0x3e8", func(c *Config) int64 { return c.ContainerCheckInterval.Milliseconds() }, 1000},
		{"fsync.warningthresholdms=0x64", func(c *Config) int64 { return c.FsyncWarningThreshold.Milliseconds() }, 100},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			cfg, _ := mustParse(t, tt.in)
			if got := tt.get(cfg); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
	for _, bad := range []string{"jute.maxbuffer=#", "jute.maxbuffer=0x", "jute.maxbuffer=+-1", "jute.maxbuffer=0x-1", "jute.maxbuffer=--1", "jute.maxbuffer=# 1"} {
		t.Run(bad, func(t *testing.T) {
			_, _, err := Parse(strings.NewReader(bad))
			wantKeyError(t, err, "jute.maxbuffer", "")
		})
	}
}

// TestParseHierarchicalQuorumWarned: group.N and weight.N lines make
// ZooKeeper use hierarchical quorums; Paddock's quorum is a majority of the
// participants, so ignoring them changes which members form a quorum and
// must be said at warning level, not only listed among the ignored keys.
func TestParseHierarchicalQuorumWarned(t *testing.T) {
	cfg, warnings := mustParse(t, "group.1=1:2:3\nweight.1=1\n")
	if len(warnings) != 2 || !strings.Contains(warnings[0], "group.1 is not supported") ||
		!strings.Contains(warnings[1], "weight.1 is not supported") {
		t.Errorf("warnings = %q, want group.1 and weight.1 reported as unsupported", warnings)
	}
	if len(cfg.IgnoredKeys) != 0 {
		t.Errorf("IgnoredKeys = %q", cfg.IgnoredKeys)
	}
}
