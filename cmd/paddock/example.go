package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/examples/masterworker"
	"github.com/paddockhq/paddock/zk"
)

// exampleFlags are the flags every "paddock example" role shares.
type exampleFlags struct {
	servers        string
	sessionTimeout time.Duration
	connectTimeout time.Duration
	verbose        bool
}

func (f *exampleFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.servers, "servers", "127.0.0.1:2181", "connect string: host:port[,host:port...][/chroot]")
	fl.DurationVar(&f.sessionTimeout, "session-timeout", 4*time.Second, "session timeout to ask for: how long a killed process stays registered")
	fl.DurationVar(&f.connectTimeout, "connect-timeout", 30*time.Second, "how long to wait for the first session")
	fl.BoolVar(&f.verbose, "verbose", false, "log every task (debug level)")
}

// connect opens the role's session and its logger (stderr, text).
func (f *exampleFlags) connect(ctx context.Context, stderr io.Writer, role string) (*zk.Conn, *slog.Logger, error) {
	level := slog.LevelInfo
	if f.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})).With("role", role)
	cctx, cancel := context.WithTimeout(ctx, f.connectTimeout)
	defer cancel()
	conn, err := zk.Connect(cctx, f.servers, zk.WithSessionTimeout(f.sessionTimeout), zk.WithLogger(logger))
	if err != nil {
		return nil, nil, &exitError{code: exitFailure, err: err}
	}
	logger.Info("session established", "session", fmt.Sprintf("0x%x", conn.SessionID()), "timeout", conn.SessionTimeout())
	return conn, logger, nil
}

// roleError turns what Run returned into the command's error.
func roleError(role string, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: exitFailure, err: fmt.Errorf("%s: %w", role, err)}
}

func newExampleCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "example",
		Short: "Run the ZooKeeper book's master-worker application (docs/master-worker.md)",
		Long: "Run a role of the master-worker application of the ZooKeeper book\n" +
			"(examples/masterworker) against any ZooKeeper-protocol ensemble. Start\n" +
			"masters, workers and a client as separate processes; kill any of them.\n" +
			"examples/masterworker/demo.sh runs the whole application.",
		Example: "  paddock example master --servers 127.0.0.1:2181 --id m1\n" +
			"  paddock example worker --servers 127.0.0.1:2181 --id 1 --work 100ms --log w1.log\n" +
			"  paddock example submit --servers 127.0.0.1:2181 --tasks 100 --results results.txt",
	}
	cmd.AddCommand(newExampleMasterCmd(), newExampleWorkerCmd(), newExampleSubmitCmd())
	return cmd
}

func newExampleMasterCmd() *cobra.Command {
	var f exampleFlags
	var id string
	cmd := &cobra.Command{
		Use:   "master",
		Short: "Run for master; as primary assign tasks, as backup wait to take over",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if id == "" {
				id = fmt.Sprintf("master-%d", os.Getpid())
			}
			conn, logger, err := f.connect(cmd.Context(), cmd.ErrOrStderr(), "master")
			if err != nil {
				return err
			}
			defer conn.Close()
			m := masterworker.NewMaster(conn, masterworker.MasterConfig{ID: id, Logger: logger})
			return roleError("master", m.Run(cmd.Context()))
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&id, "id", "", "server id, the data of /master (default: master-<pid>)")
	return cmd
}

