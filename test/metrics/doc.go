// Package metrics checks the /metrics endpoint of the paddock binary,
// configured as ZooKeeper users configure its Prometheus provider in
// zoo.cfg (metricsProvider.className, metricsProvider.httpPort,
// metricsProvider.exportJvmInfo).
//
// # Contract
//
// The package has no non-test code. Its tests start the binary
// (internal/zktest) on free 127.0.0.1 ports, drive it with the Go client,
// scrape /metrics and parse the exposition format. The families expected are
// those listed in internal/metrics/testdata/metric_names.txt; the values are
// checked in detail by internal/server's tests.
package metrics
