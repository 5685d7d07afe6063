package config

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Setting is one key=value pair in zoo.cfg's key space. Overrides passed to
// Parse and Load are Settings, so a command-line flag is parsed and checked
// exactly like the zoo.cfg line it stands for.
type Setting struct {
	Key   string // a zoo.cfg key, e.g. "clientPort"
	Value string
	// Source names where the setting came from in error messages and
	// warnings, e.g. "flag --port". Empty means "override".
	Source string
}

// Parse reads a zoo.cfg from r, applies the overrides after it, derives the
// unset values and validates the result. It does not touch the file system:
// ServerID stays 1 because the myid file is not read (Load reads it), and a
// dynamicConfigFile key is an error (Load reads that file).
// Warnings name unknown and unsupported keys; they are never fatal. Errors
// from a bad value are *KeyError (several joined when Validate finds more
// than one problem).
func Parse(r io.Reader, overrides ...Setting) (*Config, []string, error) {
	b := newBuilder("")
	b.readFiles = false
	if err := b.readFile(r); err != nil {
		return nil, b.warnings, err
	}
	cfg, err := b.finish(overrides)
	if err != nil {
		return nil, b.warnings, err
	}
	b.setupPeerType()
	b.adoptServerClientAddr()
	if err := cfg.Validate(); err != nil {
		return nil, b.warnings, err
	}
	return cfg, b.warnings, nil
}

// Load reads the zoo.cfg at path (none when path is ""), then the dynamic
// config file its dynamicConfigFile key names (server.N lines only, as in
// ZooKeeper), applies the overrides, reads ServerID from the myid file in
// DataDir when it exists, and validates the result. Messages name path and the line. A missing,
// unreadable or malformed myid is an error for an ensemble, as in ZooKeeper
// ("myid file is missing"); a standalone server keeps ServerID 1 (an
// unreadable or malformed myid is then a warning: ZooKeeper does not read
// it).
func Load(path string, overrides ...Setting) (*Config, []string, error) {
	b := newBuilder(path)
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, fmt.Errorf("config: %w", err)
		}
		err = b.readFile(f)
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("config: closing %s: %w", path, cerr)
		}
		if err != nil {
			return nil, b.warnings, err
		}
	}
	cfg, err := b.finish(overrides)
	if err != nil {
		return nil, b.warnings, err
	}
	switch err := readMyID(cfg); {
	case err == nil:
	case !cfg.Standalone() && errors.Is(err, fs.ErrNotExist):
		return nil, b.warnings, &KeyError{Key: "myid", Where: filepath.Join(cfg.DataDir, "myid"),
			Reason: "file is missing: an ensemble member (more than one server.N line) needs its server id there"}
	case !cfg.Standalone():
		return nil, b.warnings, err
	case errors.Is(err, fs.ErrNotExist):
		// A standalone server needs no myid.
	default:
		// ZooKeeper never reads myid in standalone mode; Debian even ships a
		// placeholder one.
		b.warnings = append(b.warnings, strings.TrimPrefix(err.Error(), "config: ")+"; standalone, so using server id 1")
	}
	b.setupPeerType()
	b.adoptServerClientAddr()
	if err := cfg.Validate(); err != nil {
		return nil, b.warnings, err
	}
	return cfg, b.warnings, nil
}

// maxMyIDSize bounds the myid file; it holds one small number.
const maxMyIDSize = 1024

// readMyID sets cfg.ServerID from DataDir/myid. A missing file is an error
// matching fs.ErrNotExist.
func readMyID(cfg *Config) error {
	path := filepath.Join(cfg.DataDir, "myid")
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("config: myid: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxMyIDSize))
	if err != nil {
		return fmt.Errorf("config: myid: reading %s: %w", path, err)
	}
	// ZooKeeper parses the first line only (readLine); surrounding
	// whitespace, which it refuses, is forgiven.
	text := strings.TrimSpace(string(data))
	if i := strings.IndexAny(text, "\r\n"); i >= 0 {
		text = strings.TrimSpace(text[:i])
	}
	id, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return &KeyError{Key: "myid", Value: text, Where: path, Reason: "is not a number"}
	}
	cfg.ServerID = id
	return nil
}

