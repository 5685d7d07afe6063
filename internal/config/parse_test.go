package config

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// mustParse parses text and fails the test on error.
func mustParse(t *testing.T, text string, overrides ...Setting) (*Config, []string) {
	t.Helper()
	cfg, warnings, err := Parse(strings.NewReader(text), overrides...)
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	return cfg, warnings
}

// wantKeyError fails the test unless err is a *KeyError for key whose
// text contains substr.
func wantKeyError(t *testing.T, err error, key, substr string) {
	t.Helper()
	var ke *KeyError
	if !errors.As(err, &ke) || ke.Key != key {
		t.Fatalf("error %v: want a *KeyError for %q", err, key)
	}
	if !strings.Contains(err.Error(), substr) {
		t.Errorf("error %q does not contain %q", err, substr)
	}
}

// TestParseKeys sets each handled key and checks the field it drives.
func TestParseKeys(t *testing.T) {
	const digest = "super:D/InIHSb7yEEbrWz8b9l71RjZJU="
	tests := []struct {
		in   string
		get  func(*Config) any
		want any
	}{
		{"tickTime=3000", func(c *Config) any { return c.TickTime }, 3 * time.Second},
		{"initLimit=7", func(c *Config) any { return c.InitLimit }, 7},
		{"syncLimit=3", func(c *Config) any { return c.SyncLimit }, 3},
		{"dataDir=/var/lib/zk", func(c *Config) any { return c.DataDir }, "/var/lib/zk"},
		{"dataDir=/var/lib/zk", func(c *Config) any { return c.DataLogDir }, "/var/lib/zk"},
		{"dataLogDir=/fast/log", func(c *Config) any { return c.DataLogDir }, "/fast/log"},
		{"dataLogDir=/fast/log", func(c *Config) any { return c.DataDir }, "./paddock-data"},
		{"clientPort=2281", func(c *Config) any { return c.ClientPort }, 2281},
		{"clientPort=0", func(c *Config) any { return c.ClientPort }, 0},
		{"clientPort=2181\nclientPortAddress=10.0.0.1", func(c *Config) any { return c.ClientPortAddress }, "10.0.0.1"},
		{"clientPort=2181\nclientPortAddress=[::1]", func(c *Config) any { return c.ClientPortAddress }, "::1"},
		{"clientPort=2181\nclientPortAddress=zk1.example.com", func(c *Config) any { return c.ClientPortAddress }, "zk1.example.com"},
		{"minSessionTimeout=1000", func(c *Config) any { return c.MinSessionTimeout }, time.Second},
		{"maxSessionTimeout=90000", func(c *Config) any { return c.MaxSessionTimeout }, 90 * time.Second},
		{"maxClientCnxns=0", func(c *Config) any { return c.MaxClientCnxns }, 0},
		{"maxClientCnxns=500", func(c *Config) any { return c.MaxClientCnxns }, 500},
		{"globalOutstandingLimit=20", func(c *Config) any { return c.GlobalOutstandingLimit }, 20},
		{"zookeeper.globalOutstandingLimit=21", func(c *Config) any { return c.GlobalOutstandingLimit }, 21},
		{"snapCount=5000", func(c *Config) any { return c.SnapCount }, 5000},
		{"zookeeper.snapCount=5001", func(c *Config) any { return c.SnapCount }, 5001},
		{"autopurge.snapRetainCount=7", func(c *Config) any { return c.AutopurgeSnapRetainCount }, 7},
		{"paddock.snapLogPercent=50", func(c *Config) any { return c.SnapLogPercent }, 50},
		{"paddock.snapLogPercent=0", func(c *Config) any { return c.SnapLogPercent }, 0},
		{"paddock.gcHeadroomMB=16", func(c *Config) any { return c.GCHeadroom }, uint64(16 << 20)},
		{"paddock.gcHeadroomMB=0", func(c *Config) any { return c.GCHeadroom }, uint64(0)},
		{"tickTime=2000", func(c *Config) any { return c.GCHeadroom }, uint64(64 << 20)},
		{"tickTime=2000", func(c *Config) any { return c.SnapLogPercent }, 25},
		{"autopurge.purgeInterval=24", func(c *Config) any { return c.AutopurgePurgeInterval }, 24 * time.Hour},
		{"autopurge.purgeInterval=0", func(c *Config) any { return c.AutopurgePurgeInterval }, time.Duration(0)},
		{"4lw.commands.whitelist=ruok, mntr", func(c *Config) any { return c.FourLetterWords.String() }, "mntr,ruok,srvr"},
		{"zookeeper.4lw.commands.whitelist=*", func(c *Config) any { return c.FourLetterWords.All() }, true},
		{"jute.maxbuffer=4194304", func(c *Config) any { return c.JuteMaxBuffer }, 4194304},
		{"jute.maxbuffer=0x3fffff", func(c *Config) any { return c.JuteMaxBuffer }, 0x3fffff},
		{"zookeeper.jute.maxbuffer=0XFF", func(c *Config) any { return c.JuteMaxBuffer }, 255},
		{"extendedTypesEnabled=true", func(c *Config) any { return c.ExtendedTypesEnabled }, true},
		{"zookeeper.extendedTypesEnabled=TRUE", func(c *Config) any { return c.ExtendedTypesEnabled }, true},
		{"extendedTypesEnabled=false", func(c *Config) any { return c.ExtendedTypesEnabled }, false},
		{"enforceQuota=true", func(c *Config) any { return c.EnforceQuota }, true},
		{"zookeeper.enforceQuota=True", func(c *Config) any { return c.EnforceQuota }, true},
		{"enforceQuota=false", func(c *Config) any { return c.EnforceQuota }, false},
		{"clientTcpKeepAlive=true", func(c *Config) any { return c.ClientTCPKeepAlive }, true},
		{"zookeeper.clientTcpKeepAlive=true", func(c *Config) any { return c.ClientTCPKeepAlive }, true},
		{"quorumListenOnAllIPs=true", func(c *Config) any { return c.QuorumListenOnAllIPs }, true},
		{"DigestAuthenticationProvider.superDigest=" + digest, func(c *Config) any { return c.SuperDigest }, digest},
		{"zookeeper.DigestAuthenticationProvider.superDigest=" + digest, func(c *Config) any { return c.SuperDigest }, digest},
		{"znode.container.checkIntervalMs=5000", func(c *Config) any { return c.ContainerCheckInterval }, 5 * time.Second},
		{"zookeeper.znode.container.checkIntervalMs=6000", func(c *Config) any { return c.ContainerCheckInterval }, 6 * time.Second},
		{"znode.container.maxPerMinute=100", func(c *Config) any { return c.ContainerMaxPerMinute }, 100},
		{"zookeeper.znode.container.maxPerMinute=101", func(c *Config) any { return c.ContainerMaxPerMinute }, 101},
		{"paddock.handshake.timeoutMs=2500", func(c *Config) any { return c.HandshakeTimeout }, 2500 * time.Millisecond},
		{"paddock.log.format=json", func(c *Config) any { return c.LogFormat }, LogFormatJSON},
		{"paddock.log.format=TEXT", func(c *Config) any { return c.LogFormat }, LogFormatText},
		{"paddock.log.level=debug", func(c *Config) any { return c.LogLevel }, slog.LevelDebug},
		{"paddock.log.level=Warn", func(c *Config) any { return c.LogLevel }, slog.LevelWarn},
		{"paddock.log.level=warning", func(c *Config) any { return c.LogLevel }, slog.LevelWarn},
		{"paddock.log.level=INFO", func(c *Config) any { return c.LogLevel }, slog.LevelInfo},
		{"paddock.log.level=error", func(c *Config) any { return c.LogLevel }, slog.LevelError},
		{"server.1=127.0.0.1:2888:3888", func(c *Config) any { return c.Servers },
			[]Server{{ID: 1, Addrs: []PeerAddr{{"127.0.0.1", 2888, 3888}}}}},
		// Java properties syntax variants and ZooKeeper's trimming.
		{"tickTime: 4000", func(c *Config) any { return c.TickTime }, 4 * time.Second},
		{"tickTime 5000", func(c *Config) any { return c.TickTime }, 5 * time.Second},
		{"  tickTime = 6000   ", func(c *Config) any { return c.TickTime }, 6 * time.Second},
		{"tickTime=+7000", func(c *Config) any { return c.TickTime }, 7 * time.Second},
		{"tick\\\n  Time=8000", func(c *Config) any { return c.TickTime }, 8 * time.Second},
		{"dataDir=/path\\ with\\ spaces", func(c *Config) any { return c.DataDir }, "/path with spaces"},
		{"dataDir=C:\\\\zk\\\\data", func(c *Config) any { return c.DataDir }, `C:\zk\data`},
		{"tickTime=1000\ntickTime=9000", func(c *Config) any { return c.TickTime }, 9 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			cfg, warnings := mustParse(t, tt.in)
			if got := tt.get(cfg); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if len(warnings) > 0 && !strings.Contains(tt.in, "\ntickTime") {
				t.Errorf("unexpected warnings %q", warnings)
			}
			if len(cfg.IgnoredKeys) > 0 {
				t.Errorf("handled key listed as ignored: %q", cfg.IgnoredKeys)
			}
		})
	}
}

