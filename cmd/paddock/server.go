package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/gctune"
	"github.com/paddockhq/paddock/internal/server"
)

// serverFlags are the flags of "paddock server".
type serverFlags struct {
	configPath string
	port       int
	address    string
	dataDir    string
	logFormat  string
	logLevel   string
	// shutdown says what SIGINT/SIGTERM does.
	shutdown shutdownFlags
}

// shutdownFlags control the graceful shutdown.
type shutdownFlags struct {
	closeSessions bool
	timeout       time.Duration
}

func newServerCmd() *cobra.Command {
	var f serverFlags
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run a Paddock server until SIGINT or SIGTERM",
		Long: "Run a Paddock server. Settings come from Paddock's defaults, then the zoo.cfg\n" +
			"given with --config, then the flags, later ones winning.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.shutdown.timeout < 0 {
				return &exitError{code: exitUsage, err: fmt.Errorf("--shutdown-timeout %v is negative", f.shutdown.timeout)}
			}
			return runServer(cmd.Context(), cmd.ErrOrStderr(), f.configPath, f.shutdown, f.overrides(cmd))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.configPath, "config", "", "zoo.cfg to read (default: none, Paddock's defaults)")
	fl.IntVar(&f.port, "port", 2181, "client port (zoo.cfg clientPort); 0 picks a free port")
	fl.StringVar(&f.address, "address", "127.0.0.1", `client listen address (zoo.cfg clientPortAddress); "" for all interfaces`)
	fl.StringVar(&f.dataDir, "data-dir", "./paddock-data", "data directory (zoo.cfg dataDir)")
	fl.StringVar(&f.logFormat, "log-format", config.LogFormatText, "log format: text or json (zoo.cfg paddock.log.format)")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error (zoo.cfg paddock.log.level)")
	fl.BoolVar(&f.shutdown.closeSessions, "close-sessions-on-shutdown", false,
		"on SIGINT/SIGTERM, close the sessions of connected clients (removing their ephemeral nodes)\n"+
			"instead of leaving them to reconnect within their timeout")
	fl.DurationVar(&f.shutdown.timeout, "shutdown-timeout", 10*time.Second,
		"on SIGINT/SIGTERM, how long to wait for in-flight requests to finish before closing anyway;\n"+
			"if the shutdown has still not returned "+shutdownGrace.String()+" later, the server writes every\n"+
			"goroutine's stack to stderr and exits with status 1")
	return cmd
}

// overrides turns the flags the user set into zoo.cfg settings, so they are
// parsed and checked like file values and win over them.
func (f *serverFlags) overrides(cmd *cobra.Command) []config.Setting {
	var out []config.Setting
	add := func(flag, key, value string) {
		if cmd.Flags().Changed(flag) {
			out = append(out, config.Setting{Key: key, Value: value, Source: "flag --" + flag})
		}
	}
	add("port", "clientPort", strconv.Itoa(f.port))
	add("address", "clientPortAddress", f.address)
	add("data-dir", "dataDir", f.dataDir)
	add("log-format", "paddock.log.format", f.logFormat)
	add("log-level", "paddock.log.level", f.logLevel)
	return out
}