// builder accumulates one configuration from a file and overrides.
type builder struct {
	cfg      *Config
	name     string // file name for messages, "" when reading a bare reader
	warnings []string
	ignored  map[string]bool
	seen     map[string]string // canonical key -> where it was last set
	servers  map[string]Server // by key, so a repeated key replaces its line

	minSessionSet, maxSessionSet bool
	dataLogDirSet                bool
	fileClientPort, fileAddress  bool // set by the file
	clientPortSet, addressSet    bool // set by the file or an override
	// metricsClass is the provider metricsProvider.className chose
	// (metricsPrometheus or metricsNone), 0 when unset.
	metricsClass   int
	metricsPortSet bool
	peerTypeWhere  string // where peerType was last set, "" when it was not

	// readFiles: the dynamic config file may be read (Load, not Parse).
	readFiles bool
	// dynamicFile is dynamicConfigFile's value, dynamicWhere where it was
	// set ("" when it was not).
	dynamicFile, dynamicWhere string
	// inDynamic: the dynamic config file is being applied.
	inDynamic bool
	// staticQuorumKey is the first server.N, group or weight key of the
	// zoo.cfg itself, staticQuorumWhere its place; with dynamicConfigFile
	// such keys must be in the dynamic file.
	staticQuorumKey, staticQuorumWhere string
}

func newBuilder(name string) *builder {
	return &builder{
		cfg:       Default(),
		readFiles: true,
		name:      name,
		ignored:   make(map[string]bool),
		seen:      make(map[string]string),
		servers:   make(map[string]Server),
	}
}

func (b *builder) where(line int) string {
	if b.name == "" {
		return "line " + strconv.Itoa(line)
	}
	return b.name + ":" + strconv.Itoa(line)
}

func (b *builder) warnf(where, format string, args ...any) {
	b.warnings = append(b.warnings, where+": "+fmt.Sprintf(format, args...))
}

// readFile applies every property of a zoo.cfg, then ZooKeeper's rule that
// a clientPort without clientPortAddress listens on all interfaces.
func (b *builder) readFile(r io.Reader) error {
	props, err := readProperties(r)
	if err != nil {
		name := b.name
		if name == "" {
			name = "zoo.cfg"
		}
		return fmt.Errorf("config: %s: %w", name, err)
	}
	replaced := replacedProps(props)
	for i, p := range props {
		if replaced[i] {
			b.seen[canonicalKey(strings.TrimSpace(p.key))] = b.where(p.line)
			continue
		}
		if err := b.apply(p.key, p.value, b.where(p.line), true); err != nil {
			return err
		}
	}
	if b.fileClientPort && !b.fileAddress {
		b.cfg.ClientPortAddress = ""
	}
	return nil
}

// replacedProps reports, for each of props, whether its key is repeated
// later. java.util.Properties keeps only the last value of a key, so
// ZooKeeper never sees a replaced one, not even to refuse it; apply still
// warns at the last one that it replaces the earlier.
func replacedProps(props []property) []bool {
	last := make(map[string]int, len(props))
	for i, p := range props {
		last[p.key] = i
	}
	replaced := make([]bool, len(props))
	for i, p := range props {
		replaced[i] = last[p.key] != i
	}
	return replaced
}

// finish applies the overrides and derives the values left unset.
func (b *builder) finish(overrides []Setting) (*Config, error) {
	for _, s := range overrides {
		where := s.Source
		if where == "" {
			where = "override"
		}
		if err := b.apply(s.Key, s.Value, where, false); err != nil {
			return nil, err
		}
	}
	if b.dynamicWhere != "" {
		if err := b.readDynamicFile(); err != nil {
			return nil, err
		}
	}
	c := b.cfg
	if b.fileAddress && !b.clientPortSet {
		// ZooKeeper: "clientPortAddress is set but clientPort is not set".
		return nil, &KeyError{Key: "clientPortAddress", Value: c.ClientPortAddress, Where: b.seen["clientPortAddress"],
			Reason: "is set but clientPort is not"}
	}
	if !b.minSessionSet {
		c.MinSessionTimeout = 2 * c.TickTime
	}
	if !b.maxSessionSet {
		c.MaxSessionTimeout = 20 * c.TickTime
	}
	if !b.dataLogDirSet {
		c.DataLogDir = c.DataDir
	}
	c.MetricsEnabled = b.metricsClass == metricsPrometheus || (b.metricsClass == 0 && b.metricsPortSet)
	c.Servers = c.Servers[:0]
	for _, s := range b.servers {
		c.Servers = append(c.Servers, s)
	}
	slices.SortFunc(c.Servers, func(x, y Server) int { return cmp.Compare(x.ID, y.ID) })
	if len(c.Servers) == 0 {
		c.Servers = nil
	}
	for k := range b.ignored {
		c.IgnoredKeys = append(c.IgnoredKeys, k)
	}
	slices.Sort(c.IgnoredKeys)
	return c, nil
}