func TestParseDefaultsMatchDefault(t *testing.T) {
	cfg, warnings := mustParse(t, "")
	if len(warnings) != 0 {
		t.Errorf("warnings for an empty file: %q", warnings)
	}
	if !reflect.DeepEqual(cfg, Default()) {
		t.Errorf("empty file:\n got %+v\nwant %+v", cfg, Default())
	}
	def := Default()
	if err := def.Validate(); err != nil {
		t.Errorf("Default().Validate() = %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"tickTime", def.TickTime, 2 * time.Second},
		{"clientAddr", def.ClientAddr(), "127.0.0.1:2181"},
		{"dataDir", def.DataDir, "./paddock-data"},
		{"dataLogDir", def.DataLogDir, def.DataDir},
		{"minSessionTimeout", def.MinSessionTimeout, 4 * time.Second},
		{"maxSessionTimeout", def.MaxSessionTimeout, 40 * time.Second},
		{"maxClientCnxns", def.MaxClientCnxns, 60},
		{"globalOutstandingLimit", def.GlobalOutstandingLimit, 1000},
		{"snapCount", def.SnapCount, 100000},
		{"snapRetainCount", def.AutopurgeSnapRetainCount, 3},
		{"purgeInterval", def.AutopurgePurgeInterval, time.Duration(0)},
		{"4lw", def.FourLetterWords.String(), "srvr"},
		{"jute.maxbuffer", def.JuteMaxBuffer, 1048575},
		{"extendedTypes", def.ExtendedTypesEnabled, false},
		{"enforceQuota", def.EnforceQuota, false},
		{"superDigest", def.SuperDigest, ""},
		{"checkInterval", def.ContainerCheckInterval, time.Minute},
		{"maxPerMinute", def.ContainerMaxPerMinute, 10000},
		{"serverID", def.ServerID, int64(1)},
		{"standalone", def.Standalone(), true},
		{"handshake", def.HandshakeTimeout, 10 * time.Second},
		{"logFormat", def.LogFormat, "text"},
		{"logLevel", def.LogLevel, slog.LevelInfo},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("default %s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestParseDerivedSessionTimeouts(t *testing.T) {
	tests := []struct {
		in       string
		min, max time.Duration
	}{
		{"tickTime=3000", 6 * time.Second, 60 * time.Second},
		{"tickTime=100", 200 * time.Millisecond, 2 * time.Second},
		{"tickTime=3000\nminSessionTimeout=-1\nmaxSessionTimeout=-1", 6 * time.Second, 60 * time.Second},
		{"tickTime=3000\nminSessionTimeout=1000", time.Second, 60 * time.Second},
		{"tickTime=3000\nmaxSessionTimeout=7000", 6 * time.Second, 7 * time.Second},
		// Derivation happens after all lines, whatever their order.
		{"minSessionTimeout=-1\ntickTime=500", time.Second, 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			cfg, _ := mustParse(t, tt.in)
			if cfg.MinSessionTimeout != tt.min || cfg.MaxSessionTimeout != tt.max {
				t.Errorf("got [%v, %v], want [%v, %v]", cfg.MinSessionTimeout, cfg.MaxSessionTimeout, tt.min, tt.max)
			}
		})
	}
}

func TestParseClientAddressAndOverrides(t *testing.T) {
	port := func(p string) Setting { return Setting{Key: "clientPort", Value: p, Source: "flag --port"} }
	addr := func(a string) Setting { return Setting{Key: "clientPortAddress", Value: a, Source: "flag --address"} }
	dir := func(d string) Setting { return Setting{Key: "dataDir", Value: d, Source: "flag --data-dir"} }
	tests := []struct {
		name      string
		file      string
		overrides []Setting
		wantAddr  string
		wantDir   string
		wantLog   string
	}{
		{"no file", "", nil, "127.0.0.1:2181", "./paddock-data", "./paddock-data"},
		{"no file, port flag keeps loopback", "", []Setting{port("2400")}, "127.0.0.1:2400", "./paddock-data", "./paddock-data"},
		{"file clientPort binds all interfaces", "clientPort=2181", nil, ":2181", "./paddock-data", "./paddock-data"},
		{"file clientPort and address", "clientPort=2181\nclientPortAddress=127.0.0.2", nil, "127.0.0.2:2181", "./paddock-data", "./paddock-data"},
		{"file without clientPort keeps loopback", "tickTime=2000", nil, "127.0.0.1:2181", "./paddock-data", "./paddock-data"},
		{"flag address wins over file rule", "clientPort=2181", []Setting{addr("127.0.0.1")}, "127.0.0.1:2181", "./paddock-data", "./paddock-data"},
		{"flag port wins over file port", "clientPort=2181\nclientPortAddress=::1", []Setting{port("0")}, "[::1]:0", "./paddock-data", "./paddock-data"},
		{"flag dataDir moves derived dataLogDir", "dataDir=/a", []Setting{dir("/b")}, "127.0.0.1:2181", "/b", "/b"},
		{"flag dataDir keeps explicit dataLogDir", "dataDir=/a\ndataLogDir=/l", []Setting{dir("/b")}, "127.0.0.1:2181", "/b", "/l"},
		{"last override wins", "", []Setting{port("1"), port("2")}, "127.0.0.1:2", "./paddock-data", "./paddock-data"},
		{"client address from own server line", "server.1=h:2888:3888;127.0.0.3:2190\nserver.2=h2:2888:3888;2191", nil,
			"127.0.0.3:2190", "./paddock-data", "./paddock-data"},
		{"own server line with port only", "server.1=h:2888:3888;2190", nil, "0.0.0.0:2190", "./paddock-data", "./paddock-data"},
		{"flags win over own server line", "server.1=h:2888:3888;127.0.0.3:2190", []Setting{port("0")},
			"127.0.0.3:0", "./paddock-data", "./paddock-data"},
		{"clientPort wins over own server line", "clientPort=2200\nserver.1=h:2888:3888;127.0.0.3:2190", nil,
			":2200", "./paddock-data", "./paddock-data"},
		{"file address with flag port", "clientPortAddress=127.0.0.2", []Setting{port("2300")},
			"127.0.0.2:2300", "./paddock-data", "./paddock-data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, warnings := mustParse(t, tt.file, tt.overrides...)
			if len(warnings) != 0 {
				t.Errorf("warnings: %q", warnings)
			}
			if got := cfg.ClientAddr(); got != tt.wantAddr {
				t.Errorf("ClientAddr() = %q, want %q", got, tt.wantAddr)
			}
			if cfg.DataDir != tt.wantDir || cfg.DataLogDir != tt.wantLog {
				t.Errorf("dirs = %q, %q; want %q, %q", cfg.DataDir, cfg.DataLogDir, tt.wantDir, tt.wantLog)
			}
		})
	}
}

// TestParseErrors checks that malformed values fail naming key, value and line.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		in      string
		key     string
		wantMsg string
	}{
		{"tickTime=abc", "tickTime", `config: line 1: tickTime: "abc" is not an integer`},
		{"# c\ninitLimit=1.5", "initLimit", `config: line 2: initLimit: "1.5" is not an integer`},
		{"syncLimit=", "syncLimit", `config: line 1: syncLimit: is not an integer`},
		{"clientPort=99999999999", "clientPort", `clientPort: "99999999999" is out of range for a 32-bit integer`},
		{"minSessionTimeout=x", "minSessionTimeout", `minSessionTimeout: "x" is not an integer`},
		{"maxSessionTimeout=1e3", "maxSessionTimeout", `maxSessionTimeout: "1e3" is not an integer`},
		{"maxClientCnxns=sixty", "maxClientCnxns", `"sixty" is not an integer`},
		{"globalOutstandingLimit=1_000", "globalOutstandingLimit", `"1_000" is not an integer`},
		{"zookeeper.snapCount=lots", "zookeeper.snapCount", `zookeeper.snapCount: "lots" is not an integer`},
		{"paddock.snapLogPercent=-1", "paddock.snapLogPercent", `must not be negative`},
		{"paddock.gcHeadroomMB=-1", "paddock.gcHeadroomMB", `must not be negative`},
		{"paddock.gcHeadroomMB=lots", "paddock.gcHeadroomMB", `"lots" is not an integer`},
		{"paddock.snapLogPercent=half", "paddock.snapLogPercent", `"half" is not an integer`},
		{"autopurge.snapRetainCount=three", "autopurge.snapRetainCount", `is not an integer`},
		{"autopurge.purgeInterval=1h", "autopurge.purgeInterval", `"1h" is not an integer`},
		{"jute.maxbuffer=0xZZ", "jute.maxbuffer", `"0xZZ" is not an integer`},
		{"jute.maxbuffer=0x1ffffffff", "jute.maxbuffer", `is out of range for a 32-bit integer`},
		{"autopurge.purgeInterval=2147483647", "autopurge.purgeInterval", `"2147483647" is too many hours`},
		{"extendedTypesEnabled=yes", "extendedTypesEnabled", `"yes" is not true or false`},
		{"enforceQuota=1", "enforceQuota", `"1" is not true or false`},
		{"DigestAuthenticationProvider.superDigest=nocolon", "DigestAuthenticationProvider.superDigest", `is not user:base64digest`},
		{"DigestAuthenticationProvider.superDigest=u:short", "DigestAuthenticationProvider.superDigest", `does not end in a base64 SHA-1 digest`},
		{"znode.container.checkIntervalMs=soon", "znode.container.checkIntervalMs", `is not an integer`},
		{"znode.container.maxPerMinute=many", "znode.container.maxPerMinute", `is not an integer`},
		{"paddock.handshake.timeoutMs=10s", "paddock.handshake.timeoutMs", `"10s" is not an integer`},
		{"paddock.log.format=xml", "paddock.log.format", `"xml" is neither text nor json`},
		{"paddock.log.level=trace", "paddock.log.level", `"trace" is not one of debug, info, warn, error`},
		{"server.x=h:1:2", "server.x", `server id "x" is not a number`},
		{"server.1=h:1", "server.1", `does not have the form`},
		{"server.1=h:a:2", "server.1", `quorum port "a" is not a number`},
		{"server.1=h:1:b", "server.1", `election port "b" is not a number`},
		{"server.1=h:1:2:leader", "server.1", `role "leader" is neither participant nor observer`},
		{"server.1=h:1:2;p", "server.1", `client port "p" is not a number`},
		{"server.1=h:1:2;a:b:c", "server.1", `client address "a:b:c" is not [host:]port`},
		{"server.1=h:1:2;3;4", "server.1", `does not have the form`},
		{"server.1=[::1:1:2", "server.1", `does not have the form`},
		{"server.1=h:1:2:observer|g:3:4:participant", "server.1", `different roles`},
		// ZooKeeper's QuorumPeerConfig refuses these too.
		{"clientPortAddress=127.0.0.1", "clientPortAddress", `config: line 1: clientPortAddress: "127.0.0.1" is set but clientPort is not`},
		{"server.1=h:1:2\nserver.2=h:3:4:observer\nserver.3=h:5:6:observer", "server.2", `only one server.N line is a participant`},
		{"server.1=h:1:2:observer", "server.1", `no server.N line is a participant`},
		{"server.1=h:1:2:observer\nserver.2=h:3:4:observer", "server.1", `no server.N line is a participant`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, _, err := Parse(strings.NewReader(tt.in))
			if err == nil {
				t.Fatal("Parse succeeded")
			}
			wantKeyError(t, err, tt.key, tt.wantMsg)
		})
	}
}

