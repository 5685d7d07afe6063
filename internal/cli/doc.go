// Package cli is the shell behind "paddock cli": Apache ZooKeeper 3.8's
// zkCli.sh command set, with the same syntax and the same output, run on one
// session of the zk client.
//
// # Contract
//
// A Shell owns one session at a time (the connect command replaces it, close
// ends it). Exec parses one line with zkCli's quoting rules (Tokenize) and
// options parsing (Apache Commons CLI's, emulated by pure functions), runs the
// command, and prints what zkCli prints: results on Options.Out; errors,
// warnings and what zkCli writes to standard error ("Created /a") on
// Options.Err; and watch events ("WATCHER::" blocks) on Out, from the client's
// delivery goroutine. Writes to Out and Err are serialised; a command's output
// is written at once, after every watch event the server sent before the
// command's last reply (Exec reads through the delivery queue before it
// returns), so a command's own events precede its output and none arrives
// after it. With Options.JSON, every command prints one JSON object on Out
// instead, errors included ({"error": ..., "code": "NONODE"}), and every
// event one {"event": ...} object.
//
// Exec returns a *CommandError, already printed, when the command failed;
// Status gives zkCli's exit status for it (1, or 127 for an unknown command).
// Like zkCli, some problems are printed without failing the command ("Not
// connected", the quota checks, "Failed to delete some node(s)").
//
// Exec, ExecArgs, Connect and Close are called from one goroutine; Prompt,
// Commands, Children and Done may be called from others (the terminal layer
// in internal/cli/term). The package keeps no global state besides the
// read-only command table.
package cli
