package config

import (
	"errors"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"
)

// keyKind says what Paddock does with a key it does not handle.
type keyKind int

const (
	keyUnknown     keyKind = iota // warned about
	keyIgnored                    // a ZooKeeper tuning knob with no Paddock meaning
	keyUnsupported                // a ZooKeeper feature Paddock lacks: warned about
)

// canonicalKey maps "zookeeper.X" to X for the keys ZooKeeper reads as
// system properties, so both spellings set the same field.
func canonicalKey(key string) string {
	rest, ok := strings.CutPrefix(key, "zookeeper.")
	if !ok {
		return key
	}
	switch rest {
	case "4lw.commands.whitelist", "globalOutstandingLimit", "snapCount",
		"jute.maxbuffer", "extendedTypesEnabled", "enforceQuota", "clientTcpKeepAlive",
		"DigestAuthenticationProvider.superDigest",
		"znode.container.checkIntervalMs", "znode.container.maxPerMinute",
		"fsync.warningthresholdms",
		"admin.enableServer", "admin.serverAddress", "admin.serverPort",
		"admin.commandURL", "admin.idleTimeout", "admin.snapshot.enabled":
		return rest
	}
	return key
}

// classify sorts a key Paddock does not handle. The "zookeeper." prefix is
// ignored, since ZooKeeper turns unparsed keys into such system properties.
func classify(key string) keyKind {
	k := strings.TrimPrefix(key, "zookeeper.")
	switch k {
	case "preAllocSize", "forceSync", "snapSizeLimitInKb", "txnLogSizeLimitInKb",
		"clientPortListenBacklog", "standaloneEnabled", "reconfigEnabled",
		"electionAlg", "connectToLearnerMasterLimit", "syncEnabled",
		"observerMasterPort", "cnxTimeout",
		"quorumCnxnTimeoutMs", "quorum.cnxn.threads.size", "oraclePath",
		"maxResponseCacheSize", "maxGetChildrenResponseCacheSize",
		"digest.enabled", "snapshot.compression.method", "snapshot.trust.empty",
		"serverCnxnFactory", "commitLogCount",
		"audit.enable", "leaderServes", "jute.maxbuffer.extrasize",
		"requestThrottleLimit", "requestThrottleStallTime", "requestThrottleDropStale",
		"largeRequestMaxBytes", "largeRequestThreshold", "throttledOpWaitTime",
		"znode.container.maxNeverUsedIntervalMs", "emulate353TTLNodes",
		"flushDelay", "maxWriteQueuePollTime", "maxBatchSize",
		"connectionMaxTokens", "connectionTokenFillTime", "connectionTokenFillCount",
		"connectionFreezeTime", "connectionDropIncrease", "connectionDropDecrease",
		"connectionDecreaseRatio", "sslQuorumReloadCertFiles",
		"metricsProvider.numWorkerThreads", "metricsProvider.maxQueueSize",
		"metricsProvider.workerShutdownTimeoutMs", "metricsProvider.httpVersion",
		"metricsProvider.prometheusMetricsSummaryRotateIntervalSeconds":
		return keyIgnored
	case "metricsProvider.httpsPort":
		return keyUnsupported
	case "secureClientPort", "secureClientPortAddress", "sslQuorum",
		"portUnification", "client.portUnification", "skipACL",
		"localSessionsEnabled", "localSessionsUpgradingEnabled",
		"maxCnxns", "readonlymode.enabled",
		"sessionRequireClientSASLAuth", "enforce.auth.enabled", "enforce.auth.schemes",
		"fips-mode", "superUser", "X509AuthenticationProvider.superUser",
		"DigestAuthenticationProvider.digestAlg", "DigestAuthenticationProvider.enabled":
		return keyUnsupported
	}
	for _, p := range []string{"jvm.pause.", "multiAddress.", "nio.", "netty."} {
		if strings.HasPrefix(k, p) {
			return keyIgnored
		}
	}
	// group.N and weight.N (hierarchical quorums) would change which
	// members form a quorum; Paddock's is a majority of the participants.
	for _, p := range []string{"admin.", "ssl.", "authProvider.", "quorum.auth.", "kerberos.", "metricsProvider.ssl.",
		"group.", "weight."} {
		if strings.HasPrefix(k, p) {
			return keyUnsupported
		}
	}
	return keyUnknown
}

// parseInt32 parses a decimal int as Java's Integer.parseInt does.
func parseInt32(s string) (int, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, errors.New("is out of range for a 32-bit integer")
		}
		return 0, errors.New("is not an integer")
	}
	return int(n), nil
}

// parseJavaInt parses an int as Java's Integer.decode does, which is how
// ZooKeeper reads the keys it takes as system properties (Integer.getInteger,
// Long.getLong: jute.maxbuffer, snapCount, globalOutstandingLimit, ...): an
// optional sign, then decimal digits or hex digits after 0x, 0X or #. So
// jute.maxbuffer's default is often written 0xfffff. A leading 0 stays
// decimal (Integer.decode would read it as octal).
func parseJavaInt(s string) (int, error) {
	digits, neg := s, false
	if len(digits) > 0 && (digits[0] == '-' || digits[0] == '+') {
		digits, neg = digits[1:], digits[0] == '-'
	}
	base := 10
	for _, p := range []string{"0x", "0X", "#"} {
		if rest, ok := strings.CutPrefix(digits, p); ok {
			digits, base = rest, 16
			break
		}
	}
	if digits == "" || digits[0] == '-' || digits[0] == '+' {
		return 0, errors.New("is not an integer")
	}
	n, err := strconv.ParseUint(digits, base, 32)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, errors.New("is out of range for a 32-bit integer")
		}
		return 0, errors.New("is not an integer")
	}
	v := int64(n)
	if neg {
		v = -v
	}
	if v > math.MaxInt32 || v < math.MinInt32 {
		return 0, errors.New("is out of range for a 32-bit integer")
	}
	return int(v), nil
}

// parseJavaMillis parses a count of milliseconds with parseJavaInt.
func parseJavaMillis(s string) (time.Duration, error) {
	n, err := parseJavaInt(s)
	return time.Duration(n) * time.Millisecond, err
}

// parseMillis parses an integer count of milliseconds.
func parseMillis(s string) (time.Duration, error) {
	n, err := parseInt32(s)
	return time.Duration(n) * time.Millisecond, err
}

// parseHours parses an integer count of hours.
func parseHours(s string) (time.Duration, error) {
	n, err := parseInt32(s)
	if err != nil {
		return 0, err
	}
	if int64(n) > math.MaxInt64/int64(time.Hour) || int64(n) < math.MinInt64/int64(time.Hour) {
		return 0, errors.New("is too many hours")
	}
	return time.Duration(n) * time.Hour, nil
}

// parseTimeoutBound parses a session timeout bound in ms; -1 means unset.
func parseTimeoutBound(s string) (time.Duration, bool, error) {
	n, err := parseInt32(s)
	if err != nil || n == -1 {
		return 0, false, err
	}
	return time.Duration(n) * time.Millisecond, true, nil
}

// parseBool accepts true or false in any case, as ZooKeeper's
// QuorumPeerConfig.parseBoolean does.
func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errors.New("is not true or false")
}

func parseLogFormat(s string) (string, error) {
	switch f := strings.ToLower(s); f {
	case LogFormatText, LogFormatJSON:
		return f, nil
	}
	return "", errors.New("is neither text nor json")
}

// parseLogLevel accepts debug, info, warn (or warning) and error, in any case.
func parseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, errors.New("is not one of debug, info, warn, error")
}