func TestParseSyntaxError(t *testing.T) {
	_, _, err := Parse(strings.NewReader("tickTime=2000\ndataDir=\\u00"))
	const want = `config: zoo.cfg: line 2: malformed \uxxxx escape`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

func TestParseOverrideErrorNamesSource(t *testing.T) {
	_, _, err := Parse(strings.NewReader("clientPort=2181"), Setting{Key: "clientPort", Value: "http", Source: "flag --port"})
	const want = `config: flag --port: clientPort: "http" is not an integer`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

func TestParseWarnings(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		wantWarn    []string // regexps, one per warning, in order
		wantIgnored []string
		check       func(*Config) bool
	}{
		{"unknown key", "tickTime=2000\nfrobnicate=1", []string{`^line 2: unknown key "frobnicate" ignored$`}, nil, nil},
		{"unknown paddock key", "paddock.colour=blue", []string{`unknown key "paddock.colour"`}, nil, nil},
		{"unknown zookeeper-prefixed key", "zookeeper.tickTime=5", []string{`unknown key "zookeeper.tickTime"`},
			nil, func(c *Config) bool { return c.TickTime == 2*time.Second }},
		{"ignored keys", "preAllocSize=65536\nforceSync=no\nmetricsProvider.numWorkerThreads=1\nstandaloneEnabled=true\nzookeeper.snapshot.trust.empty=true",
			nil, []string{"forceSync", "metricsProvider.numWorkerThreads", "preAllocSize", "standaloneEnabled", "zookeeper.snapshot.trust.empty"}, nil},
		{"unsupported keys", "secureClientPort=2281\nskipACL=yes\nssl.keyStore.location=/k",
			[]string{`^line 1: secureClientPort is not supported by Paddock; ignored$`, `^line 2: skipACL is not supported`, `^line 3: ssl.keyStore.location is not supported`}, nil, nil},
		{"snapRetainCount clamped", "autopurge.snapRetainCount=1", []string{`^line 1: autopurge.snapRetainCount 1 is below 3; using 3$`},
			nil, func(c *Config) bool { return c.AutopurgeSnapRetainCount == 3 }},
		{"snapCount clamped", "snapCount=1", []string{`snapCount 1 is below 2; using 2`},
			nil, func(c *Config) bool { return c.SnapCount == 2 }},
		{"repeated key", "tickTime=1000\ntickTime=3000", []string{`^line 2: tickTime is set again; the value from line 1 is replaced$`},
			nil, func(c *Config) bool { return c.TickTime == 3*time.Second }},
		{"repeated key across spellings", "snapCount=10\nzookeeper.snapCount=20", []string{`^line 2: zookeeper.snapCount is set again`},
			nil, func(c *Config) bool { return c.SnapCount == 20 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, warnings := mustParse(t, tt.in)
			if len(warnings) != len(tt.wantWarn) {
				t.Fatalf("got warnings %q, want %d matching %q", warnings, len(tt.wantWarn), tt.wantWarn)
			}
			for i, re := range tt.wantWarn {
				if !regexp.MustCompile(re).MatchString(warnings[i]) {
					t.Errorf("warning %d %q does not match %q", i, warnings[i], re)
				}
			}
			if !slices.Equal(cfg.IgnoredKeys, tt.wantIgnored) {
				t.Errorf("IgnoredKeys = %q, want %q", cfg.IgnoredKeys, tt.wantIgnored)
			}
			if tt.check != nil && !tt.check(cfg) {
				t.Errorf("config check failed: %+v", cfg)
			}
		})
	}
}

// TestParseZooKeeperSamples parses ZooKeeper's own sample config unchanged,
// then again with its commented-out settings enabled.
func TestParseZooKeeperSamples(t *testing.T) {
	data, err := os.ReadFile("testdata/zoo_sample.cfg")
	if err != nil {
		t.Fatal(err)
	}
	uncomment := regexp.MustCompile(`(?m)^#([A-Za-z][A-Za-z0-9.]*=)`)
	enabled := uncomment.ReplaceAllString(string(data), "$1")
	if enabled == string(data) {
		t.Fatal("sample has no commented-out settings to enable")
	}
	tests := []struct {
		name        string
		text        string
		wantIgnored []string
		wantCnxns   int
		wantPurge   time.Duration
	}{
		{"as shipped", string(data), nil, 60, 0},
		{"settings enabled", enabled, nil, 60, time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, warnings, err := Parse(strings.NewReader(tt.text))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if len(warnings) != 0 {
				t.Errorf("warnings: %q", warnings)
			}
			want := Default()
			want.DataDir, want.DataLogDir = "/tmp/zookeeper", "/tmp/zookeeper"
			want.ClientPortAddress = "" // clientPort without clientPortAddress
			want.MaxClientCnxns = tt.wantCnxns
			want.AutopurgePurgeInterval = tt.wantPurge
			want.IgnoredKeys = tt.wantIgnored
			if tt.text == enabled { // the sample's Prometheus settings
				want.MetricsEnabled, want.MetricsHost = true, "0.0.0.0"
			}
			if !reflect.DeepEqual(cfg, want) {
				t.Errorf("got  %+v\nwant %+v", cfg, want)
			}
		})
	}
}

