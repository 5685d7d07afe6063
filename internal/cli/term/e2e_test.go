package term_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/zktest"
	"github.com/paddockhq/paddock/zk"
)

// TestPaddockCLIOnTerminal drives the real `paddock cli` binary on a
// pseudo-terminal against a real Paddock: create a node, complete its path,
// get it, recall the command from the history, see a watch event arrive while
// typing, quit, and find the history again in a second session.
func TestPaddockCLIOnTerminal(t *testing.T) {
	srv := zktest.StartPaddock(t, zktest.PaddockOptions{})
	bin := zktest.BuildPaddock(t)
	home := t.TempDir()
	cli := func() *terminal {
		cmd := exec.Command(bin, "cli", "-server", srv.Addr)
		cmd.Env = append(os.Environ(), "HOME="+home)
		return startTerminal(t, cmd)
	}

	tm := cli()
	tm.expect("(CONNECTED) 0] ")
	tm.send("create /termtest hello\r")
	tm.expect("Created /termtest")
	tm.expect("(CONNECTED) 1] ")

	// Complete the path of the new node from the server's tree.
	tm.send("get /termt\t")
	tm.expect("get /termtest")
	tm.send("\r")
	tm.expect("\nhello\r\n")
	tm.expect("(CONNECTED) 2] ")

	// Up recalls "get /termtest" and runs it again.
	tm.send(keyUp + "\r")
	tm.expect("\nhello\r\n")
	tm.expect("(CONNECTED) 3] ")

	// A watch event that arrives while a line is being typed is printed on
	// lines of its own, and the prompt drawn again.
	tm.send("get -w /termtest\r")
	tm.expect("\nhello\r\n")
	tm.expect("(CONNECTED) 4] ")
	tm.send("sta")
	tm.expect("sta")
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	conn, err := zk.Connect(ctx, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Set(ctx, "/termtest", []byte("changed"), -1); err != nil {
		t.Fatal(err)
	}
	tm.expect("WatchedEvent state:SyncConnected type:NodeDataChanged path:/termtest")
	tm.expect("(CONNECTED) 4] ")
	tm.send("t /termtest\r") // completes the line typed before the event: "stat /termtest"
	tm.expect("dataLength = 7")
	tm.expect("(CONNECTED) 5] ")

	tm.send("quit\r")
	if code := tm.wait(); code != 0 {
		t.Fatalf("paddock cli exited with status %d after quit, want 0", code)
	}

	file := filepath.Join(home, ".paddock_cli_history")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("history file: %v", err)
	}
	want := "create /termtest hello\nget /termtest\nget -w /termtest\nstat /termtest\nquit\n"
	if string(data) != want {
		t.Errorf("history file = %q, want %q", data, want)
	}
	if info, err := os.Stat(file); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("history file mode: %v %v, want 0600", info.Mode().Perm(), err)
	}

	// A second session recalls the first one's commands.
	tm = cli()
	tm.expect("(CONNECTED) 0] ")
	tm.send(keyUp + keyUp + keyUp + "\r") // quit, stat, get -w
	tm.expect("get -w /termtest")
	tm.expect("\nchanged\r\n")
	tm.expect("(CONNECTED) 1] ")
	tm.send(keyCtrlD)
	if code := tm.wait(); code != 0 {
		t.Fatalf("paddock cli exited with status %d after Ctrl-D, want 0", code)
	}
	if out := tm.output(); strings.Contains(out, "panic") {
		t.Errorf("output mentions a panic:\n%s", out)
	}
}
