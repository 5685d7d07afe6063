package paddocktest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/config"
)

// Defaults of Options.
const (
	DefaultMembers      = 3
	DefaultTickTime     = 200 * time.Millisecond
	DefaultStartTimeout = 30 * time.Second
)

// reservedKeys are the zoo.cfg keys paddocktest sets itself; ExtraConfig
// may not name them (server.N lines neither).
var reservedKeys = map[string]string{
	"tickTime":          "use Options.TickTime",
	"dataDir":           "use Options.DataDir",
	"dataLogDir":        "each member logs in its own data directory",
	"clientPort":        "clients reach members through Member.ClientAddr",
	"clientPortAddress": "clients reach members through Member.ClientAddr",
	"peerType":          "use Options.Observers",
}

// withDefaults returns o with its zero fields defaulted, or an error for
// values no default fixes.
func (o Options) withDefaults() (Options, error) {
	if o.Members < 0 || o.Observers < 0 {
		return o, fmt.Errorf("paddocktest: negative Members (%d) or Observers (%d)", o.Members, o.Observers)
	}
	if o.Members == 0 {
		o.Members = DefaultMembers
	}
	if n := o.Members + o.Observers; n > 255 {
		return o, fmt.Errorf("paddocktest: %d members; at most 255", n)
	}
	switch {
	case o.TickTime == 0:
		o.TickTime = DefaultTickTime
	case o.TickTime < time.Millisecond || o.TickTime%time.Millisecond != 0:
		return o, fmt.Errorf("paddocktest: TickTime %v is not a whole number of milliseconds", o.TickTime)
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	for k := range o.ExtraConfig {
		key := strings.TrimSpace(k)
		if why, ok := reservedKeys[key]; ok {
			return o, fmt.Errorf("paddocktest: ExtraConfig may not set %s: %s", key, why)
		}
		if strings.HasPrefix(key, "server.") {
			return o, fmt.Errorf("paddocktest: ExtraConfig may not set %s: the ensemble writes the server lines", key)
		}
	}
	return o, nil
}

// peerLine is one member as another member's configuration lists it.
type peerLine struct {
	id       int
	port     int // the member's own peer port, or the proxy's port for the link
	observer bool
}

// memberConfig returns the configuration of member id: a zoo.cfg written
// for it, with ExtraConfig applied through the same parser as the
// command line's overrides, so every key means what it means in zoo.cfg.
// Any warning the parser gives (an unknown key, say) is an error: a typo
// in a test's configuration should not pass unnoticed.
func memberConfig(o Options, id int, dataDir string, lines []peerLine) (*config.Config, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "tickTime=%d\n", o.TickTime.Milliseconds())
	b.WriteString("initLimit=10\nsyncLimit=5\n")
	fmt.Fprintf(&b, "dataDir=%s\n", escapeProperty(dataDir))
	b.WriteString("clientPortAddress=127.0.0.1\nclientPort=0\n")
	for _, l := range lines {
		// The election port is not used (raft elects over the quorum
		// port's streams); it only has to be valid and differ.
		fmt.Fprintf(&b, "server.%d=127.0.0.1:%d:%d", l.id, l.port, l.port%65535+1)
		if l.observer {
			b.WriteString(":observer")
		}
		b.WriteByte('\n')
	}
	keys := make([]string, 0, len(o.ExtraConfig))
	for k := range o.ExtraConfig {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	overrides := make([]config.Setting, 0, len(keys))
	for _, k := range keys {
		overrides = append(overrides, config.Setting{Key: k, Value: o.ExtraConfig[k], Source: "ExtraConfig " + k})
	}
	cfg, warnings, err := config.Parse(strings.NewReader(b.String()), overrides...)
	if err != nil {
		return nil, fmt.Errorf("paddocktest: member %d: %w", id, err)
	}
	if len(warnings) > 0 {
		return nil, fmt.Errorf("paddocktest: member %d: %s", id, strings.Join(warnings, "; "))
	}
	cfg.ServerID = int64(id)
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("paddocktest: member %d: %w", id, err)
	}
	return cfg, nil
}

// escapeProperty escapes a value for a Java properties file (backslashes,
// which Windows paths contain, would otherwise be read as escapes).
func escapeProperty(s string) string {
	return strings.ReplaceAll(s, `\`, `\\`)
}

// freePort returns a loopback port that was free a moment ago, picked
// below the ephemeral port range of Linux's default (32768 and up), so that
// no outgoing connection takes it as its local port before the member
// listens on it; port 0's pick is in that range. Another process may
// still take it: Member.start retries once.
func freePort() (int, error) {
	var err error
	for range 200 {
		port := 20000 + rand.IntN(12000)
		var ln net.Listener
		if ln, err = net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
			ln.Close()
			return port, nil
		}
	}
	return 0, err
}

func itoa(n int) string { return strconv.Itoa(n) }
