package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSnapshotToolsExtendedTypes: "snapshot inspect" and "snapshot dump"
// classify an ephemeralOwner with top byte 0xff as ZooKeeper's
// EphemeralType does: a TTL node only with --extended-types, else (the
// default, as ZooKeeper's) an ephemeral of a session of myid 255. The
// snapshot is the newest of internal/datatool's fixture, written with
// extended types on; its /ttl has a TTL of 60000 ms.
func TestSnapshotToolsExtendedTypes(t *testing.T) {
	const name = "0000000000000023-0000000000000002.snap"
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "datatool", "testdata", "fixture", "snap", name))
	if err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(snap, b, 0o600); err != nil {
		t.Fatal(err)
	}
	const owner = "0xff0000000000ea60" // tree.TTLOwner(60000)
	cases := []struct {
		flags          []string
		ephemeral, ttl int64
		dump           string
	}{
		{nil, 2, 0, "\n  ephemeralOwner = " + owner + "\n  dataLength = 1\n  numChildren = 0\n  type = ephemeral (owner " + owner + ")\n"},
		{[]string{"--extended-types"}, 1, 1, "\n  ephemeralOwner = 0x0\n  dataLength = 1\n  numChildren = 0\n  type = ttl (ttl 60000 ms)\n"},
	}
	for _, c := range cases {
		code, out, errOut := runCmd(t, append([]string{"snapshot", "inspect", "--json", snap}, c.flags...)...)
		var sum struct {
			Body struct {
				Ephemeral, TTL int64
				ExtendedTypes  bool
			}
		}
		if code != 0 || json.Unmarshal([]byte(out), &sum) != nil || sum.Body.Ephemeral != c.ephemeral || sum.Body.TTL != c.ttl ||
			sum.Body.ExtendedTypes != (c.flags != nil) {
			t.Errorf("snapshot inspect --json %v: exit %d, want %d ephemeral and %d TTL znodes\n%s\n%s", c.flags, code, c.ephemeral, c.ttl, out, errOut)
		}
		code, out, errOut = runCmd(t, append([]string{"snapshot", "dump", snap}, c.flags...)...)
		if code != 0 || !strings.Contains(out, c.dump) {
			t.Errorf("snapshot dump %v: exit %d, want %q in\n%s\n%s", c.flags, code, c.dump, out, errOut)
		}
	}
}
