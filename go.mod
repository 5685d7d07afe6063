module github.com/paddockhq/paddock

go 1.26.8

// Direct dependencies, each the well-kept library made for its job:
//   - go.etcd.io/raft/v3: consensus; Paddock orders every state change
//     through it and writes no consensus of its own (internal/raftnode).
//   - github.com/spf13/cobra, github.com/spf13/pflag: the paddock command's
//     subcommands and flags (cmd/paddock).
//   - github.com/go-zookeeper/zk: tests only — a real third-party ZooKeeper
//     client for compatibility tests and the side-by-side benchmark.
//   - github.com/HdrHistogram/hdrhistogram-go: latency histograms (bounded
//     memory, 0.1% precision percentiles) for "paddock bench" (internal/bench).
//   - gonum.org/v1/plot: the charts of the generated benchmark report
//     (internal/benchreport, scripts/benchreport); not linked into paddock.
//   - github.com/anishathalye/porcupine: tests only — linearizability
//     checking of ensemble histories under faults (test/consistency).
//   - github.com/prometheus/client_golang: the /metrics endpoint in
//     Prometheus' exposition format, with Go runtime and process collectors
//     (internal/metrics); its companions github.com/prometheus/client_model
//     and github.com/prometheus/common (expfmt) parse what /metrics serves
//     in tests.
//   - github.com/peterh/liner: line editing, history and tab completion of
//     "paddock cli" in a terminal (internal/cli/term); small, no cgo.
//   - github.com/creack/pty: tests only — drives "paddock cli" through a
//     pseudo-terminal to test completion and history.
//   - golang.org/x/sys: sync_file_range(2), so a snapshot's pages go to
//     disk while it is written instead of in one burst at its fsync
//     (internal/storage); already in the build through client_golang.
require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0
	github.com/anishathalye/porcupine v1.3.1
	github.com/go-zookeeper/zk v1.0.4
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	go.etcd.io/raft/v3 v3.6.0
	gonum.org/v1/plot v0.17.0
)

require (
	github.com/creack/pty v1.1.24
	github.com/peterh/liner v1.2.3
	github.com/prometheus/client_golang v1.25.0
	github.com/prometheus/client_model v0.6.3
	github.com/prometheus/common v0.72.0
	golang.org/x/sys v0.48.0
)

require (
	codeberg.org/go-fonts/liberation v0.5.0 // indirect
	codeberg.org/go-latex/latex v0.2.0 // indirect
	codeberg.org/go-pdf/fpdf v0.11.1 // indirect
	git.sr.ht/~sbinet/gg v0.7.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/clipperhouse/uax29/v2 v2.7.0 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/mattn/go-runewidth v0.0.31 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	golang.org/x/image v0.30.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