func TestParseEnsemble(t *testing.T) {
	f, err := os.Open("testdata/ensemble.cfg")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, warnings, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}
	want := []Server{
		{ID: 1, Addrs: []PeerAddr{{"zk1.example.com", 2888, 3888}}},
		{ID: 2, Addrs: []PeerAddr{{"10.0.0.2", 2888, 3888}}, ClientHost: "0.0.0.0", ClientPort: 2181},
		{ID: 3, Addrs: []PeerAddr{{"fe80::3", 2888, 3888}}, ClientHost: "10.1.0.3", ClientPort: 2182},
		{ID: 4, Addrs: []PeerAddr{{"10.0.0.4", 2888, 3888}, {"10.9.0.4", 2889, 3889}}, Role: Observer},
	}
	if !reflect.DeepEqual(cfg.Servers, want) {
		t.Errorf("Servers:\n got %+v\nwant %+v", cfg.Servers, want)
	}
	if cfg.Standalone() {
		t.Error("Standalone() = true for four servers")
	}
	if slices.Contains(cfg.IgnoredKeys, "peerType") {
		t.Errorf("IgnoredKeys %q lists peerType, which Paddock reads", cfg.IgnoredKeys)
	}
	if cfg.PeerType != Participant || cfg.Role() != Participant {
		t.Errorf("PeerType %v, Role %v for server 1 (a participant)", cfg.PeerType, cfg.Role())
	}
	cfg.ServerID = 4
	if cfg.Role() != Observer {
		t.Errorf("Role() = %v for server 4, an observer", cfg.Role())
	}
}

