package cli

import (
	"os"
	"testing"

	"github.com/paddockhq/paddock/internal/zktest"
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

// TestEdgesSameAsZkCli runs the edge cases above, and a one-shot command
// with dashed words after it, through zkCli.sh and paddock cli against
// Apache ZooKeeper and Paddock.
func TestEdgesSameAsZkCli(t *testing.T) {
	if _, err := os.Stat(zkCli); err != nil {
		t.Fatalf("this test needs %s (Debian's zookeeper package): %v", zkCli, err)
	}
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
		})
	}
}
