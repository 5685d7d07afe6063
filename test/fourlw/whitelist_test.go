package fourlw_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
)

// zkServerSh is Debian's server script.
const zkServerSh = "/usr/share/zookeeper/bin/zkServer.sh"

// notWhitelisted is every four-letter word but srvr, which ZooKeeper
// always allows.
var notWhitelisted = []string{
	"ruok", "stat", "conf", "cons", "crst", "srst", "envi", "mntr", "wchs", "wchc", "wchp",
	"dump", "isro", "dirs", "gtmk", "stmk", "hash",
}

// TestDefaultWhitelist starts both servers without 4lw.commands.whitelist:
// every word but srvr is refused with ZooKeeper's sentence, srvr answers,
// and zkServer.sh status reports the mode.
func TestDefaultWhitelist(t *testing.T) {
	servers := []*plainServer{startPlainZooKeeper(t), startPlainPaddock(t)}
	for _, s := range servers {
		for _, cmd := range notWhitelisted {
			out, err := zktest.FourLetterWord(s.addr, cmd)
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			if want := cmd + " is not executed because it is not in the whitelist.\n"; out != want {
				t.Errorf("%s %s = %q, want %q", s.name, cmd, out, want)
			}
		}
		out, err := zktest.FourLetterWord(s.addr, "srvr")
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if !strings.HasPrefix(out, "Zookeeper version: ") || !strings.Contains(out, "\nMode: standalone\n") {
			t.Errorf("%s srvr with the default whitelist = %q", s.name, out)
		}
	}

	t.Run("zkServer.sh status", func(t *testing.T) {
		if _, err := os.Stat(zkServerSh); err != nil {
			t.Skipf("Debian's zookeeper package is not installed: %v", err)
		}
		for _, s := range servers {
			checkZKServerStatus(t, s)
		}
		// The check can fail: with nothing on the port the script says so
		// and exits 1.
		deadConfig := filepath.Join(t.TempDir(), "zoo.cfg")
		cfg := fmt.Sprintf("clientPort=%d\nclientPortAddress=127.0.0.1\ndataDir=%s\n", zktest.FreePort(t), t.TempDir())
		if err := os.WriteFile(deadConfig, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(zkServerSh, "status", deadConfig).Output()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "Error contacting service") {
			t.Errorf("zkServer.sh status with no server: %v, output %q; want exit 1 and \"Error contacting service\"", err, out)
		}
	})
}

// checkZKServerStatus runs "zkServer.sh status <zoo.cfg>" against s. (The
// upstream form "zkServer.sh --config <dir> status" does not work with
// Debian's script, whose zkEnv.sh is Debian's fixed environment file and
// does not parse --config: it prints the usage and exits 0. Debian's script
// takes the zoo.cfg path as the argument after the command.) The script
// reads clientPort and clientPortAddress from the zoo.cfg, runs
// org.apache.zookeeper.client.FourLetterWordMain <address> <port> srvr and
// prints the Mode line it greps from the answer.
func checkZKServerStatus(t *testing.T, s *plainServer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, zkServerSh, "status", s.configPath)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		t.Errorf("%s: zkServer.sh status: %v\nstdout:\n%s\nstderr:\n%s", s.name, err, &stdout, &stderr)
		return
	}
	found := fmt.Sprintf("Client port found: %d. Client address: 127.0.0.1.", s.port)
	if out := stdout.String(); !strings.Contains(out, found) || !strings.Contains(out, "\nMode: standalone\n") {
		t.Errorf("%s: zkServer.sh status printed:\n%s\nwant %q and \"Mode: standalone\"; stderr:\n%s",
			s.name, out, found, &stderr)
	}
}

// TestWhitelistSeparators starts both servers with whitelists written with
// spaces: ZooKeeper splits 4lw.commands.whitelist on commas only and trims
// each entry, so "ruok, mntr" allows both words and "ruok mntr" neither.
func TestWhitelistSeparators(t *testing.T) {
	tests := []struct {
		list    string
		allowed map[string]bool
	}{
		{" ruok , mntr", map[string]bool{"ruok": true, "mntr": true, "stat": false}},
		{"ruok mntr", map[string]bool{"ruok": false, "mntr": false, "stat": false}},
	}
	for _, tt := range tests {
		t.Run(tt.list, func(t *testing.T) {
			line := "4lw.commands.whitelist=" + tt.list
			for _, s := range []*plainServer{startPlainZooKeeper(t, line), startPlainPaddock(t, line)} {
				for cmd, allowed := range tt.allowed {
					out, err := zktest.FourLetterWord(s.addr, cmd)
					if err != nil {
						t.Fatalf("%s: %v", s.name, err)
					}
					refused := out == cmd+" is not executed because it is not in the whitelist.\n"
					if refused == allowed {
						t.Errorf("%s with %q: %s answered %q; want allowed=%v", s.name, line, cmd, out, allowed)
					}
				}
			}
		})
	}
}
