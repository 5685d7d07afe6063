package config

import (
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Log formats accepted by paddock.log.format.
const (
	LogFormatText = "text"
	LogFormatJSON = "json"
)

const (
	maxServerID = 255
	// maxExtendedServerID is the largest server id when extended types (TTL
	// nodes) are enabled: their ephemeralOwner uses the top byte 0xFF.
	maxExtendedServerID = 254
	minSnapRetainCount  = 3
	minSnapCount        = 2
	// defaultJuteMaxBuffer is ZooKeeper's jute.maxbuffer default.
	defaultJuteMaxBuffer = 0xfffff
)

// Config is a Paddock server's configuration. Durations given in zoo.cfg in
// milliseconds (or hours, for autopurge.purgeInterval) are converted to
// time.Duration. The zoo.cfg key of each field is named in its comment.
type Config struct {
	// TickTime is ZooKeeper's base time unit (tickTime, ms). Default 2000 ms.
	TickTime time.Duration
	// InitLimit and SyncLimit are in ticks (initLimit, syncLimit): how long a
	// follower may take to connect and sync, and how far it may lag. Kept
	// for the ensemble. Defaults 10 and 5, the sample values.
	InitLimit int
	SyncLimit int

	// DataDir holds snapshots and the myid file (dataDir). Default
	// "./paddock-data".
	DataDir string
	// DataLogDir holds the transaction log (dataLogDir). Defaults to DataDir.
	DataLogDir string

	// ClientPort is the client listener's port (clientPort). Default 2181;
	// 0 picks a free port.
	ClientPort int
	// ClientPortAddress is the client listener's host (clientPortAddress);
	// "" means all interfaces. Default "127.0.0.1" without a zoo.cfg; a
	// zoo.cfg that sets clientPort but not clientPortAddress gets "", as in
	// ZooKeeper.
	ClientPortAddress string

	// MinSessionTimeout and MaxSessionTimeout bound the session timeout a
	// client may negotiate (minSessionTimeout, maxSessionTimeout, ms). When
	// unset (or -1) in zoo.cfg they are 2 and 20 ticks. Parse derives them;
	// code that changes TickTime on a Config must set them too.
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration

	// MaxClientCnxns limits concurrent connections per client IP
	// (maxClientCnxns). Default 60; 0 means unlimited (a negative value in
	// zoo.cfg becomes 0, as ZooKeeper treats it as unlimited).
	MaxClientCnxns int
	// GlobalOutstandingLimit is the number of queued requests above which the
	// server stops reading from clients (globalOutstandingLimit). Default 1000;
	// a value below 1 in zoo.cfg becomes 1, with a warning.
	GlobalOutstandingLimit int
	// SnapCount is the number of transactions between snapshots (snapCount).
	// Default 100000; values below 2 become 2, as in ZooKeeper.
	SnapCount int
	// SnapLogPercent holds a snapshot back, beyond SnapCount transactions,
	// until the log written since the previous snapshot is at least this
	// percentage of that snapshot's size (paddock.snapLogPercent; a
	// Paddock key). Default 25; 0 snapshots on SnapCount alone, as
	// ZooKeeper does.
	SnapLogPercent int
	// GCHeadroom is the least the Go heap may grow between two garbage
	// collections, in bytes (paddock.gcHeadroomMB, a Paddock key, in MiB):
	// with a small live heap GOGC is raised so that collections under load
	// stay infrequent (internal/gctune). Default 64 MiB; 0 leaves GOGC
	// alone. Not applied when the GOGC environment variable is set.
	GCHeadroom uint64
	// AutopurgeSnapRetainCount is how many snapshots autopurge keeps
	// (autopurge.snapRetainCount). Default 3; values below 3 become 3, as in
	// ZooKeeper.
	AutopurgeSnapRetainCount int
	// AutopurgePurgeInterval is autopurge.purgeInterval (hours; default 0; a
	// negative value in zoo.cfg becomes 0, as in ZooKeeper both schedule
	// nothing),
	// shown in the admin server's initial configuration only: a server purges
	// after every snapshot, keeping AutopurgeSnapRetainCount snapshots,
	// whatever this says (ZooKeeper purges every purgeInterval hours, and
	// never with 0).
	AutopurgePurgeInterval time.Duration

	// FourLetterWords are the four-letter words the server answers
	// (4lw.commands.whitelist). Default: srvr only.
	FourLetterWords Whitelist
	// JuteMaxBuffer is the largest packet and znode data size, in bytes
	// (jute.maxbuffer). Default 0xfffff (1048575); a value below 1 in
	// zoo.cfg leaves the default, with a warning.
	JuteMaxBuffer int
	// ExtendedTypesEnabled enables TTL nodes (extendedTypesEnabled). Default
	// false.
	ExtendedTypesEnabled bool
	// EnforceQuota makes hard quotas (setquota -N, -B) refuse the creates
	// and setData calls that would exceed them with QUOTAEXCEEDED
	// (enforceQuota, ZooKeeper's zookeeper.enforceQuota). Default false:
	// quotas are only counted. The member that takes a write decides, and
	// its log entry carries the decision to every member.
	EnforceQuota bool
	// ClientTCPKeepAlive turns on TCP keepalive probes on client
	// connections (clientTcpKeepAlive). Default false, as ZooKeeper.
	ClientTCPKeepAlive bool
	// QuorumListenOnAllIPs makes an ensemble member listen for its peers
	// on every interface, at its own server.N line's peer port, instead of
	// on that line's host (quorumListenOnAllIPs, for hosts whose name is
	// not a local address: NAT, containers). Default false.
	QuorumListenOnAllIPs bool
	// SuperDigest is "user:base64(sha1(user:password))"; a client
	// authenticated as that digest user bypasses ACLs
	// (DigestAuthenticationProvider.superDigest). Default "": no super user.
	SuperDigest string

	// ContainerCheckInterval is how often empty containers and expired TTL
	// nodes are reaped (znode.container.checkIntervalMs). Default 60 s.
	ContainerCheckInterval time.Duration
	// ContainerMaxPerMinute bounds reaper deletions per minute
	// (znode.container.maxPerMinute). Default 10000.
	ContainerMaxPerMinute int

	// ServerID is this server's id, read from DataDir/myid by Load: when
	// that file exists, and always for an ensemble member (without one,
	// Load fails, as ZooKeeper does). Default 1.
	ServerID int64
	// Servers are the server.N lines, sorted by id. With zero or one of them
	// the server is standalone.
	Servers []Server

	// PeerType is this server's role (peerType). As in ZooKeeper, the
	// server.N lines decide: Parse and Load set it to Role, with a warning
	// when the peerType key said otherwise.
	PeerType Role
	// RaftElectionTimeout is how long a follower waits without hearing
	// from a leader before it stands for election; raft randomises it
	// between one and two times this (paddock.raft.electionTimeoutMs).
	// Zero means a quarter of TickTime, at least 100 ms.
	RaftElectionTimeout time.Duration
	// RaftHeartbeat is the leader's heartbeat interval and raft's tick
	// (paddock.raft.heartbeatMs). Zero means a tenth of the election
	// timeout, at least 10 ms.
	RaftHeartbeat time.Duration

	// MetricsEnabled serves Prometheus metrics at /metrics on MetricsAddr:
	// set by metricsProvider.className naming ZooKeeper's
	// PrometheusMetricsProvider, or by metricsProvider.httpPort alone.
	// Default false.
	MetricsEnabled bool
	// MetricsHost is the metrics listener's host (metricsProvider.httpHost).
	// Default "127.0.0.1", where ZooKeeper's is 0.0.0.0: the endpoint has
	// no authentication, so exposing it is the operator's choice.
	MetricsHost string
	// MetricsPort is the metrics listener's port (metricsProvider.httpPort).
	// Default 7000, as in ZooKeeper; 0 picks a free port.
	MetricsPort int
	// MetricsExportRuntime adds the Go runtime and process collectors
	// (metricsProvider.exportJvmInfo, ZooKeeper's JVM metrics). Default true.
	MetricsExportRuntime bool
	// FsyncWarningThreshold: a WAL fsync taking longer is logged as a
	// warning and counted (fsync.warningthresholdms, ms). Default 1000 ms.
	FsyncWarningThreshold time.Duration

	// HandshakeTimeout is how long a new connection may take to send its
	// ConnectRequest or four-letter word before it is closed
	// (paddock.handshake.timeoutMs). Default 10 s, independent of TickTime:
	// no ZooKeeper key governs this.
	HandshakeTimeout time.Duration
	// LogFormat is LogFormatText or LogFormatJSON (paddock.log.format).
	// Default text.
	LogFormat string
	// LogLevel is the minimum level logged (paddock.log.level: debug, info,
	// warn or error). Default info.
	LogLevel slog.Level

	// AdminEnabled turns on the admin HTTP server (admin.enableServer).
	// Default false, unlike ZooKeeper's true: see docs/admin.md.
	AdminEnabled bool
	// AdminAddress is the admin server's host (admin.serverAddress); ""
	// means all interfaces (an empty value in zoo.cfg is read as
	// 127.0.0.1, as ZooKeeper's Jetty binds it). Default "127.0.0.1"
	// (ZooKeeper's is 0.0.0.0).
	AdminAddress string
	// AdminPort is the admin server's port (admin.serverPort). Default
	// 8080; 0 picks a free port.
	AdminPort int
	// AdminCommandURL is the URL path under which commands are served
	// (admin.commandURL). Default "/commands".
	AdminCommandURL string
	// AdminIdleTimeout closes admin connections idle this long
	// (admin.idleTimeout, ms). Default 30 s.
	AdminIdleTimeout time.Duration
	// AdminSnapshotEnabled allows the snapshot admin command
	// (admin.snapshot.enabled, ZooKeeper 3.9's name). Default false.
	AdminSnapshotEnabled bool

	// IgnoredKeys lists the known ZooKeeper keys present in zoo.cfg that
	// Paddock does not use (tuning knobs, JVM and metrics settings), sorted,
	// so a caller may log them at debug level.
	IgnoredKeys []string
}

// Default returns Paddock's defaults: a standalone server on
// 127.0.0.1:2181 storing its data in ./paddock-data.
func Default() *Config {
	const tick = 2000 * time.Millisecond
	return &Config{
		TickTime:                 tick,
		InitLimit:                10,
		SyncLimit:                5,
		DataDir:                  "./paddock-data",
		DataLogDir:               "./paddock-data",
		ClientPort:               2181,
		ClientPortAddress:        "127.0.0.1",
		MinSessionTimeout:        2 * tick,
		MaxSessionTimeout:        20 * tick,
		MaxClientCnxns:           60,
		GlobalOutstandingLimit:   1000,
		SnapCount:                100000,
		SnapLogPercent:           25,
		GCHeadroom:               64 << 20,
		AutopurgeSnapRetainCount: minSnapRetainCount,
		JuteMaxBuffer:            defaultJuteMaxBuffer,
		ContainerCheckInterval:   60 * time.Second,
		ContainerMaxPerMinute:    10000,
		ServerID:                 1,
		MetricsHost:              "127.0.0.1",
		MetricsPort:              7000,
		MetricsExportRuntime:     true,
		FsyncWarningThreshold:    1000 * time.Millisecond,
		HandshakeTimeout:         10 * time.Second,
		LogFormat:                LogFormatText,
		LogLevel:                 slog.LevelInfo,
		AdminAddress:             "127.0.0.1",
		AdminPort:                8080,
		AdminCommandURL:          "/commands",
		AdminIdleTimeout:         30 * time.Second,
	}
}

// Standalone reports whether the configuration describes a single server:
// zero or one server.N lines.
func (c *Config) Standalone() bool { return len(c.Servers) <= 1 }

// Role returns this server's role in the ensemble: the one its server.N
// line gives, Participant when it has none. The peerType key does not
// change it (ZooKeeper uses the server list when the two disagree).
func (c *Config) Role() Role {
	for _, s := range c.Servers {
		if s.ID == c.ServerID {
			return s.Role
		}
	}
	return Participant
}

// RaftTiming returns raft's election timeout and heartbeat interval: the
// configured ones, or those derived from TickTime.
func (c *Config) RaftTiming() (election, heartbeat time.Duration) {
	election, heartbeat = c.RaftElectionTimeout, c.RaftHeartbeat
	if election == 0 {
		election = max(c.TickTime/4, 100*time.Millisecond)
	}
	if heartbeat == 0 {
		heartbeat = max(election/10, 10*time.Millisecond)
	}
	return election, heartbeat
}

// ClientAddr returns the client listener's address in net.Listen form,
// e.g. "127.0.0.1:2181" or ":2181" for all interfaces.
func (c *Config) ClientAddr() string {
	return net.JoinHostPort(c.ClientPortAddress, strconv.Itoa(c.ClientPort))
}

// MetricsAddr returns the metrics listener's address in net.Listen form,
// e.g. "127.0.0.1:7000".
func (c *Config) MetricsAddr() string {
	return net.JoinHostPort(c.MetricsHost, strconv.Itoa(c.MetricsPort))
}

// KeyError reports a bad value for one configuration key.
type KeyError struct {
	Key    string // zoo.cfg key, e.g. "tickTime"
	Value  string // the offending value as written, or the field's value
	Where  string // "zoo.cfg:3", "line 3", "flag --port", or "" from Validate
	Reason string // e.g. "is not an integer"
}

// Error formats e as `config: [where: ]key: "value" reason`.
func (e *KeyError) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	if e.Where != "" {
		b.WriteString(e.Where)
		b.WriteString(": ")
	}
	b.WriteString(e.Key)
	b.WriteString(": ")
	if e.Value != "" {
		b.WriteString(strconv.Quote(e.Value))
		b.WriteByte(' ')
	}
	b.WriteString(e.Reason)
	return b.String()
}