// setupPeerType applies ZooKeeper's QuorumPeerConfig.setupPeerType: this
// server's role is the one its server.N line gives (participant when it has
// none), whatever peerType says; a peerType that disagrees is reported in a
// warning. Every member so derives the same voters from the same lines.
func (b *builder) setupPeerType() {
	c := b.cfg
	role := c.Role()
	if c.PeerType == role {
		return
	}
	if b.peerTypeWhere != "" {
		b.warnf(b.peerTypeWhere, "peerType %s does not match this server's role in the server.N lines (%s, server id %d); using the server.N lines, as ZooKeeper does",
			c.PeerType, role, c.ServerID)
	}
	c.PeerType = role
}

// adoptServerClientAddr applies ZooKeeper's dynamic-config rule: when the
// file sets neither clientPort nor clientPortAddress, this server's server.N
// line may give the client address ("...;[host:]port"; host 0.0.0.0 when
// only a port is written); an override still wins for the part it sets. The
// official Docker image writes such files.
func (b *builder) adoptServerClientAddr() {
	c := b.cfg
	if b.fileClientPort || b.fileAddress {
		return
	}
	for _, s := range c.Servers {
		if s.ID != c.ServerID || s.ClientPort == 0 {
			continue
		}
		if !b.clientPortSet {
			c.ClientPort = s.ClientPort
		}
		if !b.addressSet {
			c.ClientPortAddress = s.ClientHost
		}
	}
}

// apply sets one key. It returns a *KeyError for a malformed value and
// records a warning for an unknown or unsupported key.
func (b *builder) apply(rawKey, rawValue, where string, fromFile bool) error {
	key := strings.TrimSpace(rawKey)
	value := strings.TrimSpace(rawValue)
	canon := canonicalKey(key)
	if prev, ok := b.seen[canon]; ok && fromFile {
		b.warnf(where, "%s is set again; the value from %s is replaced", key, prev)
	}
	if fromFile {
		b.seen[canon] = where
	}
	if fromFile && !b.inDynamic && b.staticQuorumKey == "" && isQuorumKey(key) {
		b.staticQuorumKey, b.staticQuorumWhere = key, where
	}
	handled, err := b.set(canon, value, where, fromFile)
	if err != nil {
		return &KeyError{Key: key, Value: value, Where: where, Reason: err.Error()}
	}
	if handled {
		return nil
	}
	switch classify(key) {
	case keyIgnored:
		b.ignored[key] = true
	case keyUnsupported:
		b.warnf(where, "%s is not supported by Paddock; ignored", key)
	default:
		b.warnf(where, "unknown key %q ignored", key)
	}
	return nil
}