// TestParsePeerType checks ZooKeeper's setupPeerType: the server.N lines
// decide this server's role, and a peerType that disagrees is a warning.
func TestParsePeerType(t *testing.T) {
	const lines = "server.1=h1:2888:3888\nserver.2=h2:2888:3888\nserver.3=h3:2888:3888:observer\n"
	tests := []struct {
		name     string
		text     string
		id       int64
		want     Role
		wantWarn string
	}{
		{"participant line", lines, 1, Participant, ""},
		{"observer line", lines, 3, Observer, ""},
		{"observer line and peerType", lines + "peerType=observer\n", 3, Observer, ""},
		{"peerType observer on a participant line", lines + "peerType=observer\n", 1, Participant,
			"cfg:5: peerType observer does not match this server's role in the server.N lines (participant, server id 1); using the server.N lines"},
		{"peerType participant on an observer line", lines + "peerType=participant\n", 3, Observer,
			"cfg:5: peerType participant does not match this server's role in the server.N lines (observer, server id 3)"},
		{"standalone peerType observer", "peerType=observer\n", 1, Participant, "peerType observer does not match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "myid"), []byte(strconv.FormatInt(tt.id, 10)), 0o644); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "zoo.cfg")
			if err := os.WriteFile(path, []byte("dataDir="+dir+"\n"+tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, warnings, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Role() != tt.want || cfg.PeerType != tt.want {
				t.Errorf("Role() = %v, PeerType = %v; want %v", cfg.Role(), cfg.PeerType, tt.want)
			}
			switch {
			case tt.wantWarn == "" && len(warnings) > 0:
				t.Errorf("unexpected warnings %q", warnings)
			case tt.wantWarn != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], tt.wantWarn)):
				t.Errorf("warnings = %q, want one containing %q", warnings, tt.wantWarn)
			}
		})
	}
}

