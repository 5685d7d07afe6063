package cli

import (
	"fmt"
	"testing"

	"github.com/paddockhq/paddock/internal/zktest"
)

// foundScripts are differences TestRandomSameAsZkCli found, reduced. Each
// runs under the chroot /found<N>, created empty first.
var foundScripts = []struct {
	name, script string
}{
	// Under a chroot where /zookeeper exists and /zookeeper/quota does
	// not, zkCli's setquota gives up creating /zookeeper/quota when
	// creating /zookeeper finds it there, so creating the quota znodes
	// fails.
	{"setquota with /zookeeper and no /zookeeper/quota", `create /zookeeper
create /c
setquota -n 10 /c
listquota /c
`},
}

// TestFoundSameAsZkCli runs foundScripts through zkCli.sh and paddock cli
// against Apache ZooKeeper and Paddock.
func TestFoundSameAsZkCli(t *testing.T) {
	needZkCli(t)
	paddock := zktest.BuildPaddock(t)
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			p := srv.start(t)
			for i, tt := range foundScripts {
				root := fmt.Sprintf("/found%d", i)
				freshRoot(t, p.Addr, root)
				want := run(t, tt.script, zkCli, "-server", p.Addr+root)
				freshRoot(t, p.Addr, root)
				got := run(t, tt.script, paddock, "cli", "-server", p.Addr+root)
				compare(t, tt.name, want, got)
			}
		})
	}
}
