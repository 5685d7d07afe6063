package term

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"
	"unicode"

	"github.com/peterh/liner"
)

// Shell is what the terminal drives; *cli.Shell implements it.
type Shell interface {
	// Exec runs one command line, printing its results and errors itself.
	Exec(ctx context.Context, line string) error
	// Prompt is shown before each line, e.g. "[zk: 127.0.0.1:2181(CONNECTED) 3] ".
	Prompt() string
	// Commands lists the command names, for completion of the first word.
	Commands() []string
	// Children lists the names (not paths) of the children of the znode at
	// path, for completion of paths.
	Children(ctx context.Context, path string) ([]string, error)
	// Done reports whether the shell has ended (after "quit").
	Done() bool
}

// Default values of Options fields left zero.
const (
	DefaultHistoryLimit    = liner.HistoryLimit
	DefaultCompleteTimeout = 2 * time.Second
)

// Options configures Run. The zero value is usable: no persistent history,
// errors to os.Stderr, no Console.
type Options struct {
	// HistoryFile is read at start and written at exit; "" keeps the history
	// in memory only. The caller chooses the default (paddock cli uses
	// ~/.paddock_cli_history).
	HistoryFile string
	// HistoryLimit bounds the number of lines kept, in memory and in the file.
	// 0 means DefaultHistoryLimit, which is also the maximum (liner keeps no
	// more).
	HistoryLimit int
	// CompleteTimeout bounds one listing of children during tab completion.
	// 0 means DefaultCompleteTimeout.
	CompleteTimeout time.Duration
	// Console, if not nil, is told when a line is being edited so that output
	// written through its writers does not garble the prompt.
	Console *Console
	// Errors receives Run's own warnings (an unreadable history file...).
	// nil means os.Stderr.
	Errors io.Writer
}

// Validate reports options that cannot be used.
func (o Options) Validate() error {
	if o.HistoryLimit < 0 || o.HistoryLimit > DefaultHistoryLimit {
		return fmt.Errorf("term: history limit %d out of range [0, %d]", o.HistoryLimit, DefaultHistoryLimit)
	}
	if o.CompleteTimeout < 0 {
		return fmt.Errorf("term: negative completion timeout %v", o.CompleteTimeout)
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.HistoryLimit == 0 {
		o.HistoryLimit = DefaultHistoryLimit
	}
	if o.CompleteTimeout == 0 {
		o.CompleteTimeout = DefaultCompleteTimeout
	}
	if o.Errors == nil {
		o.Errors = os.Stderr
	}
	return o
}

// ErrNotTerminal is returned by Run when standard input is a terminal but
// standard output is not. (On a terminal without line editing, TERM=dumb, Run
// reads plain lines.)
var ErrNotTerminal = errors.New("term: standard input and output must be a terminal")

// Run reads lines from the terminal and executes them on sh until the user
// types Ctrl-D, sh.Done() becomes true, or ctx is cancelled. See the package
// documentation for keys, history and completion.
func Run(ctx context.Context, sh Shell, opts Options) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	opts = opts.withDefaults()

	// Catch Ctrl-C for the whole session: while a line is edited the terminal
	// delivers it as a key, while a command runs it cancels that command.
	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	defer signal.Stop(interrupts)

	ed := liner.NewLiner()
	defer ed.Close()
	ed.SetCtrlCAborts(true)
	ed.SetTabCompletionStyle(liner.TabPrints)
	ed.SetWordCompleter(func(line string, pos int) (string, []string, string) {
		return Complete(line, pos, sh.Commands(), boundedChildren(ctx, sh, opts.CompleteTimeout))
	})

	if opts.HistoryFile != "" {
		if err := loadHistory(ed, opts.HistoryFile); err != nil {
			fmt.Fprintf(opts.Errors, "history: %v\n", err)
		}
		defer func() {
			if err := saveHistory(ed, opts.HistoryFile, opts.HistoryLimit); err != nil {
				fmt.Fprintf(opts.Errors, "history: %v\n", err)
			}
		}()
	}
	type result struct {
		line string
		err  error
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		prompt := printable(sh.Prompt())
		opts.Console.beginPrompt(prompt)
		// liner cannot be interrupted while it waits for a key, so the prompt
		// runs on its own goroutine and a cancelled ctx leaves it behind (it
		// ends at the next key or when the process exits).
		done := make(chan result, 1)
		go func() {
			l, err := ed.Prompt(prompt)
			done <- result{l, err}
		}()
		var r result
		select {
		case r = <-done:
		case <-ctx.Done():
			opts.Console.endPrompt()
			fmt.Println()
			return ctx.Err()
		}
		opts.Console.endPrompt()

		switch {
		case errors.Is(r.err, io.EOF):
			fmt.Println() // Ctrl-D leaves the cursor after the prompt
			return nil
		case errors.Is(r.err, liner.ErrPromptAborted):
			continue // Ctrl-C: the line is abandoned
		case errors.Is(r.err, liner.ErrNotTerminalOutput):
			return ErrNotTerminal
		case r.err != nil:
			return fmt.Errorf("term: reading a line: %w", r.err)
		}
		if strings.TrimSpace(r.line) == "" {
			continue
		}
		ed.AppendHistory(r.line)
		trimHistory(ed, opts.HistoryLimit)

		execute(ctx, sh, r.line, interrupts)
		if sh.Done() {
			return nil
		}
	}
}

// execute runs one line, cancelling it on SIGINT.
func execute(ctx context.Context, sh Shell, line string, interrupts <-chan os.Signal) {
	// Drop a Ctrl-C that arrived between prompts.
	select {
	case <-interrupts:
	default:
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-interrupts:
			cancel()
		case <-stop:
		}
	}()
	_ = sh.Exec(cctx, line) // the shell has printed any error itself
	close(stop)
	<-watched
}

// boundedChildren returns a children lister for Complete that gives up after
// timeout even if sh.Children ignores its context.
func boundedChildren(ctx context.Context, sh Shell, timeout time.Duration) func(string) ([]string, error) {
	return func(path string) ([]string, error) {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		type result struct {
			names []string
			err   error
		}
		done := make(chan result, 1) // buffered: a late answer does not block
		go func() {
			names, err := sh.Children(cctx, path)
			done <- result{names, err}
		}()
		select {
		case r := <-done:
			return r.names, r.err
		case <-cctx.Done():
			return nil, cctx.Err()
		}
	}
}

// printable replaces the characters liner refuses in a prompt.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.C, r) {
			return '?'
		}
		return r
	}, s)
}