// set applies a handled key. It reports false for keys it does not handle.
// Errors carry only the reason; apply adds key, value and place.
func (b *builder) set(key, value, where string, fromFile bool) (bool, error) {
	c := b.cfg
	var err error
	switch key {
	case "tickTime":
		c.TickTime, err = parseMillis(value)
	case "initLimit":
		c.InitLimit, err = parseInt32(value)
	case "syncLimit":
		c.SyncLimit, err = parseInt32(value)
	case "dataDir":
		c.DataDir = value
	case "dataLogDir":
		c.DataLogDir, b.dataLogDirSet = value, true
	case "clientPort":
		c.ClientPort, err = parseInt32(value)
		b.fileClientPort = b.fileClientPort || fromFile
		b.clientPortSet = true
	case "clientPortAddress":
		c.ClientPortAddress = strings.TrimSuffix(strings.TrimPrefix(value, "["), "]")
		if fromFile && value == "" {
			// ZooKeeper resolves it with InetAddress.getByName, which
			// maps "" to the loopback address: it listens on 127.0.0.1
			// only, not on every interface. (The --address "" flag
			// means every interface.)
			c.ClientPortAddress = "127.0.0.1"
		}
		b.fileAddress = b.fileAddress || fromFile
		b.addressSet = true
	case "minSessionTimeout":
		c.MinSessionTimeout, b.minSessionSet, err = parseTimeoutBound(value)
	case "maxSessionTimeout":
		c.MaxSessionTimeout, b.maxSessionSet, err = parseTimeoutBound(value)
	case "maxClientCnxns":
		c.MaxClientCnxns, err = parseInt32(value)
		// ZooKeeper limits connections only when maxClientCnxns > 0
		// (NIOServerCnxnFactory, NettyServerCnxnFactory): below 0 is
		// unlimited too.
		c.MaxClientCnxns = max(c.MaxClientCnxns, 0)
	case "globalOutstandingLimit":
		c.GlobalOutstandingLimit, err = parseJavaInt(value)
		// ZooKeeper starts with any value; below 1 it throttles every
		// connection with a request in flight (shouldThrottle).
		if err == nil && c.GlobalOutstandingLimit < 1 {
			b.warnf(where, "globalOutstandingLimit %d is below 1; using 1", c.GlobalOutstandingLimit)
			c.GlobalOutstandingLimit = 1
		}
	case "snapCount":
		c.SnapCount, err = parseJavaInt(value)
		if err == nil && c.SnapCount < minSnapCount {
			b.warnf(where, "snapCount %d is below %d; using %d", c.SnapCount, minSnapCount, minSnapCount)
			c.SnapCount = minSnapCount
		}
	case "autopurge.snapRetainCount":
		c.AutopurgeSnapRetainCount, err = parseInt32(value)
		if err == nil && c.AutopurgeSnapRetainCount < minSnapRetainCount {
			b.warnf(where, "autopurge.snapRetainCount %d is below %d; using %d",
				c.AutopurgeSnapRetainCount, minSnapRetainCount, minSnapRetainCount)
			c.AutopurgeSnapRetainCount = minSnapRetainCount
		}
	case "autopurge.purgeInterval":
		c.AutopurgePurgeInterval, err = parseHours(value)
		// ZooKeeper schedules no purge when it is <= 0.
		c.AutopurgePurgeInterval = max(c.AutopurgePurgeInterval, 0)
	case "4lw.commands.whitelist":
		c.FourLetterWords = ParseWhitelist(value)
	case "jute.maxbuffer":
		c.JuteMaxBuffer, err = parseJavaInt(value)
		// ZooKeeper does not read this key from zoo.cfg at all (only the
		// jute.maxbuffer system property), so it starts with its default.
		if err == nil && c.JuteMaxBuffer < 1 {
			b.warnf(where, "jute.maxbuffer %d is not positive; using %d", c.JuteMaxBuffer, defaultJuteMaxBuffer)
			c.JuteMaxBuffer = defaultJuteMaxBuffer
		}
	case "extendedTypesEnabled":
		c.ExtendedTypesEnabled, err = parseBool(value)
	case "enforceQuota":
		c.EnforceQuota, err = parseBool(value)
	case "clientTcpKeepAlive":
		c.ClientTCPKeepAlive, err = parseBool(value)
	case "quorumListenOnAllIPs":
		c.QuorumListenOnAllIPs, err = parseBool(value)
	case "DigestAuthenticationProvider.superDigest":
		c.SuperDigest = value
		if value != "" {
			err = checkSuperDigest(value)
		}
	case "znode.container.checkIntervalMs":
		c.ContainerCheckInterval, err = parseJavaMillis(value)
	case "znode.container.maxPerMinute":
		c.ContainerMaxPerMinute, err = parseJavaInt(value)
	case "dynamicConfigFile":
		b.dynamicFile, b.dynamicWhere = value, where
		if value == "" {
			err = errors.New("must name a file")
		}
	case "peerType":
		b.peerTypeWhere = where
		switch strings.ToLower(value) {
		case "observer":
			c.PeerType = Observer
		case "participant":
			c.PeerType = Participant
		default:
			err = errors.New("must be observer or participant")
		}
	case "metricsProvider.className":
		b.metricsClass, err = parseMetricsProvider(value)
	case "metricsProvider.httpPort":
		c.MetricsPort, err = parseInt32(value)
		b.metricsPortSet = true
	case "metricsProvider.httpHost":
		c.MetricsHost = strings.TrimSuffix(strings.TrimPrefix(value, "["), "]")
	case "metricsProvider.exportJvmInfo":
		c.MetricsExportRuntime, err = parseBool(value)
	case "fsync.warningthresholdms":
		c.FsyncWarningThreshold, err = parseJavaMillis(value)
	case "paddock.snapLogPercent":
		c.SnapLogPercent, err = parseInt32(value)
		if err == nil && c.SnapLogPercent < 0 {
			err = errors.New("must not be negative")
		}
	case "paddock.gcHeadroomMB":
		var mb int
		mb, err = parseInt32(value)
		switch {
		case err == nil && mb < 0:
			err = errors.New("must not be negative")
		case err == nil:
			c.GCHeadroom = uint64(mb) << 20
		}
	case "paddock.raft.electionTimeoutMs":
		c.RaftElectionTimeout, err = parseMillis(value)
	case "paddock.raft.heartbeatMs":
		c.RaftHeartbeat, err = parseMillis(value)
	case "paddock.handshake.timeoutMs":
		c.HandshakeTimeout, err = parseMillis(value)
	case "paddock.log.format":
		c.LogFormat, err = parseLogFormat(value)
	case "paddock.log.level":
		c.LogLevel, err = parseLogLevel(value)
	case "admin.enableServer":
		c.AdminEnabled, err = parseBool(value)
	case "admin.serverAddress":
		c.AdminAddress = strings.TrimSuffix(strings.TrimPrefix(value, "["), "]")
		if fromFile && value == "" {
			// ZooKeeper's Jetty binds InetSocketAddress("", port): the
			// loopback address, as for clientPortAddress.
			c.AdminAddress = "127.0.0.1"
		}
		if c.AdminAddress != "" && !validHost(c.AdminAddress) {
			err = errors.New("is not a host name or IP address")
		}
	case "admin.serverPort":
		c.AdminPort, err = parseInt32(value)
		if err == nil && !validPort(c.AdminPort, true) {
			err = errors.New("must be in [0, 65535]")
		}
	case "admin.commandURL":
		c.AdminCommandURL = strings.TrimRight(value, "/")
	case "admin.idleTimeout":
		c.AdminIdleTimeout, err = parseMillis(value)
	case "admin.snapshot.enabled":
		c.AdminSnapshotEnabled, err = parseBool(value)
	default:
		if !strings.HasPrefix(key, "server.") {
			return false, nil
		}
		var id int64
		if id, err = parseServerID(key); err == nil {
			var srv Server
			if srv, err = parseServer(id, value); err == nil {
				b.servers[key] = srv
			}
		}
	}
	return true, err
}

