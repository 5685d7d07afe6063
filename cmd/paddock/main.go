package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the server failed
	exitUsage   = 2 // bad flags, arguments or configuration
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // restore default handling: a second signal kills the process
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// exitError carries the process exit code of a failed command.
type exitError struct {
	code int
	err  error
	// silent: the command has already said what failed; run adds nothing.
	silent bool
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// run executes the command line args and returns the exit code. Cancelling
// ctx asks a running server to shut down.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(goStyleArgs(root, args, stderr))
	root.SetOut(stdout)
	root.SetErr(stderr)
	// Added here, after SetOut: cobra's completion command keeps the
	// writer it finds when it is made.
	root.InitDefaultCompletionCmd()
	rejectUnknownSubcommands(root)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if !ee.silent {
			fmt.Fprintf(stderr, "paddock: %v\n", err)
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "paddock: %v\n", err)
	// Errors cobra raises itself: unknown commands, flags, arguments.
	fmt.Fprintln(stderr, "Run 'paddock --help' for usage.")
	return exitUsage
}

// rejectUnknownSubcommands makes each command below cmd that only groups
// subcommands ("paddock data", "paddock completion") refuse an unknown one
// as a usage error, as the root does: cobra would print the group's help
// and exit 0, so "paddock data verfy DIR" would look like a success. Alone,
// the group still prints its help.
func rejectUnknownSubcommands(cmd *cobra.Command) {
	for _, sub := range cmd.Commands() {
		rejectUnknownSubcommands(sub)
	}
	if !cmd.HasParent() || !cmd.HasSubCommands() || cmd.Runnable() {
		return
	}
	cmd.Args = cobra.NoArgs // "unknown command "x" for "paddock data""
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
}

// newRootCmd builds the command tree.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "paddock",
		Short:         "A ZooKeeper-compatible coordination service",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServerCmd(), newVersionCmd())
	root.AddCommand(newBenchCmd())
	root.AddCommand(newExampleCmd())
	root.AddCommand(newCLICmd())
	root.AddCommand(newDataToolCmds()...)
	return root
}
