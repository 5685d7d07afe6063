package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/term"
)

// cliFlags are the flags of "paddock cli", zkCli.sh's.
type cliFlags struct {
	server            string
	timeoutMS         int
	json              bool
	readOnly          bool
	waitForConnection bool
	clientConfig      string // zkCli's -client-configuration: refused
}

// newCLICmd builds "paddock cli", the zkCli.sh-compatible shell.
func newCLICmd() *cobra.Command {
	var f cliFlags
	cmd := &cobra.Command{
		Use:   "cli [-server host:port] [-timeout ms] [--json] [cmd args...]",
		Short: "A ZooKeeper shell with zkCli.sh's commands and output",
		Long: "Run ZooKeeper's zkCli.sh commands against Paddock or any ZooKeeper server.\n" +
			"With a command, run it and exit (status 1 if it failed, 127 if unknown).\n" +
			"Without one, read commands from the terminal (line editing, history, completion)\n" +
			"or, when standard input is not a terminal, one per line from it.\n" +
			"Type \"help\" for the commands; see docs/cli.md.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.timeoutMS <= 0 {
				return &exitError{code: exitUsage, err: fmt.Errorf("cli: -timeout must be positive, got %d", f.timeoutMS)}
			}
			if cmd.Flags().Changed("client-configuration") {
				return &exitError{code: exitUsage, err: fmt.Errorf("cli: -client-configuration %s: not supported (paddock cli reads no client properties file)", f.clientConfig)}
			}
			status, err := runCLI(cmd.Context(), f, args, os.Stdin, cmd.OutOrStdout(), cmd.ErrOrStderr())
			if err != nil {
				return &exitError{code: exitFailure, err: err}
			}
			if status != 0 {
				// The failure has been printed, as zkCli prints it; exit
				// with its status without adding to it.
				return &exitError{code: status, err: fmt.Errorf("cli: exit status %d", status), silent: true}
			}
			return nil
		},
	}
	// Everything after the first word that is not a flag is the command,
	// passed on untouched (goStyleArgs too leaves it alone).
	cmd.Flags().SetInterspersed(false)
	cmd.Annotations = map[string]string{annotationArgsEndFlags: "true"}
	fl := cmd.Flags()
	fl.StringVar(&f.server, "server", cli.DefaultServer, "connect string: host:port[,host:port...][/chroot]")
	fl.IntVar(&f.timeoutMS, "timeout", int(cli.DefaultSessionTimeout/time.Millisecond), "session timeout in milliseconds")
	fl.BoolVar(&f.json, "json", false, "print one JSON object per command and per watch event")
	fl.BoolVarP(&f.readOnly, "readonly", "r", false, "allow connecting to a read-only server")
	fl.BoolVar(&f.waitForConnection, "waitforconnection", false,
		"accepted for zkCli compatibility: paddock cli always waits for the session (at most -timeout)")
	fl.StringVar(&f.clientConfig, "client-configuration", "", "zkCli's client properties file: not supported, refused")
	_ = fl.MarkHidden("client-configuration")
	return cmd
}

// runCLI runs the shell: the command in args, or the commands read from
// the terminal or from in. It returns the exit status of the last command
// (0, 1, or 127 for an unknown one), as zkCli does, or an error when no
// session could be established.
func runCLI(ctx context.Context, f cliFlags, args []string, in io.Reader, stdout, stderr io.Writer) (int, error) {
	interactive := len(args) == 0 && isTerminalReader(in) && isTerminal(stdout)
	var con *term.Console
	out, errw := stdout, stderr
	if interactive {
		con = term.NewConsole(stdout)
		out, errw = con.Writer(stdout), con.Writer(stderr)
	}
	sh := cli.NewShell(cli.Options{
		Server:         f.server,
		SessionTimeout: time.Duration(f.timeoutMS) * time.Millisecond,
		Out:            out,
		Err:            errw,
		JSON:           f.json,
		ReadOnly:       f.readOnly,
		Version:        readVersion().Version,
	})
	if err := sh.Connect(ctx); err != nil {
		return 0, err
	}
	defer sh.Close()

	if len(args) > 0 {
		return cli.Status(sh.ExecArgs(ctx, args)), nil
	}
	if interactive {
		opts := term.Options{Console: con, Errors: stderr}
		if home, err := os.UserHomeDir(); err == nil {
			opts.HistoryFile = filepath.Join(home, ".paddock_cli_history")
		}
		// Ctrl-C cancels the running command (term.Run catches SIGINT),
		// not the whole shell: only SIGTERM ends it.
		ctx, stop := signal.NotifyContext(context.WithoutCancel(ctx), syscall.SIGTERM)
		defer stop()
		if err := term.Run(ctx, sh, opts); err != nil && !errors.Is(err, context.Canceled) {
			return 0, err
		}
		return 0, nil
	}
	// A script on standard input: zkCli's exit status is the last
	// command's. An empty line is no command and leaves it alone
	// (ZooKeeperMain.executeLine skips ""); a line of blanks is one.
	status := 0
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for !sh.Done() && sc.Scan() {
		if ctx.Err() != nil {
			return status, ctx.Err()
		}
		if sc.Text() == "" {
			continue
		}
		st := cli.Status(sh.Exec(ctx, sc.Text()))
		if !sh.Done() { // quit keeps the previous command's status
			status = st
		}
	}
	if err := sc.Err(); err != nil {
		return status, fmt.Errorf("read commands: %w", err)
	}
	return status, nil
}

// isTerminalReader reports whether r is a terminal.
func isTerminalReader(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && isTerminal(f)
}