// Metrics providers metricsProvider.className may name.
const (
	metricsPrometheus = 1 + iota // serve /metrics
	metricsNone                  // ZooKeeper's default provider: no endpoint
)

// parseMetricsProvider accepts ZooKeeper's Prometheus provider, and its
// default and null providers, which serve nothing.
func parseMetricsProvider(s string) (int, error) {
	switch s {
	case "org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider":
		return metricsPrometheus, nil
	case "org.apache.zookeeper.metrics.impl.DefaultMetricsProvider",
		"org.apache.zookeeper.metrics.impl.NullMetricsProvider":
		return metricsNone, nil
	}
	return 0, errors.New("is not a metrics provider Paddock has " +
		"(org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider, or ZooKeeper's DefaultMetricsProvider for none)")
}

// isQuorumKey reports the keys ZooKeeper keeps in the dynamic config file:
// server.N, group.N and weight.N.
func isQuorumKey(key string) bool {
	return strings.HasPrefix(key, "server.") || strings.HasPrefix(key, "group") || strings.HasPrefix(key, "weight")
}

// readDynamicFile applies the dynamic config file dynamicConfigFile names,
// as ZooKeeper's QuorumPeerConfig.parse does: the file holds only server.N
// (and group and weight) lines, none of which may then be in the zoo.cfg
// itself. A relative path is relative to the working directory, as in
// ZooKeeper.
func (b *builder) readDynamicFile() error {
	if b.staticQuorumKey != "" {
		return &KeyError{Key: b.staticQuorumKey, Where: b.staticQuorumWhere,
			Reason: "must be in the dynamic config file when dynamicConfigFile is set, as ZooKeeper requires"}
	}
	path := b.dynamicFile
	fail := func(reason string) error {
		return &KeyError{Key: "dynamicConfigFile", Value: path, Where: b.dynamicWhere, Reason: reason}
	}
	if !b.readFiles {
		return fail("cannot be read: Parse reads no files (Load does)")
	}
	f, err := os.Open(path)
	if err != nil {
		return fail(err.Error())
	}
	props, err := readProperties(f)
	f.Close()
	if err != nil {
		return fail(err.Error())
	}
	b.inDynamic = true
	defer func() { b.inDynamic = false }()
	replaced := replacedProps(props)
	for i, p := range props {
		key, where := strings.TrimSpace(p.key), path+":"+strconv.Itoa(p.line)
		if replaced[i] && isQuorumKey(key) {
			b.seen[canonicalKey(key)] = where
			continue
		}
		switch {
		case key == "version":
			return &KeyError{Key: key, Value: strings.TrimSpace(p.value), Where: where,
				Reason: "must not be in a dynamic config file (ZooKeeper takes the version from the file name)"}
		case !isQuorumKey(key):
			return &KeyError{Key: key, Value: strings.TrimSpace(p.value), Where: where,
				Reason: "is not allowed in a dynamic config file (only server.N, group and weight lines)"}
		}
		if err := b.apply(key, p.value, where, true); err != nil {
			return err
		}
	}
	return nil
}
