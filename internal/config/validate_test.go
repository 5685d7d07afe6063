package config

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	ensemble := []Server{
		{ID: 1, Addrs: []PeerAddr{{"h1", 2888, 3888}}},
		{ID: 2, Addrs: []PeerAddr{{"h2", 2888, 3888}}},
	}
	tests := []struct {
		name   string
		mutate func(*Config)
		key    string // "" means valid
		msg    string
	}{
		{"default", func(*Config) {}, "", ""},
		{"zero tickTime", func(c *Config) { c.TickTime = 0 }, "tickTime", `config: tickTime: "0" must be at least 1 ms`},
		{"negative tickTime", func(c *Config) { c.TickTime = -time.Second }, "tickTime", `"-1000" must be at least 1 ms`},
		{"negative initLimit", func(c *Config) { c.InitLimit = -1 }, "initLimit", "must not be negative"},
		{"negative syncLimit", func(c *Config) { c.SyncLimit = -1 }, "syncLimit", "must not be negative"},
		{"zero initLimit standalone", func(c *Config) { c.InitLimit = 0 }, "", ""},
		{"zero initLimit ensemble", func(c *Config) { c.InitLimit = 0; c.Servers = ensemble }, "initLimit", "must be positive for an ensemble"},
		{"zero syncLimit ensemble", func(c *Config) { c.SyncLimit = 0; c.Servers = ensemble }, "syncLimit", "must be positive for an ensemble"},
		{"empty dataDir", func(c *Config) { c.DataDir = " " }, "dataDir", "must not be empty"},
		{"empty dataLogDir", func(c *Config) { c.DataLogDir = "" }, "dataLogDir", "must not be empty"},
		{"negative port", func(c *Config) { c.ClientPort = -1 }, "clientPort", `config: clientPort: "-1" must be in [0, 65535]`},
		{"port too large", func(c *Config) { c.ClientPort = 65536 }, "clientPort", "must be in [0, 65535]"},
		{"port zero", func(c *Config) { c.ClientPort = 0 }, "", ""},
		{"all interfaces", func(c *Config) { c.ClientPortAddress = "" }, "", ""},
		{"ipv6 address", func(c *Config) { c.ClientPortAddress = "::1" }, "", ""},
		{"bad address", func(c *Config) { c.ClientPortAddress = "127.0.0.1:2181" }, "clientPortAddress", "is not a host name or IP address"},
		{"bracketed address", func(c *Config) { c.ClientPortAddress = "[::1]" }, "clientPortAddress", "is not a host name"},
		{"zero min session", func(c *Config) { c.MinSessionTimeout = 0 }, "minSessionTimeout", "must be positive"},
		{"zero max session", func(c *Config) { c.MaxSessionTimeout = 0 }, "maxSessionTimeout", "must be positive"},
		{"min above max", func(c *Config) { c.MinSessionTimeout = time.Minute }, "minSessionTimeout",
			`config: minSessionTimeout: "60000" is larger than maxSessionTimeout 40000`},
		{"min equals max", func(c *Config) { c.MinSessionTimeout = c.MaxSessionTimeout }, "", ""},
		{"negative maxClientCnxns", func(c *Config) { c.MaxClientCnxns = -1 }, "maxClientCnxns", "must not be negative"},
		{"zero globalOutstandingLimit", func(c *Config) { c.GlobalOutstandingLimit = 0 }, "globalOutstandingLimit", "must be positive"},
		{"snapCount 1", func(c *Config) { c.SnapCount = 1 }, "snapCount", "must be at least 2"},
		{"snapRetainCount 2", func(c *Config) { c.AutopurgeSnapRetainCount = 2 }, "autopurge.snapRetainCount", "must be at least 3"},
		{"negative purge interval", func(c *Config) { c.AutopurgePurgeInterval = -time.Hour }, "autopurge.purgeInterval", `"-1" must not be negative`},
		{"zero jute.maxbuffer", func(c *Config) { c.JuteMaxBuffer = 0 }, "jute.maxbuffer", "must be positive"},
		{"good superDigest", func(c *Config) { c.SuperDigest = "super:D/InIHSb7yEEbrWz8b9l71RjZJU=" }, "", ""},
		{"superDigest without user", func(c *Config) { c.SuperDigest = ":D/InIHSb7yEEbrWz8b9l71RjZJU=" }, "DigestAuthenticationProvider.superDigest", "is not user:base64digest"},
		{"superDigest not base64", func(c *Config) { c.SuperDigest = "super:not*base64" }, "DigestAuthenticationProvider.superDigest", "base64 SHA-1"},
		{"superDigest wrong length", func(c *Config) { c.SuperDigest = "super:AAAA" }, "DigestAuthenticationProvider.superDigest", "base64 SHA-1"},
		{"zero container interval", func(c *Config) { c.ContainerCheckInterval = 0 }, "znode.container.checkIntervalMs", "must be at least 1 ms"},
		{"zero container rate", func(c *Config) { c.ContainerMaxPerMinute = 0 }, "znode.container.maxPerMinute", "must be positive"},
		{"zero handshake", func(c *Config) { c.HandshakeTimeout = 0 }, "paddock.handshake.timeoutMs", "must be at least 1 ms"},
		{"bad log format", func(c *Config) { c.LogFormat = "xml" }, "paddock.log.format", "is neither text nor json"},
		{"bad log level", func(c *Config) { c.LogLevel = slog.LevelInfo + 2 }, "paddock.log.level", "is not one of"},
		{"server id zero", func(c *Config) { c.ServerID = 0 }, "myid", "must be in [1, 255]"},
		{"server id 256", func(c *Config) { c.ServerID = 256 }, "myid", "must be in [1, 255]"},
		{"server id 255", func(c *Config) { c.ServerID = 255 }, "", ""},
		{"server id 255 with TTL nodes", func(c *Config) { c.ServerID = 255; c.ExtendedTypesEnabled = true }, "myid", "must be in [1, 254]"},
		{"ensemble", func(c *Config) { c.Servers = ensemble }, "", ""},
		{"one server line is standalone", func(c *Config) { c.ServerID = 9; c.Servers = ensemble[:1] }, "", ""},
		{"myid not listed", func(c *Config) { c.ServerID = 3; c.Servers = ensemble }, "myid", "is not one of the server.N lines"},
		{"duplicate server id", func(c *Config) { c.Servers = append(ensemble, ensemble[1]) }, "server.2", "is listed twice"},
		{"server id out of range", func(c *Config) { c.Servers = []Server{{ID: 300, Addrs: ensemble[0].Addrs}} }, "server.300", "server id must be in [1, 255]"},
		{"server without address", func(c *Config) { c.Servers = []Server{{ID: 1}} }, "server.1", "has no quorum address"},
		{"server port out of range", func(c *Config) { c.Servers = []Server{{ID: 1, Addrs: []PeerAddr{{"h", 0, 3888}}}} }, "server.1", "has a port outside"},
		{"server same ports", func(c *Config) { c.Servers = []Server{{ID: 1, Addrs: []PeerAddr{{"h", 2888, 2888}}}} }, "server.1", "same port for quorum and election"},
		{"server client port out of range", func(c *Config) {
			c.Servers = []Server{{ID: 1, Addrs: ensemble[0].Addrs, ClientHost: "0.0.0.0", ClientPort: 70000}}
		}, "server.1", "client port must be in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.mutate(c)
			err := c.Validate()
			if tt.key == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error for %s", tt.key)
			}
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Key != tt.key {
				t.Fatalf("Validate() = %v, want a *KeyError for %s", err, tt.key)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Validate() = %q, want it to contain %q", err, tt.msg)
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	c := Default()
	c.TickTime = 0
	c.ClientPort = -5
	c.LogFormat = "yaml"
	err := c.Validate()
	for _, key := range []string{"tickTime", "clientPort", "paddock.log.format"} {
		if err == nil || !strings.Contains(err.Error(), "config: "+key+": ") {
			t.Errorf("Validate() = %v, want it to name %s", err, key)
		}
	}
}

// TestParseRunsValidate checks that range errors in a file fail Parse.
func TestParseRunsValidate(t *testing.T) {
	tests := []struct{ in, key string }{
		{"tickTime=0", "tickTime"},
		{"tickTime=-2000", "tickTime"},
		{"clientPort=-1", "clientPort"},
		{"clientPort=65536", "clientPort"},
		{"minSessionTimeout=50000\nmaxSessionTimeout=40000", "minSessionTimeout"},
		{"minSessionTimeout=0", "minSessionTimeout"},
		{"minSessionTimeout=-2", "minSessionTimeout"},
		{"tickTime=3000\nminSessionTimeout=70000", "minSessionTimeout"},
		// Negative maxClientCnxns, purgeInterval, jute.maxbuffer and
		// globalOutstandingLimit are accepted, as in ZooKeeper: see
		// TestParseNonPositiveLimitsZooKeeperAccepts.
		{"clientPortAddress=not a host", "clientPortAddress"},
		{"server.1=h:2888:2888", "server.1"},
		{"server.1=h:2888:3888\nserver.2=h2:2888:3888\nserver.3=h3:2888:3888\ninitLimit=0", "initLimit"},
		{"server.2=h:2888:3888\nserver.3=h3:2888:3888", "myid"},
		{"server.1=h:2888:3888\nserver.01=h:2889:3889", "server.1"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, _, err := Parse(strings.NewReader(tt.in))
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Key != tt.key {
				t.Fatalf("Parse error = %v, want a *KeyError for %s", err, tt.key)
			}
		})
	}
}
