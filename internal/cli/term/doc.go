// Package term is the interactive mode of `paddock cli`: line editing, history
// and tab completion on a terminal, driving a Shell (in practice *cli.Shell).
//
// # Contract
//
// Run owns the terminal while it runs. It uses github.com/peterh/liner, which
// works on the process's own standard input and output (file descriptors 0
// and 1): Run must only be called when both are a terminal, and only one Run
// may be active in a process. Run puts the terminal in raw mode while a line
// is being edited and restores it before it returns.
//
// Each iteration shows sh.Prompt() (asked afresh every line, so the session
// state and command number are current), reads one edited line and passes it
// to sh.Exec. Exec prints its own results and errors (zkCli prints them; the
// terminal does not), so Run discards the error it returns. Run returns nil
// when the user types Ctrl-D on an empty line or when sh.Done() reports true
// after a command (the shell's "quit"), and ctx.Err() when ctx is cancelled.
//
// Keys:
//
//   - Ctrl-C while editing abandons the line, as a shell does: "^C" is
//     printed and a fresh prompt shown; nothing is executed or recorded.
//   - Ctrl-C while a command runs cancels the context passed to that Exec
//     (the command is abandoned: a write the server already received may still
//     take effect) and the shell goes back to the prompt. Run catches SIGINT
//     for its whole duration so that Ctrl-C never kills the process with the
//     terminal left in raw mode.
//   - Ctrl-D on an empty line ends the session (deletes a character otherwise).
//   - Up/Down (Ctrl-P/Ctrl-N) walk the history, filtered by what has been
//     typed so far; Ctrl-R searches it; the usual Emacs keys edit the line.
//   - Tab completes; see Complete. A unique candidate is inserted at once;
//     with several, the first Tab inserts their longest common prefix and a
//     second Tab lists them (bash style).
//
// # History
//
// Every non-blank line entered is added to the in-memory history (a line equal
// to the previous one is not repeated). If Options.HistoryFile is set, the file
// is read when Run starts and written (the last Options.HistoryLimit lines,
// mode 0600, replaced atomically through a temporary file in the same
// directory) when Run returns. A missing file is not an error; an unreadable
// or malformed one is reported on Options.Errors and ignored. This history is
// the line editor's; the shell's numbered "history"/"redo" list is its own.
//
// # Completion
//
// Completion is computed by the pure function Complete from the line, the
// cursor position, the command names and a function listing children. Run
// gives it sh.Commands() and sh.Children bounded by Options.CompleteTimeout:
// completion never blocks for longer than that, even if Children ignores its
// context; a slow or failing listing completes nothing.
//
// # Asynchronous output
//
// Watch events and other output a shell prints while the user is typing would
// otherwise land in the middle of the edited line. A Console serialises such
// output with the prompt: its writers pass output straight through while a
// command runs, and while a line is being edited they clear the prompt line,
// print the output on lines of its own and draw the prompt again. The text
// typed so far is kept in the editor's buffer but is drawn again only by the
// next key that redraws the line (Left, Right, Home, End, Backspace, Tab...),
// a limitation of liner, which exposes no redraw call. A typical wiring:
//
//	con := term.NewConsole(os.Stdout)
//	sh := cli.NewShell(cli.Options{Out: con.Writer(os.Stdout), Err: con.Writer(os.Stderr), ...})
//	err := term.Run(ctx, sh, term.Options{HistoryFile: file, Console: con})
package term
