package metrics

import (
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Options configure a Set.
type Options struct {
	// Logger receives the slow-fsync warnings; nil discards them.
	Logger *slog.Logger
	// ExportRuntime adds the Go runtime (go_*) and process (process_*)
	// collectors, Paddock's counterpart of ZooKeeper's exportJvmInfo.
	ExportRuntime bool
	// FsyncWarningThreshold: a WAL fsync taking longer than this is logged
	// as a warning and counted. Zero warns about every fsync.
	FsyncWarningThreshold time.Duration
	// Ops names the request opcodes, for the op label of
	// paddock_request_duration_seconds; other opcodes are labelled
	// "other". Codes must lie in [-1024, 1024].
	Ops map[int32]string
	// State, if set, fills in the server's state for a scrape. It is called
	// once per scrape, possibly concurrently with itself.
	State func(*State)
}

// maxOpRange bounds the opcode table.
const maxOpRange = 1024

// Set is one server's metrics: its own Prometheus registry (never the
// global one), the collectors in it, and the observation methods the server
// calls. Every observation method is lock-free, does not allocate once the
// label children it uses exist, and does nothing on a nil *Set, so a
// server without metrics calls them at the cost of a nil check.
type Set struct {
	reg  *prometheus.Registry
	log  *slog.Logger
	slow *SlowFsyncs

	readLatency, updateLatency *Summary
	fsyncTime, snapshotTime    *Summary
	proposalLatency            *Summary
	electionTime               *Summary

	requestVec *prometheus.HistogramVec
	minOp      int32
	ops        []atomic.Pointer[observer] // by opcode - minOp
	opNames    []string                   // by opcode - minOp; "" for none
	otherOp    atomic.Pointer[observer]

	fsyncHist    prometheus.Histogram
	proposalHist prometheus.Histogram
	snapshotHist prometheus.Histogram
	snapshotSize prometheus.Gauge

	connRequests    prometheus.Counter
	connRejected    prometheus.Counter
	connDrops       prometheus.Counter
	bytesReceived   prometheus.Counter
	sessionsExpired prometheus.Counter
	looking         prometheus.Counter
}

// observer holds a resolved label child.
type observer struct{ prometheus.Observer }

// Buckets of Paddock's histograms, in seconds.
var (
	latencyBuckets  = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	snapshotBuckets = []float64{0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}
)

// NewSet builds a server's metrics as opts describes.
func NewSet(opts Options) (*Set, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Set{
		reg:  prometheus.NewRegistry(),
		log:  log,
		slow: NewSlowFsyncs(log, opts.FsyncWarningThreshold),

		readLatency:     newSummary("readlatency", "Latency of read requests (every request that is not a write), in ms.", advancedQuantiles),
		updateLatency:   newSummary("updatelatency", "Latency of write requests, from arrival to reply, in ms.", advancedQuantiles),
		fsyncTime:       newSummary("fsynctime", "Time of a write-ahead log fsync, in ms.", basicQuantiles),
		snapshotTime:    newSummary("snapshottime", "Time to write a snapshot, in ms.", basicQuantiles),
		proposalLatency: newSummary("proposal_latency", "Time from a proposal by this member to its apply on this member, in ms.", advancedQuantiles),
		electionTime:    newSummary("election_time", "Time from losing a leader (or starting) to knowing a new one, in ms.", basicQuantiles),

		requestVec: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "paddock_request_duration_seconds", Help: "Client request latency, from arrival to reply, by opcode.",
			Buckets: latencyBuckets}, []string{"op"}),
		fsyncHist: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "paddock_wal_fsync_duration_seconds", Help: "Duration of write-ahead log fsyncs.", Buckets: latencyBuckets}),
		proposalHist: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "paddock_raft_proposal_duration_seconds", Help: "Time from a proposal by this member to its apply on this member.",
			Buckets: latencyBuckets}),
		snapshotHist: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "paddock_snapshot_duration_seconds", Help: "Time to write a snapshot, from capture to durable file.",
			Buckets: snapshotBuckets}),
		snapshotSize: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "paddock_snapshot_size_bytes", Help: "Size of the newest snapshot this member wrote (0 before the first)."}),

		connRequests: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "connection_request_count", Help: "Connect requests (session handshakes) received."}),
		connRejected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "connection_rejected", Help: "Connections refused at accept (maxClientCnxns)."}),
		connDrops: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "connection_drop_count", Help: "Client connections whose client closed the socket (end of stream while reading)."}),
		bytesReceived: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "bytes_received_count", Help: "Bytes of client request frames received, length prefixes included."}),
		sessionsExpired: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "stale_sessions_expired", Help: "Sessions this member expired (the leader, or a standalone server)."}),
		looking: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "looking_count", Help: "Times this ensemble member looked for a leader: at start, then each time it lost its leader."}),
	}
	if err := s.buildOps(opts.Ops); err != nil {
		return nil, err
	}
	cs := []prometheus.Collector{
		s.readLatency, s.updateLatency, s.fsyncTime, s.snapshotTime, s.proposalLatency, s.electionTime,
		s.requestVec, s.fsyncHist, s.proposalHist, s.snapshotHist, s.snapshotSize,
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "paddock_wal_slow_fsyncs_total", Help: "Write-ahead log fsyncs slower than fsync.warningthresholdms."},
			func() float64 { return float64(s.slow.Count()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "paddock_wal_fsync_warning_threshold_seconds", Help: "fsync.warningthresholdms, in seconds."},
			func() float64 { return s.slow.Threshold().Seconds() }),
		s.connRequests, s.connRejected, s.connDrops, s.bytesReceived, s.sessionsExpired, s.looking,
	}
	if opts.State != nil {
		cs = append(cs, newStateCollector(opts.State))
	}
	if opts.ExportRuntime {
		cs = append(cs, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	for _, c := range cs {
		if err := s.reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	return s, nil
}

// buildOps lays out the opcode table.
func (s *Set) buildOps(ops map[int32]string) error {
	if len(ops) == 0 {
		return nil
	}
	lo, hi := int32(maxOpRange), int32(-maxOpRange)
	for code, name := range ops {
		if code < -maxOpRange || code > maxOpRange {
			return fmt.Errorf("metrics: opcode %d (%s) is outside [-%d, %d]", code, name, maxOpRange, maxOpRange)
		}
		if name == "" || name == "other" {
			return fmt.Errorf("metrics: opcode %d has the reserved name %q", code, name)
		}
		lo, hi = min(lo, code), max(hi, code)
	}
	s.minOp = lo
	s.ops = make([]atomic.Pointer[observer], hi-lo+1)
	s.opNames = make([]string, hi-lo+1)
	for code, name := range ops {
		s.opNames[code-lo] = name
	}
	return nil
}

// Gatherer returns the registry, for tests and handlers.
func (s *Set) Gatherer() prometheus.Gatherer { return s.reg }

// Handler serves the registry in the Prometheus exposition formats.
func (s *Set) Handler() http.Handler {
	return promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(s.log.Handler(), slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// ObserveRequest records a client request of opcode op answered d after it
// arrived; write says whether it went through the log (updatelatency) or
// not (readlatency), as ZooKeeper splits them.
func (s *Set) ObserveRequest(op int32, write bool, d time.Duration) {
	if s == nil {
		return
	}
	if write {
		s.updateLatency.Observe(d)
	} else {
		s.readLatency.Observe(d)
	}
	s.requestObserver(op).Observe(d.Seconds())
}

// requestObserver returns the histogram child of op, resolving it on first
// use.
func (s *Set) requestObserver(op int32) prometheus.Observer {
	slot, name := &s.otherOp, "other"
	if i := op - s.minOp; i >= 0 && int(i) < len(s.ops) && s.opNames[i] != "" {
		slot, name = &s.ops[i], s.opNames[i]
	}
	if o := slot.Load(); o != nil {
		return o.Observer
	}
	o := &observer{s.requestVec.WithLabelValues(name)}
	slot.CompareAndSwap(nil, o)
	return slot.Load().Observer
}

// ObserveFsync records one WAL fsync; one slower than the threshold is
// logged as a warning, as ZooKeeper's FileTxnLog does, and counted.
func (s *Set) ObserveFsync(d time.Duration) {
	if s == nil {
		return
	}
	s.fsyncTime.Observe(d)
	s.fsyncHist.Observe(d.Seconds())
	s.slow.Observe(d)
}

// ObserveSnapshot records a snapshot written in d, of the given size.
func (s *Set) ObserveSnapshot(d time.Duration, bytes int64) {
	if s == nil {
		return
	}
	s.snapshotTime.Observe(d)
	s.snapshotHist.Observe(d.Seconds())
	s.snapshotSize.Set(float64(bytes))
}

// ObserveProposal records a proposal applied d after this member proposed it.
func (s *Set) ObserveProposal(d time.Duration) {
	if s == nil {
		return
	}
	s.proposalLatency.Observe(d)
	s.proposalHist.Observe(d.Seconds())
}

// ObserveElection records an election that took d.
func (s *Set) ObserveElection(d time.Duration) {
	if s == nil {
		return
	}
	s.electionTime.Observe(d)
}

// Looking counts a loss of the leader.
func (s *Set) Looking() {
	if s != nil {
		s.looking.Inc()
	}
}

// ConnectionRequested counts a ConnectRequest.
func (s *Set) ConnectionRequested() {
	if s != nil {
		s.connRequests.Inc()
	}
}

// ConnectionRejected counts a connection refused at accept.
func (s *Set) ConnectionRejected() {
	if s != nil {
		s.connRejected.Inc()
	}
}

// ConnectionDropped counts a connection its client closed.
func (s *Set) ConnectionDropped() {
	if s != nil {
		s.connDrops.Inc()
	}
}

// BytesReceived counts n bytes received from a client.
func (s *Set) BytesReceived(n int) {
	if s != nil {
		s.bytesReceived.Add(float64(n))
	}
}

// SessionExpired counts a session this server expired.
func (s *Set) SessionExpired() {
	if s != nil {
		s.sessionsExpired.Inc()
	}
}
