package main

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/config"
)

// TestContribZooCfg checks that the sample zoo.cfg in contrib/ loads without
// a warning, so every key in it means something to Paddock.
func TestContribZooCfg(t *testing.T) {
	cfg, warnings, err := config.Load("../../contrib/zoo.cfg")
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) > 0 {
		t.Errorf("contrib/zoo.cfg warnings: %q", warnings)
	}
	if len(cfg.IgnoredKeys) > 0 {
		t.Errorf("contrib/zoo.cfg sets keys Paddock ignores: %q", cfg.IgnoredKeys)
	}
	if cfg.DataDir != "/var/lib/paddock" || cfg.ClientPort != 2181 {
		t.Errorf("dataDir %q clientPort %d", cfg.DataDir, cfg.ClientPort)
	}
}

// TestContribSystemdUnit checks that the unit's ExecStart runs a paddock
// subcommand with flags that exist.
func TestContribSystemdUnit(t *testing.T) {
	f, err := os.Open("../../contrib/paddock.service")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var exec []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "ExecStart="); ok {
			exec = strings.Fields(v)
		}
	}
	if len(exec) < 2 || !strings.HasSuffix(exec[0], "/paddock") {
		t.Fatalf("ExecStart %q does not run paddock", exec)
	}
	root := newRootCmd()
	cmd, args, err := root.Find(exec[1:])
	if err != nil || cmd.Name() != "server" {
		t.Fatalf("ExecStart subcommand: %v (%v)", cmd.Name(), err)
	}
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("ExecStart flags: %v", err)
	}
	if v, _ := cmd.Flags().GetString("config"); v != "/etc/paddock/zoo.cfg" {
		t.Errorf("--config %q", v)
	}
}
