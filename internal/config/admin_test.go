package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestParseAdminKeys sets each admin.* key Paddock handles, in both
// spellings ZooKeeper accepts, and checks the field it drives.
func TestParseAdminKeys(t *testing.T) {
	tests := []struct {
		in   string
		get  func(*Config) any
		want any
	}{
		{"", func(c *Config) any { return c.AdminEnabled }, false},
		{"", func(c *Config) any { return c.AdminAddress }, "127.0.0.1"},
		{"", func(c *Config) any { return c.AdminPort }, 8080},
		{"", func(c *Config) any { return c.AdminCommandURL }, "/commands"},
		{"", func(c *Config) any { return c.AdminIdleTimeout }, 30 * time.Second},
		{"", func(c *Config) any { return c.AdminSnapshotEnabled }, false},
		{"admin.enableServer=true", func(c *Config) any { return c.AdminEnabled }, true},
		{"admin.enableServer=FALSE", func(c *Config) any { return c.AdminEnabled }, false},
		{"zookeeper.admin.enableServer=true", func(c *Config) any { return c.AdminEnabled }, true},
		{"admin.serverAddress=0.0.0.0", func(c *Config) any { return c.AdminAddress }, "0.0.0.0"},
		{"admin.serverAddress=[::1]", func(c *Config) any { return c.AdminAddress }, "::1"},
		{"admin.serverAddress=", func(c *Config) any { return c.AdminAddress }, "127.0.0.1"}, // loopback, as ZooKeeper's Jetty binds ""
		{"admin.serverAddress=admin.example.com", func(c *Config) any { return c.AdminAddress }, "admin.example.com"},
		{"admin.serverPort=9090", func(c *Config) any { return c.AdminPort }, 9090},
		{"admin.serverPort=0", func(c *Config) any { return c.AdminPort }, 0},
		{"zookeeper.admin.serverPort=9091", func(c *Config) any { return c.AdminPort }, 9091},
		{"admin.commandURL=/zk", func(c *Config) any { return c.AdminCommandURL }, "/zk"},
		{"admin.commandURL=/zk/cmds/", func(c *Config) any { return c.AdminCommandURL }, "/zk/cmds"},
		{"admin.idleTimeout=5000", func(c *Config) any { return c.AdminIdleTimeout }, 5 * time.Second},
		{"admin.snapshot.enabled=true", func(c *Config) any { return c.AdminSnapshotEnabled }, true},
		{"zookeeper.admin.snapshot.enabled=true", func(c *Config) any { return c.AdminSnapshotEnabled }, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			cfg, warnings := mustParse(t, tt.in)
			if len(warnings) != 0 {
				t.Errorf("warnings: %q", warnings)
			}
			if got := tt.get(cfg); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			for _, k := range cfg.IgnoredKeys {
				if strings.HasPrefix(strings.TrimPrefix(k, "zookeeper."), "admin.") {
					t.Errorf("%s is listed as ignored", k)
				}
			}
		})
	}
}

// TestParseAdminErrors checks that a bad admin value is an error naming
// the key.
func TestParseAdminErrors(t *testing.T) {
	tests := []struct {
		in, key, reason string
	}{
		{"admin.enableServer=yes", "admin.enableServer", "is not true or false"},
		{"admin.serverPort=http", "admin.serverPort", "is not an integer"},
		{"admin.serverPort=65536", "admin.serverPort", "must be in [0, 65535]"},
		{"admin.serverPort=-1", "admin.serverPort", "must be in [0, 65535]"},
		{"admin.serverAddress=not a host", "admin.serverAddress", "is not a host name or IP address"},
		{"admin.commandURL=commands", "admin.commandURL", "must be a path"},
		{"admin.commandURL=/", "admin.commandURL", "must be a path"},
		{"admin.commandURL=/ready", "admin.commandURL", "must be a path"},
		{"admin.commandURL=/live", "admin.commandURL", "must be a path"},
		{"admin.idleTimeout=0", "admin.idleTimeout", "must be at least 1 ms"},
		{"admin.idleTimeout=soon", "admin.idleTimeout", "is not an integer"},
		{"admin.snapshot.enabled=1", "admin.snapshot.enabled", "is not true or false"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, _, err := Parse(strings.NewReader(tt.in))
			var ke *KeyError
			if !errors.As(err, &ke) {
				t.Fatalf("error %v, want a *KeyError", err)
			}
			if ke.Key != tt.key || !strings.Contains(ke.Reason, tt.reason) {
				t.Errorf("error %q, want key %s and reason %q", err, tt.key, tt.reason)
			}
		})
	}
}

// TestParseAdminUnsupportedKeys checks that admin keys Paddock does not
// implement (HTTPS, restore…) are warned about rather than silently
// ignored.
func TestParseAdminUnsupportedKeys(t *testing.T) {
	for _, key := range []string{"admin.portUnification", "admin.forceHttps", "admin.restore.enabled", "zookeeper.admin.needClientAuth"} {
		_, warnings := mustParse(t, key+"=true")
		if len(warnings) != 1 || !strings.Contains(warnings[0], key+" is not supported by Paddock") {
			t.Errorf("%s: warnings %q, want one saying it is not supported", key, warnings)
		}
	}
}
