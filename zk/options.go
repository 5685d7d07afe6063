package zk

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"time"
)

// DefaultSessionTimeout is the session timeout asked for when
// WithSessionTimeout is not given. The server clamps it to its own bounds.
const DefaultSessionTimeout = 10 * time.Second

// DefaultMaxBufferSize bounds the frames the client accepts from a server.
const DefaultMaxBufferSize = 4 << 20

// Option configures Connect.
type Option func(*config)

// DialFunc opens a network connection to a server, like
// net.Dialer.DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Executor runs delivery work. The Conn calls it from its delivery goroutine,
// once per callback or event, in the order the server sent them; an executor
// that runs tasks on other goroutines takes the ordering on itself.
type Executor func(task func())

type authInfo struct {
	scheme string
	auth   []byte
}

type config struct {
	sessionTimeout time.Duration
	logger         *slog.Logger
	dial           DialFunc
	tls            *tls.Config
	auth           []authInfo
	canBeReadOnly  bool
	hostProvider   func(hosts []string) HostProvider
	defaultWatcher Watcher
	executor       Executor
	maxBufferSize  int
}

func defaultConfig() config {
	// No TCP keepalive probes, as ZooKeeper's own clients: the session's
	// pings find a dead server sooner, and turning them on costs every
	// connection four more system calls.
	d := &net.Dialer{KeepAlive: -1}
	return config{
		sessionTimeout: DefaultSessionTimeout,
		logger:         slog.New(slog.DiscardHandler),
		dial:           d.DialContext,
		hostProvider:   func(hosts []string) HostProvider { return NewStaticHostProvider(hosts) },
		maxBufferSize:  DefaultMaxBufferSize,
	}
}

// WithSessionTimeout sets the session timeout to ask the server for; the
// server answers with the timeout it grants, which Conn.SessionTimeout
// returns.
func WithSessionTimeout(d time.Duration) Option {
	return func(c *config) { c.sessionTimeout = d }
}

// WithLogger sets where the client logs connections, disconnections and
// session changes; by default it logs nothing.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithDialer sets how connections to servers are opened.
func WithDialer(dial DialFunc) Option {
	return func(c *config) {
		if dial != nil {
			c.dial = dial
		}
	}
}

// WithTLSConfig makes every connection TLS with this configuration (as
// ZooKeeper's secureClientPort expects). When ServerName is empty the host
// of the address being dialed is used, or, with a DNSHostProvider, the name
// that address was resolved from.
func WithTLSConfig(cfg *tls.Config) Option {
	return func(c *config) { c.tls = cfg }
}

// WithAuth adds credentials sent on every connection before any call, as
// addAuthInfo does; "digest" with "user:password" is ZooKeeper's built-in
// scheme.
func WithAuth(scheme string, auth []byte) Option {
	return func(c *config) {
		c.auth = append(c.auth, authInfo{scheme: scheme, auth: append([]byte(nil), auth...)})
	}
}

// WithReadOnly lets the client use servers that have lost their quorum and
// serve reads only (canBeReadOnly). The session is then in
// StateConnectedReadOnly, and the client keeps looking for a server that can
// write.
func WithReadOnly(canBeReadOnly bool) Option {
	return func(c *config) { c.canBeReadOnly = canBeReadOnly }
}

// WithHostProvider sets how the client picks servers from the connect
// string's hosts; the default is NewStaticHostProvider. Use
// NewDNSHostProvider to re-resolve names at every round.
func WithHostProvider(newProvider func(hosts []string) HostProvider) Option {
	return func(c *config) {
		if newProvider != nil {
			c.hostProvider = newProvider
		}
	}
}

// WithDefaultWatcher sets the watcher that receives every session state
// event (the Java client's default watcher).
func WithDefaultWatcher(w Watcher) Option {
	return func(c *config) { c.defaultWatcher = w }
}

// WithExecutor hands every callback and watcher invocation to exec instead of
// running it on the Conn's delivery goroutine. exec is called in the order
// the server sent replies and events; it may queue the task elsewhere, and
// then keeping order is its job.
func WithExecutor(exec Executor) Option {
	return func(c *config) { c.executor = exec }
}

// WithMaxBufferSize bounds the size of a frame the client accepts from a
// server (jute.maxbuffer on the client side); a larger frame drops the
// connection. The default is DefaultMaxBufferSize.
func WithMaxBufferSize(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxBufferSize = n
		}
	}
}