func newExampleWorkerCmd() *cobra.Command {
	var f exampleFlags
	var (
		id       string
		parallel int
		work     time.Duration
		logPath  string
	)
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Register as a worker and execute the tasks assigned to it",
		Long: "Register as /workers/worker-<id> and execute the tasks assigned under\n" +
			"/assign/worker-<id>, each taking --work, on --parallel goroutines. With\n" +
			"--log, append to that file \"start <task> worker-<id>\" when an execution\n" +
			"begins and \"done <task> worker-<id>\" once its status is committed.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if id == "" {
				id = fmt.Sprint(os.Getpid())
			}
			journal, err := openJournal(logPath)
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			defer journal.close()
			conn, logger, err := f.connect(cmd.Context(), cmd.ErrOrStderr(), "worker")
			if err != nil {
				return err
			}
			defer conn.Close()
			name := "worker-" + id
			w := masterworker.NewWorker(conn, masterworker.WorkerConfig{
				ID:          id,
				Parallelism: parallel,
				Execute: func(ctx context.Context, task string, _ []byte) {
					journal.line("start", task, name)
					t := time.NewTimer(work)
					defer t.Stop()
					select {
					case <-t.C:
					case <-ctx.Done():
					}
				},
				OnComplete: func(task string) { journal.line("done", task, name) },
				Logger:     logger,
			})
			return roleError("worker", w.Run(cmd.Context()))
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&id, "id", "", "worker id: it registers as /workers/worker-<id> (default: the pid)")
	fl.IntVar(&parallel, "parallel", 2, "tasks executed at once")
	fl.DurationVar(&work, "work", 100*time.Millisecond, "how long each task takes")
	fl.StringVar(&logPath, "log", "", "execution log to append to (default: none)")
	return cmd
}

func newExampleSubmitCmd() *cobra.Command {
	var f exampleFlags
	var (
		tasks       int
		interval    time.Duration
		timeout     time.Duration
		resultsPath string
	)
	cmd := &cobra.Command{
		Use:   "submit",
		Short: "Submit tasks and wait until every one has a status",
		Long: "Submit --tasks tasks under /tasks, one every --interval, and wait until\n" +
			"each has a status under /status (at most --timeout). With --results,\n" +
			"append \"submitted <task>\" and \"status <task> <status>\" lines to that\n" +
			"file. Exits 0 only when every task has a status.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			journal, err := openJournal(resultsPath)
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			defer journal.close()
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			conn, logger, err := f.connect(ctx, cmd.ErrOrStderr(), "client")
			if err != nil {
				return err
			}
			defer conn.Close()
			var mu sync.Mutex
			submitted, results := 0, 0
			c := masterworker.NewClient(conn, masterworker.ClientConfig{
				Tasks:    tasks,
				Interval: interval,
				OnSubmitted: func(task string) {
					journal.line("submitted", task)
					mu.Lock()
					submitted++
					mu.Unlock()
				},
				OnResult: func(task string, status []byte) {
					journal.line("status", task, string(status))
					mu.Lock()
					results++
					mu.Unlock()
				},
				Logger: logger,
			})
			err = c.Run(ctx)
			mu.Lock()
			fmt.Fprintf(cmd.OutOrStdout(), "%d submitted, %d with a status\n", submitted, results)
			mu.Unlock()
			return roleError("client", err)
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.IntVar(&tasks, "tasks", 10, "tasks to submit")
	fl.DurationVar(&interval, "interval", 0, "pause between submissions")
	fl.DurationVar(&timeout, "timeout", time.Minute, "give up when not every task has a status by then")
	fl.StringVar(&resultsPath, "results", "", "file to append submissions and statuses to (default: none)")
	return cmd
}

// journal appends lines to a file, one write per line, so that lines of a
// process killed with SIGKILL are whole. A journal without a file does
// nothing.
type journal struct {
	mu sync.Mutex
	f  *os.File
}

func openJournal(path string) (*journal, error) {
	if path == "" {
		return &journal{}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &journal{f: f}, nil
}

func (j *journal) line(fields ...string) {
	if j.f == nil {
		return
	}
	var b []byte
	for i, s := range fields {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, s...)
	}
	b = append(b, '\n')
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(b); err != nil && !errors.Is(err, os.ErrClosed) {
		fmt.Fprintf(os.Stderr, "paddock: journal: %v\n", err)
	}
}

func (j *journal) close() {
	if j.f == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.f.Close()
}
