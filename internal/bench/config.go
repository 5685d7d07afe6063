package bench

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Workload names.
const (
	WorkloadCreate         = "create"          // create a new znode per call
	WorkloadSet            = "set"             // setData on a random key
	WorkloadGet            = "get"             // getData on a random key
	WorkloadExists         = "exists"          // exists on a random key
	WorkloadChildren       = "children"        // getChildren of a random key (childrenPerKey children each)
	WorkloadMixed          = "mixed"           // get with probability ReadRatio, else set
	WorkloadMulti          = "multi"           // a multi of MultiOps setData calls on random keys
	WorkloadEphemeralChurn = "ephemeral-churn" // create an ephemeral znode, then delete it
	WorkloadSessions       = "sessions"        // connect a session and close it
	WorkloadWatchFanout    = "watch-fanout"    // Watchers sessions watch one znode; one write fires them all
	WorkloadPopulate       = "populate"        // create Znodes znodes in a tree
)

// Workloads lists every workload name, in the order the help shows them.
var Workloads = []string{
	WorkloadCreate, WorkloadSet, WorkloadGet, WorkloadExists, WorkloadChildren,
	WorkloadMixed, WorkloadMulti, WorkloadEphemeralChurn, WorkloadSessions,
	WorkloadWatchFanout, WorkloadPopulate,
}

// Defaults of Config's fields (DefaultConfig).
const (
	DefaultSessions  = 16
	DefaultInflight  = 16
	DefaultDuration  = 10 * time.Second
	DefaultValueSize = 100
	DefaultKeys      = 1000
	DefaultReadRatio = 0.8 // the 80/20 read/write mix Paddock's targets are stated for
	DefaultMultiOps  = 10
	DefaultWatchers  = 16
	DefaultZnodes    = 100_000

	// DefaultSessionTimeout is the session timeout the bench sessions ask for.
	DefaultSessionTimeout = 30 * time.Second
)

// childrenPerKey is how many children each key gets in the children
// workload, so that getChildren returns a list.
const childrenPerKey = 10

// populateFanout is how many znodes the populate workload puts under each of
// its parents.
const populateFanout = 1000

// Config says what to run. Start from DefaultConfig; Validate checks it.
type Config struct {
	// Servers is the connect string: "host1:port1,host2:port2[/chroot]".
	Servers string
	// Workload is one of Workloads.
	Workload string
	// Sessions is the number of sessions driving the load (for
	// watch-fanout: ignored, see Watchers).
	Sessions int
	// Inflight is the number of asynchronous calls each session keeps
	// outstanding (ignored by sessions and watch-fanout).
	Inflight int
	// Duration is the length of the measured window when Ops is 0.
	Duration time.Duration
	// Rate, when positive, runs an open loop: calls are issued on a fixed
	// schedule, Rate a second in all, to the sessions in turn, whether or not
	// earlier calls have completed, and each call's latency is counted from
	// the time it was due, so that a stalled server shows as latency instead
	// of as fewer calls. Inflight then caps each session's outstanding calls;
	// a call due while its session is at the cap waits (and that wait is
	// part of its latency; the other sessions' calls do not wait). A call is
	// measured when it was due in the measured window, whenever it was sent.
	// 0 runs closed loops: each session keeps Inflight calls outstanding.
	// Not for sessions, watch-fanout or populate.
	Rate float64
	// Ops, when positive, ends the measured window after this many calls
	// (watch-fanout: rounds; sessions: connect-and-close cycles) instead of
	// after Duration.
	Ops int64
	// Warmup runs the workload for this long before measuring (not for
	// populate).
	Warmup time.Duration
	// ValueSize is the size in bytes of the data written by creates and sets.
	ValueSize int
	// Keys is the number of keys that set, get, exists, children, mixed and
	// multi pick from at random.
	Keys int
	// ReadRatio is the fraction of gets in the mixed workload, in [0, 1].
	ReadRatio float64
	// MultiOps is the number of operations in each multi.
	MultiOps int
	// Watchers is the number of watching sessions in watch-fanout.
	Watchers int
	// Znodes is the number of znodes populate creates.
	Znodes int64
	// Keep leaves the run's root in place at the end; DefaultConfig sets it
	// for populate only (see KeepDefault).
	Keep bool
	// ServerPIDs are server processes whose CPU time and RSS are reported.
	ServerPIDs []int
	// SessionTimeout is the session timeout the sessions ask for.
	SessionTimeout time.Duration
	// ProcDir is the proc file system's mount point; "" means "/proc".
	ProcDir string
	// Progress, when not nil, receives a progress line about once a second
	// (rewritten in place with '\r'); meant for a terminal.
	Progress io.Writer
	// ProgressInterval is the time between progress lines; 0 means 1 s.
	ProgressInterval time.Duration
	// Samples, when not nil, receives every measured successful call as a
	// CSV line "start_us,latency_us" (start: Unix time in µs when the call
	// was issued, or was due with Rate; latency in µs), ordered by start,
	// after the run. For telling apart the calls made during some event,
	// such as a snapshot, from the others.
	Samples io.Writer
}

