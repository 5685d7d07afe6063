package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"
)

// Result is what a run measured. Its JSON form is the --json output.
type Result struct {
	Workload  string   `json:"workload"`
	Servers   string   `json:"servers"`
	Sessions  int      `json:"sessions"`
	Inflight  int      `json:"inflight"`
	Rate      float64  `json:"rate,omitempty"` // open loop: calls scheduled a second
	ValueSize int      `json:"value_size"`
	Keys      int      `json:"keys,omitempty"`       // workloads that use keys
	ReadRatio *float64 `json:"read_ratio,omitempty"` // mixed
	MultiOps  int      `json:"multi_ops,omitempty"`  // multi
	Watchers  int      `json:"watchers,omitempty"`   // watch-fanout
	Znodes    int64    `json:"znodes,omitempty"`     // populate

	WarmupS   float64 `json:"warmup_s"`
	DurationS float64 `json:"duration_s"` // the measured window, until the last call completed
	Ops       int64   `json:"ops"`
	OpsPerS   float64 `json:"ops_per_s"`
	Errors    int64   `json:"errors"`
	// ErrorCounts counts the errors of the measured window by cause
	// ("zk: connection loss", ...).
	ErrorCounts  map[string]int64 `json:"error_counts,omitempty"`
	WarmupErrors int64            `json:"warmup_errors,omitempty"`

	// Latency is from each call to its callback (sessions: a whole
	// connect-and-close cycle; watch-fanout: the write).
	Latency Percentiles `json:"latency_us"`
	// SendLate (open loop, Config.Rate) is how late the load generator
	// sent each call after it could have: after its due time or, when the
	// session had no idle call then, after one completed. It is the
	// generator's own lateness (a timer that fires late, its goroutines
	// waiting for a CPU) and is part of Latency, which counts from the due
	// time; LatencyLessSendLate is each call's latency less it: the time
	// the call spent in flight plus any wait for an idle call, the part
	// the server is answerable for. Successful measured calls only.
	SendLate            *Percentiles `json:"send_late_us,omitempty"`
	LatencyLessSendLate *Percentiles `json:"latency_less_send_late_us,omitempty"`
	// FanoutLatency (watch-fanout) is, per round, the time from the write
	// until the last of the watchers was notified; NotifyLatency the time
	// until each single notification; RoundLatency the time until the
	// round was over: every watcher notified and watching again, the
	// write answered. A round whose re-registrations wait (as ZooKeeper
	// sometimes keeps one until the next ping) shows only here.
	FanoutLatency *Percentiles `json:"fanout_latency_us,omitempty"`
	NotifyLatency *Percentiles `json:"notify_latency_us,omitempty"`
	RoundLatency  *Percentiles `json:"round_latency_us,omitempty"`

	// Server process figures, with --server-pid: CPU time over the measured
	// window per op (all processes together), RSS at its end (summed).
	ServerCPUUsPerOp *float64     `json:"server_cpu_us_per_op,omitempty"`
	ServerRSSBytes   *int64       `json:"server_rss_bytes,omitempty"`
	ServerProcs      []ServerProc `json:"server_procs,omitempty"`
	// ClientCPUUsPerOp is this process's own CPU time (the load
	// generator's: every session, the client library, the bookkeeping)
	// over the measured window per op; absent where the platform does not
	// tell it or no op succeeded.
	ClientCPUUsPerOp *float64 `json:"client_cpu_us_per_op,omitempty"`

	// Root is the run's znode; Kept says it was left in place.
	Root string `json:"root"`
	Kept bool   `json:"kept"`
	// CleanupErrors counts the cleanup's calls that failed, CleanupError
	// is the first one's error; CleanupDeleted counts the znodes the
	// cleanup deleted.
	CleanupErrors  int64  `json:"cleanup_errors"`
	CleanupError   string `json:"cleanup_error,omitempty"`
	CleanupDeleted int64  `json:"cleanup_deleted"`
	// Interrupted says the run was cancelled before its end.
	Interrupted bool `json:"interrupted,omitempty"`
}

// ServerProc is one server process's share of the figures.
type ServerProc struct {
	PID      int     `json:"pid"`
	CPUUs    float64 `json:"cpu_us"`
	RSSBytes int64   `json:"rss_bytes"`
}

