package config

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestParseNonPositiveLimitsZooKeeperAccepts: values ZooKeeper 3.8 starts
// with are not refused. Its connection factories limit connections per IP
// only when maxClientCnxns > 0, so a negative value means unlimited (0 here);
// a purgeInterval <= 0 schedules no purge; globalOutstandingLimit <= 0
// throttles every connection with a request in flight (1 here: the server
// takes one request at a time); snapCount and snapRetainCount are raised to
// their minimums, with a warning. jute.maxbuffer in zoo.cfg is not read by
// ZooKeeper at all, so a non-positive value leaves the default, with a
// warning.
func TestParseNonPositiveLimitsZooKeeperAccepts(t *testing.T) {
	tests := []struct {
		in       string
		get      func(*Config) any
		want     any
		wantWarn string // regexp; "" means no warning
	}{
		{"maxClientCnxns=-1", func(c *Config) any { return c.MaxClientCnxns }, 0, ""},
		{"maxClientCnxns=-2147483648", func(c *Config) any { return c.MaxClientCnxns }, 0, ""},
		{"autopurge.purgeInterval=-1", func(c *Config) any { return c.AutopurgePurgeInterval }, time.Duration(0), ""},
		{"globalOutstandingLimit=0", func(c *Config) any { return c.GlobalOutstandingLimit }, 1,
			`^line 1: globalOutstandingLimit 0 is below 1; using 1$`},
		{"zookeeper.globalOutstandingLimit=-1", func(c *Config) any { return c.GlobalOutstandingLimit }, 1,
			`^line 1: globalOutstandingLimit -1 is below 1; using 1$`},
		{"jute.maxbuffer=0", func(c *Config) any { return c.JuteMaxBuffer }, 0xfffff,
			`^line 1: jute.maxbuffer 0 is not positive; using 1048575$`},
		{"zookeeper.jute.maxbuffer=-1", func(c *Config) any { return c.JuteMaxBuffer }, 0xfffff,
			`^line 1: jute.maxbuffer -1 is not positive; using 1048575$`},
		{"snapCount=-5", func(c *Config) any { return c.SnapCount }, 2, `snapCount -5 is below 2; using 2$`},
		{"autopurge.snapRetainCount=-1", func(c *Config) any { return c.AutopurgeSnapRetainCount }, 3,
			`autopurge.snapRetainCount -1 is below 3; using 3$`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			cfg, warnings, err := Parse(strings.NewReader(tt.in))
			if err != nil {
				t.Fatalf("Parse refused what ZooKeeper accepts: %v", err)
			}
			if got := tt.get(cfg); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			switch {
			case tt.wantWarn == "" && len(warnings) != 0:
				t.Errorf("warnings %q, want none", warnings)
			case tt.wantWarn != "" && (len(warnings) != 1 || !regexp.MustCompile(tt.wantWarn).MatchString(warnings[0])):
				t.Errorf("warnings %q, want one matching %q", warnings, tt.wantWarn)
			}
		})
	}
}