// DefaultConfig returns the defaults for workload.
func DefaultConfig(servers, workload string) Config {
	return Config{
		Servers:        servers,
		Workload:       workload,
		Sessions:       DefaultSessions,
		Inflight:       DefaultInflight,
		Duration:       DefaultDuration,
		ValueSize:      DefaultValueSize,
		Keys:           DefaultKeys,
		ReadRatio:      DefaultReadRatio,
		MultiOps:       DefaultMultiOps,
		Watchers:       DefaultWatchers,
		Znodes:         DefaultZnodes,
		Keep:           KeepDefault(workload),
		SessionTimeout: DefaultSessionTimeout,
	}
}

// paceable reports whether the workload's calls can be issued on a
// schedule (Config.Rate): those that repeat one asynchronous call.
func paceable(w string) bool {
	switch w {
	case WorkloadSessions, WorkloadWatchFanout, WorkloadPopulate:
		return false
	}
	return true
}

// KeepDefault reports whether a workload keeps its root by default: only
// populate does, as its tree is what is measured afterwards.
func KeepDefault(workload string) bool { return workload == WorkloadPopulate }

// Validate reports every invalid setting at once.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Servers == "" {
		bad("servers: empty connect string")
	}
	known := false
	for _, w := range Workloads {
		known = known || w == c.Workload
	}
	if !known {
		bad("workload: %q is not one of %s", c.Workload, strings.Join(Workloads, ", "))
	}
	if c.Sessions < 1 {
		bad("sessions: %d, want at least 1", c.Sessions)
	}
	if c.Inflight < 1 {
		bad("inflight: %d, want at least 1", c.Inflight)
	}
	switch {
	case c.Rate < 0:
		bad("rate: %v, want 0 (closed loops) or a number of calls a second", c.Rate)
	case c.Rate > 0 && !paceable(c.Workload):
		bad("rate: the %s workload runs closed loops only", c.Workload)
	}
	if c.Ops < 0 {
		bad("ops: %d, want 0 (use the duration) or more", c.Ops)
	}
	if c.Ops == 0 && c.Duration <= 0 && c.Workload != WorkloadPopulate {
		bad("duration: %v, want a positive duration or a number of ops", c.Duration)
	}
	if c.Warmup < 0 {
		bad("warmup: %v, want 0 or more", c.Warmup)
	}
	if c.ValueSize < 0 {
		bad("value-size: %d, want 0 or more", c.ValueSize)
	}
	if c.Keys < 1 {
		bad("keys: %d, want at least 1", c.Keys)
	}
	if c.ReadRatio < 0 || c.ReadRatio > 1 {
		bad("read-ratio: %v, want a fraction in [0, 1]", c.ReadRatio)
	}
	if c.MultiOps < 1 {
		bad("multi-ops: %d, want at least 1", c.MultiOps)
	}
	if c.Watchers < 1 {
		bad("watchers: %d, want at least 1", c.Watchers)
	}
	if c.Znodes < 1 {
		bad("znodes: %d, want at least 1", c.Znodes)
	}
	seen := map[int]bool{}
	for _, pid := range c.ServerPIDs {
		switch {
		case pid < 1:
			bad("server-pid: %d is not a process id", pid)
		case seen[pid]:
			bad("server-pid: %d given twice", pid)
		}
		seen[pid] = true
	}
	if c.SessionTimeout <= 0 {
		bad("session timeout: %v, want a positive duration", c.SessionTimeout)
	}
	if c.ProgressInterval < 0 {
		bad("progress interval: %v, want 0 or more", c.ProgressInterval)
	}
	return errors.Join(errs...)
}
