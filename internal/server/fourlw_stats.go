package server

import (
	"math"
	"math/big"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"
)

// buildDateLayout is the "built on" date of ZooKeeper 3.4's version string
// ("03/06/2019 16:18 GMT"). ZooKeeper 3.5+ prints "2024-02-12 22:16 UTC",
// but go-zookeeper's FLWSrvr only parses the older form, so Paddock keeps it.
const buildDateLayout = "01/02/2006 15:04 MST"

// fullVersion is ZooKeeper's Version.getFullVersion(): the version and its
// build date, as srvr, stat, envi and mntr print it.
func fullVersion() string {
	return Version + ", built on " + buildTime().UTC().Format(buildDateLayout)
}

// buildTime returns when this binary's source was committed (the vcs.time Go
// stamps into the build), else the executable's modification time, else the
// Unix epoch.
func buildTime() time.Time {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.time" {
				if t, err := time.Parse(time.RFC3339, s.Value); err == nil {
					return t
				}
			}
		}
	}
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			return fi.ModTime()
		}
	}
	return time.Unix(0, 0)
}

// zkAverage rounds an average to four decimal places, half up, as
// ZooKeeper's AvgMinMaxCounter.getAvg does with BigDecimal (on the exact
// binary value of the double).
func zkAverage(avg float64) float64 {
	if avg <= 0 || math.IsNaN(avg) || math.IsInf(avg, 0) {
		return 0
	}
	r := new(big.Rat).SetFloat64(avg)
	r.Mul(r, big.NewRat(10000, 1))
	r.Add(r, big.NewRat(1, 2))
	n := new(big.Int).Quo(r.Num(), r.Denom()) // floor: r is positive
	f, _ := new(big.Rat).SetFrac(n, big.NewInt(10000)).Float64()
	return f
}

// javaDouble formats v as Java's Double.toString does: plain decimal with at
// least one fractional digit for 1e-3 <= |v| < 1e7, otherwise computerized
// scientific notation ("1.0E7", "1.0E-4").
func javaDouble(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	case v == 0:
		if math.Signbit(v) {
			return "-0.0"
		}
		return "0.0"
	}
	if a := math.Abs(v); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(v, 'e', -1, 64) // "1.5e+07", "1e-04"
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// hex64 formats v as Java's Long.toHexString: two's complement, no sign.
func hex64(v int64) string { return strconv.FormatUint(uint64(v), 16) }

// intAvg is the integer average latency in milliseconds, as ZooKeeper's
// ServerCnxn.getAvgLatency (long division) reports it for cons.
func (l *latency) intAvg() int64 {
	cnt := l.cnt.Load()
	if cnt == 0 {
		return 0
	}
	return l.total.Load() / cnt
}

// connInfo is one open connection as the four-letter words see it.
type connInfo struct {
	c *conn
	// sessionID is the session attached to the connection; 0 for a
	// connection without one (a four-letter word, or a handshake still in
	// progress).
	sessionID int64
	// timeout is the negotiated session timeout in milliseconds; 0 without
	// a session.
	timeout int32
}

// connInfos returns the open connections, oldest first. A connection's
// session fields are read only once it is attached (under connMu), so a
// handshake in progress is never read half-written.
func (s *Server) connInfos() []connInfo {
	s.connMu.Lock()
	attached := make(map[*conn]int64, len(s.bySession))
	for id, c := range s.bySession {
		attached[c] = id
	}
	out := make([]connInfo, 0, len(s.conns))
	for c := range s.conns {
		ci := connInfo{c: c}
		if id, ok := attached[c]; ok {
			ci.sessionID, ci.timeout = id, c.timeout
		}
		out = append(out, ci)
	}
	s.connMu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].c, out[j].c
		if !a.stats.established.Equal(b.stats.established) {
			return a.stats.established.Before(b.stats.established)
		}
		return a.remote < b.remote
	})
	return out
}

// cnxnExpiryInterval is the bucket width of ZooKeeper's connection expiry
// queue (NIOServerCnxnFactory: zookeeper.nio.sessionlessCnxnTimeout, 10 s).
const cnxnExpiryInterval = 10 * time.Second

// expiry estimates when ZooKeeper's NIOServerCnxnFactory would expire the
// connection: its last activity plus its session timeout (the handshake
// timeout without a session), rounded up to the next cnxnExpiryInterval.
func (s *Server) expiry(ci connInfo) time.Time {
	cs := &ci.c.stats
	last := cs.established
	cs.mu.Lock()
	if cs.lastActive.After(last) {
		last = cs.lastActive
	}
	cs.mu.Unlock()
	timeout := s.cfg.HandshakeTimeout
	if ci.sessionID != 0 {
		timeout = time.Duration(ci.timeout) * time.Millisecond
	}
	iv := cnxnExpiryInterval.Milliseconds()
	ms := last.Add(timeout).UnixMilli()
	return time.UnixMilli((ms/iv + 1) * iv)
}

// zkNodeCount converts a count of znodes to what ZooKeeper reports as its
// node count: ZooKeeper's DataTree stores the root twice (as "" and "/"),
// so its count is one more than the number of znodes.
func zkNodeCount(znodes int) int { return znodes + 1 }
