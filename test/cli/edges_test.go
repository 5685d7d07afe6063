package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
	"github.com/paddockhq/paddock/zk"
)

// edgeScript covers trailing commas in ACLs (Java's split drops trailing
// empty strings) and a script ending in an empty line (the status stays
// the last command's). A deleteall that fails is not here: zkCli 3.8.0
// prints its warning from a callback thread's logger, which the process
// may exit before writing (the comparison failed once on that); and
// deleteall -b 0 is not either: zkCli 3.8.0, Debian's, puts the whole
// subtree in one multi, where 3.8.1 and later (ZOOKEEPER-4504), and
// paddock cli, delete one znode at a time. internal/cli's tests check
// both.
const edgeScript = `create /edge
create /edge/del x world:anyone:cdrwa
create /edge/del/y
deleteall /edge/del
create /edge/acl x world:anyone:r,
getAcl /edge/acl
create /edge/acl2 x world:anyone:r,,digest:a,,
getAcl /edge/acl2
deleteall /edge
stat /nope

`

// chrootScript runs under a chroot: config reads the absolute
// /zookeeper/config; a line of blanks is an unknown command.
const chrootScript = `config
config -w
config -c
stat /nope
   
`

// ephemeralScript runs under the chroot /eph: getEphemerals prints the
// paths as the server sends them, chroot included (the Java client does not
// strip it). It deletes its ephemeral, so that the second shell can create
// it again (zkCli's session outlives the script). listquota / reads an
// invalid path, which the client refuses; close prints the Closed event
// (which the comparison cannot place: state events are left out).
const ephemeralScript = `create -e /e
getEphemerals
getEphemerals /
getEphemerals /e
delete /e
listquota /
close
ls /
`

// malformed is znode data that is not valid UTF-8, which get prints as
// Java's decoder does: one U+FFFD per maximal malformed subpart.
var malformed = []string{
	"\xe2\x82", "\xe2\x82A", "\xf0\x9f\x98", "\xf0\x9f\x98A", "\xed\xa0\x80", "\xc0\x80", "\xff\xfe",
	"\xf4\x90\x80\x80", "\xe0\x80\x80", "\xf8\x88\x80\x80\x80", "\xe2\x28\xa1", "\x80\x80", "\xe2\x82\xac\xe2",
}

// prepare creates what the scripts above read: the chroot /eph and the
// znodes /bytes/N holding malformed data.
func prepare(t *testing.T, addr string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := zk.Connect(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var script strings.Builder
	for _, p := range []string{"/eph", "/bytes"} {
		if _, err := conn.Create(ctx, p, nil, zk.OpenACL, zk.ModePersistent); err != nil {
			t.Fatal(err)
		}
	}
	for i, data := range malformed {
		p := fmt.Sprintf("/bytes/%d", i)
		if _, err := conn.Create(ctx, p, []byte(data), zk.OpenACL, zk.ModePersistent); err != nil {
			t.Fatal(err)
		}
		script.WriteString("get " + p + "\n")
	}
	return script.String()
}

// TestEdgesSameAsZkCli runs the edge cases above, and one-shot commands (one
// with dashed words after it; history, which prints the unrecorded command
// as "null"), through zkCli.sh and paddock cli against Apache ZooKeeper and
// Paddock.
func TestEdgesSameAsZkCli(t *testing.T) {
	needZkCli(t)
	paddock := zktest.BuildPaddock(t)
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			p := srv.start(t)
			both := func(what, stdin, server string, cmd ...string) {
				t.Helper()
				want := run(t, stdin, append([]string{zkCli, "-server", server}, cmd...)...)
				got := run(t, stdin, append([]string{paddock, "cli", "-server", server}, cmd...)...)
				compare(t, what, want, got)
			}
			both("edge script", edgeScript, p.Addr)
			both("chroot script", chrootScript, p.Addr+"/edge")
			both("get -json /", "", p.Addr, "get", "-json", "/")
			bytesScript := prepare(t, p.Addr)
			both("ephemeral script", ephemeralScript, p.Addr+"/eph")
			both("malformed UTF-8", bytesScript, p.Addr)
			both("history", "", p.Addr, "history")
		})
	}
}

// TestConfigSameAsZkCli compares config and config -c on a three-member
// Apache ZooKeeper ensemble whose config carries client addresses (set with
// reconfig): zkCli lists them in the order Java's Properties iterates over
// the server.N keys, not sorted. (Paddock has no reconfig to add client
// addresses with; its ensembles' /zookeeper/config is compared with
// ZooKeeper's in test/ensemble.)
func TestConfigSameAsZkCli(t *testing.T) {
	needZkCli(t)
	paddock := zktest.BuildPaddock(t)
	e := zktest.StartZooKeeperEnsemble(t, zktest.EnsembleOptions{Members: 3, ExtraConfig: []string{"reconfigEnabled=true"}})
	addr := e.Members[0].Addr
	cfg := run(t, "config\n", zkCli, "-server", addr)
	var members []string
	for _, line := range strings.Split(cfg.stdout, "\n") {
		var id int
		if _, err := fmt.Sscanf(line, "server.%d=", &id); err == nil && id >= 1 && id <= len(e.Members) {
			members = append(members, fmt.Sprintf("%s;127.0.0.1:%d", line, e.Members[id-1].Port))
		}
	}
	if len(members) != 3 {
		t.Fatalf("the ensemble's config has not three servers:\n%s", cfg.stdout)
	}
	set := run(t, "addauth digest super:test\nreconfig -members "+strings.Join(members, ",")+"\n", zkCli, "-server", addr)
	if set.code != 0 || !strings.Contains(set.stdout, ";127.0.0.1:") {
		t.Fatalf("reconfig failed:\n%s\n%s", set.stdout, set.stderr)
	}
	script := "config\nconfig -c\n"
	want := run(t, script, zkCli, "-server", addr)
	got := run(t, script, paddock, "cli", "-server", addr)
	compare(t, "config", want, got)
}
