package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
)

// TestUnknownOptionsSameAsZkCli runs command lines with dashed words zkCli
// does not know through zkCli.sh and paddock cli. Before the command,
// zkCli's MyCommandOptions.parseOptions skips them (a word that follows one
// is the command, not its value); after it, they are the command's, and its
// Commons CLI parser refuses them.
func TestUnknownOptionsSameAsZkCli(t *testing.T) {
	needZkCli(t)
	paddock := zktest.BuildPaddock(t)
	p := zktest.StartZooKeeper(t, zktest.ZKOptions{})
	tests := []struct {
		args  []string
		stdin string
	}{
		{args: []string{"-foo", "ls", "/"}},
		{args: []string{"-foo", "bar"}},
		{args: []string{"--foo", "-x=1", "-Z", "ls", "/zookeeper"}},
		{args: []string{"-foo", "-timeout", "20000", "-bar", "ls", "/"}},
		{args: []string{"-", "ls", "/"}},
		{args: []string{"-foo"}, stdin: "ls /\n"},
		{args: []string{"ls", "-foo", "/"}},
		{args: []string{"ls", "/", "-foo"}},
	}
	for _, tt := range tests {
		want := run(t, tt.stdin, append([]string{zkCli, "-server", p.Addr}, tt.args...)...)
		got := run(t, tt.stdin, append([]string{paddock, "cli", "-server", p.Addr}, tt.args...)...)
		compare(t, strings.Join(tt.args, " "), want, got)
	}
}

// TestStatTimeZoneSameAsZkCli compares the ctime and mtime lines of stat,
// which the other tests normalise away, between zkCli.sh and paddock cli run
// with the same TZ: Java names the zone itself (BRT where tzdata says -03,
// GMT-03:00 for a zone it has no name for).
func TestStatTimeZoneSameAsZkCli(t *testing.T) {
	needZkCli(t)
	paddock := zktest.BuildPaddock(t)
	p := zktest.StartZooKeeper(t, zktest.ZKOptions{})
	if r := run(t, "", zkCli, "-server", p.Addr, "create", "/tz"); r.code != 0 {
		t.Fatalf("create /tz: %+v", r)
	}
	times := regexp.MustCompile(`(?m)^[cm]time = .*$`)
	for _, tz := range []string{"UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata",
		"America/Sao_Paulo", "America/Santiago", "Asia/Dubai", "Etc/GMT+3"} {
		t.Setenv("TZ", tz)
		want := times.FindAllString(runRaw(t, zkCli, "-server", p.Addr, "stat", "/tz"), -1)
		got := times.FindAllString(runRaw(t, paddock, "cli", "-server", p.Addr, "stat", "/tz"), -1)
		if len(want) != 2 || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("TZ=%s: paddock cli printed %q, zkCli.sh %q", tz, got, want)
		}
	}
}

// runRaw runs a shell and returns its standard output as printed.
func runRaw(t *testing.T, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "CLIENT_JVMFLAGS=-Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData",
		"ZOO_LOG_DIR="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("%q: %v", argv, err)
	}
	return out.String()
}