func rangeError(key string, value any, reason string) *KeyError {
	return &KeyError{Key: key, Value: fmt.Sprint(value), Reason: reason}
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

// Validate checks every field's range and the relations between fields. The
// error joins one *KeyError per problem, each naming the zoo.cfg key.
func (c *Config) Validate() error {
	var errs []error
	add := func(key string, value any, reason string) {
		errs = append(errs, rangeError(key, value, reason))
	}
	if c.TickTime < time.Millisecond {
		add("tickTime", ms(c.TickTime), "must be at least 1 ms")
	}
	if c.InitLimit < 0 {
		add("initLimit", c.InitLimit, "must not be negative")
	}
	if c.SyncLimit < 0 {
		add("syncLimit", c.SyncLimit, "must not be negative")
	}
	if !c.Standalone() {
		if c.InitLimit == 0 {
			add("initLimit", 0, "must be positive for an ensemble")
		}
		if c.SyncLimit == 0 {
			add("syncLimit", 0, "must be positive for an ensemble")
		}
	}
	if strings.TrimSpace(c.DataDir) == "" {
		add("dataDir", c.DataDir, "must not be empty")
	}
	if strings.TrimSpace(c.DataLogDir) == "" {
		add("dataLogDir", c.DataLogDir, "must not be empty")
	}
	if !validPort(c.ClientPort, true) {
		add("clientPort", c.ClientPort, "must be in [0, 65535]")
	}
	if c.ClientPortAddress != "" && !validHost(c.ClientPortAddress) {
		add("clientPortAddress", c.ClientPortAddress, "is not a host name or IP address")
	}
	switch {
	case c.MinSessionTimeout <= 0:
		add("minSessionTimeout", ms(c.MinSessionTimeout), "must be positive")
	case c.MaxSessionTimeout <= 0:
		add("maxSessionTimeout", ms(c.MaxSessionTimeout), "must be positive")
	case c.MinSessionTimeout > c.MaxSessionTimeout:
		add("minSessionTimeout", ms(c.MinSessionTimeout),
			fmt.Sprintf("is larger than maxSessionTimeout %d", ms(c.MaxSessionTimeout)))
	}
	if c.MaxClientCnxns < 0 {
		add("maxClientCnxns", c.MaxClientCnxns, "must not be negative (0 means unlimited)")
	}
	if c.GlobalOutstandingLimit < 1 {
		add("globalOutstandingLimit", c.GlobalOutstandingLimit, "must be positive")
	}
	if c.SnapCount < minSnapCount {
		add("snapCount", c.SnapCount, "must be at least 2")
	}
	if c.AutopurgeSnapRetainCount < minSnapRetainCount {
		add("autopurge.snapRetainCount", c.AutopurgeSnapRetainCount, "must be at least 3")
	}
	if c.AutopurgePurgeInterval < 0 {
		add("autopurge.purgeInterval", int64(c.AutopurgePurgeInterval/time.Hour), "must not be negative (0 disables it)")
	}
	if c.JuteMaxBuffer < 1 {
		add("jute.maxbuffer", c.JuteMaxBuffer, "must be positive")
	}
	if c.SuperDigest != "" {
		if err := checkSuperDigest(c.SuperDigest); err != nil {
			add("DigestAuthenticationProvider.superDigest", c.SuperDigest, err.Error())
		}
	}
	if c.ContainerCheckInterval < time.Millisecond {
		add("znode.container.checkIntervalMs", ms(c.ContainerCheckInterval), "must be at least 1 ms")
	}
	if c.ContainerMaxPerMinute < 1 {
		add("znode.container.maxPerMinute", c.ContainerMaxPerMinute, "must be positive")
	}
	errs = append(errs, c.validateIDs()...)
	if c.MetricsEnabled {
		if !validPort(c.MetricsPort, true) {
			add("metricsProvider.httpPort", c.MetricsPort, "must be in [0, 65535]")
		}
		if c.MetricsHost == "" || !validHost(c.MetricsHost) {
			add("metricsProvider.httpHost", c.MetricsHost, "is not a host name or IP address")
		}
	}
	if c.FsyncWarningThreshold < 0 {
		add("fsync.warningthresholdms", ms(c.FsyncWarningThreshold), "must not be negative")
	}
	if c.HandshakeTimeout < time.Millisecond {
		add("paddock.handshake.timeoutMs", ms(c.HandshakeTimeout), "must be at least 1 ms")
	}
	if c.RaftElectionTimeout < 0 || (c.RaftElectionTimeout > 0 && c.RaftElectionTimeout < 10*time.Millisecond) {
		add("paddock.raft.electionTimeoutMs", ms(c.RaftElectionTimeout), "must be at least 10 ms")
	}
	if c.RaftHeartbeat < 0 || (c.RaftHeartbeat > 0 && c.RaftHeartbeat < time.Millisecond) {
		add("paddock.raft.heartbeatMs", ms(c.RaftHeartbeat), "must be at least 1 ms")
	}
	if e, h := c.RaftTiming(); e <= h {
		add("paddock.raft.electionTimeoutMs", ms(e), fmt.Sprintf("must exceed the heartbeat (%d ms)", ms(h)))
	}
	if c.LogFormat != LogFormatText && c.LogFormat != LogFormatJSON {
		add("paddock.log.format", c.LogFormat, "is neither text nor json")
	}
	if _, ok := levelName(c.LogLevel); !ok {
		add("paddock.log.level", c.LogLevel, "is not one of debug, info, warn, error")
	}
	if !validPort(c.AdminPort, true) {
		add("admin.serverPort", c.AdminPort, "must be in [0, 65535]")
	}
	if c.AdminAddress != "" && !validHost(c.AdminAddress) {
		add("admin.serverAddress", c.AdminAddress, "is not a host name or IP address")
	}
	if u := c.AdminCommandURL; !strings.HasPrefix(u, "/") || u == "/" || u == "/ready" || u == "/live" || strings.ContainsAny(u, "?# ") {
		add("admin.commandURL", u, "must be a path such as /commands (not /, /ready or /live)")
	}
	if c.AdminIdleTimeout < time.Millisecond {
		add("admin.idleTimeout", ms(c.AdminIdleTimeout), "must be at least 1 ms")
	}
	return errors.Join(errs...)
}

// validateIDs checks ServerID and the server.N lines.
func (c *Config) validateIDs() []error {
	var errs []error
	maxID := int64(maxServerID)
	if c.ExtendedTypesEnabled {
		maxID = maxExtendedServerID
	}
	if c.ServerID < 1 || c.ServerID > maxID {
		errs = append(errs, rangeError("myid", c.ServerID, fmt.Sprintf("must be in [1, %d]", maxID)))
	}
	seen := make(map[int64]bool, len(c.Servers))
	for _, s := range c.Servers {
		if err := s.validate(); err != nil {
			errs = append(errs, err)
		}
		if seen[s.ID] {
			errs = append(errs, rangeError("server."+strconv.FormatInt(s.ID, 10), s.ID, "is listed twice"))
		}
		seen[s.ID] = true
	}
	errs = append(errs, c.validateQuorum()...)
	if !c.Standalone() && !seen[c.ServerID] {
		errs = append(errs, rangeError("myid", c.ServerID, "is not one of the server.N lines"))
	}
	return errs
}

// validateQuorum applies ZooKeeper's rule that observers need a quorum of
// participants: server.N lines with observers and fewer than two
// participants are refused ("Observers w/o quorum is an invalid
// configuration", "Observers w/o participants ...").
func (c *Config) validateQuorum() []error {
	participants, firstObserver := 0, int64(0)
	for _, s := range c.Servers {
		if s.Role == Observer {
			if firstObserver == 0 {
				firstObserver = s.ID
			}
		} else {
			participants++
		}
	}
	if firstObserver == 0 || participants >= 2 {
		return nil
	}
	reason := "is an observer, but no server.N line is a participant: observers need a quorum of participants"
	if participants == 1 {
		reason = "is an observer, but only one server.N line is a participant: observers need a quorum of at least two"
	}
	return []error{&KeyError{Key: "server." + strconv.FormatInt(firstObserver, 10), Reason: reason}}
}

// checkSuperDigest checks the "user:base64(sha1)" form.
func checkSuperDigest(s string) error {
	user, digest, ok := strings.Cut(s, ":")
	if !ok || user == "" {
		return errors.New("is not user:base64digest")
	}
	raw, err := base64.StdEncoding.DecodeString(digest)
	if err != nil || len(raw) != 20 {
		return errors.New("does not end in a base64 SHA-1 digest (28 characters)")
	}
	return nil
}

// validHost reports whether s is an IP literal (without brackets; an IPv6
// one may carry a zone, "fe80::1%eth0", as ZooKeeper's InetAddress
// accepts and net.Listen understands) or a syntactically valid host name.
func validHost(s string) bool {
	if _, err := netip.ParseAddr(s); err == nil {
		return true
	}
	if len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			ch := label[i]
			if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_') {
				return false
			}
		}
	}
	return true
}

// levelName maps the four accepted levels to their zoo.cfg spelling.
func levelName(l slog.Level) (string, bool) {
	switch l {
	case slog.LevelDebug:
		return "debug", true
	case slog.LevelInfo:
		return "info", true
	case slog.LevelWarn:
		return "warn", true
	case slog.LevelError:
		return "error", true
	}
	return "", false
}
