package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/internal/bench"
)

func newBenchCmd() *cobra.Command {
	cfg := bench.DefaultConfig("127.0.0.1:2181", bench.WorkloadSet)
	var asJSON bool
	var samplesPath string
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Load a ZooKeeper-protocol server and report throughput and latency",
		Long: "Drive a workload against any ZooKeeper-protocol server (Paddock or Apache\n" +
			"ZooKeeper) from many sessions with many asynchronous calls in flight, then\n" +
			"report ops/s, latency percentiles and errors (docs/bench.md).\n\n" +
			"Workloads: " + strings.Join(bench.Workloads, ", ") + ".",
		Example: "  paddock bench --servers 127.0.0.1:2181 --workload set --duration 10s\n" +
			"  paddock bench --servers h1:2181,h2:2181 --workload mixed --read-ratio 0.9 --json\n" +
			"  paddock bench --servers 127.0.0.1:2181 --workload set --rate 20000 --duration 30s\n" +
			"  paddock bench --workload watch-fanout --watchers 50 --ops 200 --server-pid 4242",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("keep") {
				cfg.Keep = bench.KeepDefault(cfg.Workload)
			}
			if isTerminal(cmd.ErrOrStderr()) {
				cfg.Progress = cmd.ErrOrStderr()
			}
			if samplesPath != "" {
				f, err := os.Create(samplesPath)
				if err != nil {
					return &exitError{code: exitUsage, err: fmt.Errorf("bench: samples: %w", err)}
				}
				cfg.Samples = f
				err = runBench(cmd.Context(), cmd.OutOrStdout(), cfg, asJSON)
				if cerr := f.Close(); cerr != nil && err == nil {
					err = &exitError{code: exitFailure, err: fmt.Errorf("bench: samples: %w", cerr)}
				}
				return err
			}
			return runBench(cmd.Context(), cmd.OutOrStdout(), cfg, asJSON)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfg.Servers, "servers", cfg.Servers, "connect string: host:port[,host:port...][/chroot]")
	fl.StringVar(&cfg.Workload, "workload", cfg.Workload, "workload: "+strings.Join(bench.Workloads, ", "))
	fl.IntVar(&cfg.Sessions, "sessions", cfg.Sessions, "sessions driving the load (sessions: concurrent connect-close loops)")
	fl.IntVar(&cfg.Inflight, "inflight", cfg.Inflight, "asynchronous calls each session keeps in flight")
	fl.Float64Var(&cfg.Rate, "rate", 0, "issue this many calls a second on a fixed schedule (open loop; latency counted from each call's due time; --inflight caps each session's outstanding calls); 0: closed loops")
	fl.DurationVar(&cfg.Duration, "duration", cfg.Duration, "length of the measured window (when --ops is 0)")
	fl.Int64Var(&cfg.Ops, "ops", 0, "end the measured window after this many calls instead (watch-fanout: rounds)")
	fl.DurationVar(&cfg.Warmup, "warmup", 0, "run the workload this long before measuring")
	fl.IntVar(&cfg.ValueSize, "value-size", cfg.ValueSize, "bytes of data per create or set")
	fl.IntVar(&cfg.Keys, "keys", cfg.Keys, "keys to pick from at random (set, get, exists, children, mixed, multi)")
	fl.Float64Var(&cfg.ReadRatio, "read-ratio", cfg.ReadRatio, "fraction of gets in the mixed workload (the rest are sets)")
	fl.IntVar(&cfg.MultiOps, "multi-ops", cfg.MultiOps, "setData operations per multi (multi workload)")
	fl.IntVar(&cfg.Watchers, "watchers", cfg.Watchers, "watching sessions (watch-fanout)")
	fl.Int64Var(&cfg.Znodes, "znodes", cfg.Znodes, "znodes to create (populate)")
	fl.BoolVar(&cfg.Keep, "keep", false, "keep the run's /bench-<random> tree (default: only for populate)")
	fl.IntSliceVar(&cfg.ServerPIDs, "server-pid", nil, "server process id(s) on this machine: report server CPU µs/op and RSS (repeat or comma-separate)")
	fl.DurationVar(&cfg.SessionTimeout, "session-timeout", cfg.SessionTimeout, "session timeout the sessions ask for")
	fl.StringVar(&samplesPath, "samples", "", "write every measured call to this file as CSV lines start_us,latency_us (start: Unix µs when issued, or due with --rate)")
	fl.BoolVar(&asJSON, "json", false, "print the result as one JSON object on the last line of stdout")
	return cmd
}

// runBench runs the benchmark and prints its result. An interrupted run
// still prints what it measured.
func runBench(ctx context.Context, stdout io.Writer, cfg bench.Config, asJSON bool) error {
	if err := cfg.Validate(); err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("bench: %w", err)}
	}
	res, err := bench.Run(ctx, cfg)
	if res != nil {
		var werr error
		if asJSON {
			werr = res.WriteJSON(stdout)
		} else {
			werr = res.WriteTable(stdout)
		}
		err = errors.Join(err, werr)
	}
	if err != nil {
		return &exitError{code: exitFailure, err: err}
	}
	return nil
}

// isTerminal reports whether w is a character device, such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