func TestRaftTiming(t *testing.T) {
	for _, tc := range []struct {
		tick, election, heartbeat time.Duration
		wantE, wantH              time.Duration
	}{
		{2000 * time.Millisecond, 0, 0, 500 * time.Millisecond, 50 * time.Millisecond},
		{200 * time.Millisecond, 0, 0, 100 * time.Millisecond, 10 * time.Millisecond},
		{2000 * time.Millisecond, 300 * time.Millisecond, 0, 300 * time.Millisecond, 30 * time.Millisecond},
		{2000 * time.Millisecond, 300 * time.Millisecond, 100 * time.Millisecond, 300 * time.Millisecond, 100 * time.Millisecond},
	} {
		c := Default()
		c.TickTime, c.RaftElectionTimeout, c.RaftHeartbeat = tc.tick, tc.election, tc.heartbeat
		if e, h := c.RaftTiming(); e != tc.wantE || h != tc.wantH {
			t.Errorf("tick %v election %v heartbeat %v: RaftTiming() = %v, %v; want %v, %v",
				tc.tick, tc.election, tc.heartbeat, e, h, tc.wantE, tc.wantH)
		}
	}
	c := Default()
	c.RaftElectionTimeout, c.RaftHeartbeat = 100*time.Millisecond, 200*time.Millisecond
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "paddock.raft.electionTimeoutMs") {
		t.Errorf("Validate with election below heartbeat = %v", err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
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
	dataWithID := filepath.Join(dir, "with-id")
	write("with-id/myid", "3\n")
	dataBadID := filepath.Join(dir, "bad-id")
	write("bad-id/myid", "replace this text\n")
	ensemble := "server.1=h1:2888:3888\nserver.2=h2:2888:3888\nserver.3=h3:2888:3888\n"

	tests := []struct {
		name      string
		path      string
		overrides []Setting
		wantID    int64
		wantErr   string
		wantWarn  string
	}{
		{"no file", "", nil, 1, "", ""},
		{"missing file", filepath.Join(dir, "nope.cfg"), nil, 0, "nope.cfg: no such file", ""},
		{"no myid", write("a.cfg", "dataDir="+filepath.Join(dir, "empty")), nil, 1, "", ""},
		{"myid read", write("b.cfg", "dataDir="+dataWithID+"\n"+ensemble), nil, 3, "", ""},
		{"myid follows data-dir flag", write("c.cfg", ensemble), []Setting{{Key: "dataDir", Value: dataWithID}}, 3, "", ""},
		{"bad myid in ensemble", write("d.cfg", "dataDir="+dataBadID+"\n"+ensemble), nil, 0,
			`config: ` + filepath.Join(dataBadID, "myid") + `: myid: "replace this text" is not a number`, ""},
		{"bad myid standalone is a warning", write("d2.cfg", "dataDir="+dataBadID), nil, 1, "",
			`myid: "replace this text" is not a number; standalone, so using server id 1`},
		{"no myid in ensemble", write("g.cfg", "dataDir="+filepath.Join(dir, "empty")+"\n"+ensemble), nil, 0,
			`config: ` + filepath.Join(dir, "empty", "myid") + `: myid: file is missing`, ""},
		{"myid not in ensemble", write("e.cfg", "dataDir="+dataWithID+"\nserver.1=h1:2888:3888\nserver.2=h2:2888:3888"), nil, 0,
			`config: myid: "3" is not one of the server.N lines`, ""},
		{"error names file and line", write("f.cfg", "# x\ntickTime=soon"), nil, 0, `f.cfg:2: tickTime: "soon" is not an integer`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, warnings, err := Load(tt.path, tt.overrides...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.ServerID != tt.wantID {
				t.Errorf("ServerID = %d, want %d", cfg.ServerID, tt.wantID)
			}
			if tt.wantWarn == "" && len(warnings) > 0 {
				t.Errorf("unexpected warnings %q", warnings)
			}
			if tt.wantWarn != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], tt.wantWarn)) {
				t.Errorf("warnings = %q, want one containing %q", warnings, tt.wantWarn)
			}
		})
	}
}

func TestLoadWarningsNameFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "zoo.cfg")
	if err := os.WriteFile(p, []byte("clientPort=2181\nmystery=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, warnings, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{p + `:2: unknown key "mystery" ignored`}
	if !slices.Equal(warnings, want) {
		t.Errorf("warnings = %q, want %q", warnings, want)
	}
}

// TestParseDockerConfig parses the zoo.cfg the official zookeeper Docker
// image writes for a single node.
func TestParseDockerConfig(t *testing.T) {
	f, err := os.Open("testdata/docker_zoo.cfg")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, warnings, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"standalone", cfg.Standalone(), true},
		{"dataDir", cfg.DataDir, "/data"},
		{"dataLogDir", cfg.DataLogDir, "/datalog"},
		{"initLimit", cfg.InitLimit, 5},
		{"syncLimit", cfg.SyncLimit, 2},
		{"clientAddr from server.1", cfg.ClientAddr(), "0.0.0.0:2181"},
		{"server client port", cfg.Servers[0].ClientPort, 2181},
		{"ignored", cfg.IgnoredKeys, []string{"standaloneEnabled"}},
		{"admin server on", cfg.AdminEnabled, true},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}