// runServer loads the configuration, runs the server until ctx is done and
// closes it. Errors carry their exit code.
func runServer(ctx context.Context, stderr io.Writer, configPath string, sf shutdownFlags, overrides []config.Setting) error {
	cfg, warnings, err := config.Load(configPath, overrides...)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	logger := newLogger(stderr, cfg)
	for _, w := range warnings {
		logger.Warn("config warning", "detail", w)
	}
	for _, k := range cfg.IgnoredKeys {
		logger.Debug("config key ignored by Paddock", "key", k)
	}

	stopGC := tuneGC(cfg, logger)
	defer stopGC()

	srv, err := server.New(cfg, logger)
	if err != nil {
		return &exitError{code: exitFailure, err: fmt.Errorf("creating server: %w", err)}
	}
	if err := srv.Start(); err != nil {
		return &exitError{code: exitFailure, err: errors.Join(fmt.Errorf("starting server: %w", err), srv.Close())}
	}
	addr := "unknown"
	if a := srv.Addr(); a != nil {
		addr = a.String()
	}
	logger.Info("paddock serving", "addr", addr, "dataDir", cfg.DataDir,
		"dataLogDir", cfg.DataLogDir, "serverID", cfg.ServerID, "standalone", cfg.Standalone())

	select {
	case <-ctx.Done():
	case <-srv.Failed():
		// The node stopped by itself (a WAL it could not write): exit
		// with a failure, as ZooKeeper's server does when it goes into
		// its error state, so that a supervisor restarts the process
		// rather than keep one that serves nothing.
		if err := srv.Err(); err != nil {
			cerr := srv.Close()
			return &exitError{code: exitFailure, err: errors.Join(fmt.Errorf("server failed: %w", err), cerr)}
		}
		<-ctx.Done()
	}
	logger.Info("shutting down: finishing in-flight requests", "cause", context.Cause(ctx),
		"closeSessions", sf.closeSessions, "timeout", sf.timeout)
	sctx, cancel := context.WithTimeout(context.Background(), sf.timeout)
	defer cancel()
	shutdown := func() error { return srv.Shutdown(sctx, sf.closeSessions) }
	err = waitShutdown(shutdown, sf.timeout+shutdownGrace, logger, stderr)
	if cut, rest := splitCutShort(err); cut != nil {
		// The timeout was reached: what was still in flight was cut
		// short, as --shutdown-timeout says ("closing anyway"). The
		// server still closed; only a failure to close is one.
		logger.Warn("shutdown timeout reached: closed with requests or session closes still in flight",
			"timeout", sf.timeout, "detail", cut)
		err = rest
	}
	if err != nil {
		return &exitError{code: exitFailure, err: fmt.Errorf("closing server: %w", err)}
	}
	logger.Info("stopped")
	return nil
}

// splitCutShort separates, in the error of a shutdown, the parts saying that
// --shutdown-timeout cut the drain or the closing of sessions short (they
// wrap context.DeadlineExceeded) from the rest (a failure to close).
func splitCutShort(err error) (cut, rest error) {
	if err == nil {
		return nil, nil
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	var cuts, rests []error
	for _, e := range errs {
		if errors.Is(e, context.DeadlineExceeded) {
			cuts = append(cuts, e)
		} else {
			rests = append(rests, e)
		}
	}
	return errors.Join(cuts...), errors.Join(rests...)
}

// shutdownGrace is how long runServer waits, past --shutdown-timeout, for the
// server's shutdown to return. The timeout bounds the wait for in-flight
// requests, not the final close of listeners, connections and storage; if
// that close hangs, the process dumps its goroutine stacks and exits anyway
// rather than ignore SIGTERM (a supervisor or test harness waiting for the
// exit would hang with it).
const shutdownGrace = 5 * time.Second

// waitShutdown runs shutdown in a goroutine and returns its error if it
// returns within limit. Otherwise it logs an error, writes the stack of every
// goroutine to stacks (so the hang can be diagnosed from the log) and returns
// an error saying the shutdown did not finish; shutdown keeps running in its
// goroutine, which the caller is expected to abandon by exiting.
func waitShutdown(shutdown func() error, limit time.Duration, logger *slog.Logger, stacks io.Writer) error {
	done := make(chan error, 1) // buffered: a late shutdown must not block forever
	go func() { done <- shutdown() }()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
	}
	logger.Error(fmt.Sprintf("shutdown did not finish within %v; exiting anyway", limit),
		"limit", limit, "stacks", "all goroutines follow on stderr")
	err := fmt.Errorf("shutdown did not finish within %v; exited anyway", limit)
	if werr := pprof.Lookup("goroutine").WriteTo(stacks, 2); werr != nil {
		err = errors.Join(err, fmt.Errorf("writing goroutine stacks: %w", werr))
	}
	return err
}

// tuneGC applies paddock.gcHeadroomMB (internal/gctune) to this process,
// unless the GOGC environment variable says what the user wants instead.
// It returns the function that ends the tuning.
func tuneGC(cfg *config.Config, logger *slog.Logger) (stop func()) {
	if cfg.GCHeadroom == 0 {
		return func() {}
	}
	if v, ok := os.LookupEnv("GOGC"); ok {
		logger.Info("GOGC is set; paddock.gcHeadroomMB not applied", "GOGC", v)
		return func() {}
	}
	return gctune.Start(cfg.GCHeadroom).Stop
}

// newLogger builds the process logger on w from the configured format and
// level.
func newLogger(w io.Writer, cfg *config.Config) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == config.LogFormatJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