// WriteJSON writes r as one line of JSON.
func (r *Result) WriteJSON(w io.Writer) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteTable writes r for a person to read: the settings and counts, the
// latency percentiles, then the server figures and the root.
func (r *Result) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, format string, args ...any) {
		fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, args...)...)
	}
	section := func() {
		tw.Flush()
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	}

	row("workload", "%s", r.Workload)
	row("servers", "%s", r.Servers)
	switch r.Workload {
	case WorkloadWatchFanout:
		row("watchers", "%d (+1 writer)", r.Watchers)
	case WorkloadSessions:
		row("sessions", "%d concurrent", r.Sessions)
	default:
		row("sessions", "%d x %d in flight", r.Sessions, r.Inflight)
	}
	if r.Rate > 0 {
		row("rate", "%.0f calls/s scheduled (open loop: latency from each call's due time)", r.Rate)
	}
	if r.ReadRatio != nil {
		row("read ratio", "%.2f", *r.ReadRatio)
	}
	if r.MultiOps > 0 {
		row("ops per multi", "%d", r.MultiOps)
	}
	if r.Znodes > 0 {
		row("znodes", "%d", r.Znodes)
	}
	row("value size", "%d B", r.ValueSize)
	row("duration", "%.2f s (warm-up %.2f s)", r.DurationS, r.WarmupS)
	row("ops", "%d", r.Ops)
	row("ops/s", "%.0f", r.OpsPerS)
	row("errors", "%d", r.Errors)
	for _, k := range slices.Sorted(maps.Keys(r.ErrorCounts)) {
		row("", "%d %s", r.ErrorCounts[k], k)
	}
	if r.WarmupErrors > 0 {
		row("warm-up errors", "%d", r.WarmupErrors)
	}

	section()
	fmt.Fprintln(tw, "latency µs\tp50\tp90\tp99\tp99.9\tmax\tmean")
	pct := func(name string, p Percentiles) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%.0f\n", name, p.P50, p.P90, p.P99, p.P999, p.Max, p.Mean)
	}
	name := "call"
	switch r.Workload {
	case WorkloadWatchFanout:
		name = "write"
	case WorkloadSessions:
		name = "connect+close"
	}
	pct(name, r.Latency)
	if r.LatencyLessSendLate != nil {
		pct(name+" less send lateness", *r.LatencyLessSendLate)
	}
	if r.SendLate != nil {
		pct("send lateness", *r.SendLate)
	}
	if r.FanoutLatency != nil {
		pct("all notified", *r.FanoutLatency)
	}
	if r.NotifyLatency != nil {
		pct("each notified", *r.NotifyLatency)
	}
	if r.RoundLatency != nil {
		pct("round over", *r.RoundLatency)
	}

	section()
	if r.ServerCPUUsPerOp != nil {
		row("server CPU", "%.1f µs/op", *r.ServerCPUUsPerOp)
	}
	if r.ServerRSSBytes != nil {
		row("server RSS", "%.1f MiB", float64(*r.ServerRSSBytes)/(1<<20))
	}
	if len(r.ServerProcs) > 1 {
		for _, p := range r.ServerProcs {
			row("", "pid %d: %.0f µs CPU, %.1f MiB RSS", p.PID, p.CPUUs, float64(p.RSSBytes)/(1<<20))
		}
	}
	if r.ClientCPUUsPerOp != nil {
		row("client CPU", "%.1f µs/op", *r.ClientCPUUsPerOp)
	}
	switch {
	case r.Kept:
		row("root", "%s (kept)", r.Root)
	case r.CleanupErrors == 0:
		row("root", "%s (deleted)", r.Root)
	case r.CleanupDeleted == 0:
		row("root", "%s (not deleted: %s)", r.Root, r.CleanupError)
	default:
		row("root", "%s (partly deleted, %d znodes: %s)", r.Root, r.CleanupDeleted, r.CleanupError)
	}
	if r.CleanupErrors > 0 {
		row("cleanup errors", "%d", r.CleanupErrors)
	}
	if r.Interrupted {
		row("interrupted", "yes: the figures cover the run until then")
	}
	return tw.Flush()
}
