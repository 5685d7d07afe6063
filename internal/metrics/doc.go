// Package metrics exports a Paddock server's metrics in the Prometheus
// format, under ZooKeeper's metric names where ZooKeeper has an equivalent
// (so dashboards made for ZooKeeper's PrometheusMetricsProvider keep working)
// and under a paddock_ prefix for Paddock's own.
//
// A [Set] owns one Prometheus registry, made for the server (never the
// global default registry), and everything registered in it:
//
//   - ZooKeeper-style summaries (readlatency, updatelatency, fsynctime,
//     snapshottime, proposal_latency, election_time): a count, a sum and
//     quantiles of durations in milliseconds, as ZooKeeper's provider exports
//     them, the quantiles over about the last ten minutes. See [Summary].
//   - ZooKeeper's gauges and Paddock's, read once per scrape from a [State]
//     that the server fills in through Options.State.
//   - Counters and histograms the server feeds through the observation
//     methods (ObserveRequest, ObserveFsync, ConnectionRejected, ...).
//   - Optionally, the Go runtime and process collectors.
//
// # Hot path
//
// The observation methods are called on the request path and from the raft
// goroutine. They take no lock and do not allocate (a histogram's label
// child is resolved once per opcode, then kept), and on a nil *Set they do
// nothing, so a server without metrics pays one nil check per call.
//
// # Slow fsync
//
// [SlowFsyncs] logs a warning naming the duration and the threshold for
// every WAL fsync slower than zoo.cfg's fsync.warningthresholdms, as
// ZooKeeper's FileTxnLog warns, and counts them. A server without metrics
// uses one alone; a Set's ObserveFsync feeds its own and exports the count
// as paddock_wal_slow_fsyncs_total.
//
// # Serving
//
// [Listen] serves a handler (Set.Handler) at /metrics on its own HTTP
// listener, and [Endpoint.Close] stops it. The package knows nothing about
// the server: internal/server wires it (internal/server/metrics.go).
package metrics
