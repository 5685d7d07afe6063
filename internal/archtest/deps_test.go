package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPureCoreImportsNoIO checks that the deterministic core stays free of
// I/O, clocks and consensus: the state machine must give the same result on
// every member and on replay.
func TestPureCoreImportsNoIO(t *testing.T) {
	forbidden := []string{"net", "os", "os/exec", "time", "go.etcd.io/raft/v3", "net/http", "syscall"}
	for _, pkg := range []string{"proto", "zpath", "tree", "acl", "fsm"} {
		path := "github.com/paddockhq/paddock/internal/" + pkg
		out, err := exec.Command("go", "list", "-deps", path).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", path, err, out)
		}
		deps := map[string]bool{}
		for _, d := range strings.Fields(string(out)) {
			deps[d] = true
		}
		// Standard packages such as fmt pull in os indirectly, so only
		// direct imports are checked against the list.
		direct, err := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", path).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -f imports %s: %v", path, err)
		}
		for _, imp := range strings.Fields(string(direct)) {
			for _, f := range forbidden {
				if imp == f {
					t.Errorf("%s imports %s; the deterministic core must not", path, f)
				}
			}
		}
		if deps["go.etcd.io/raft/v3"] {
			t.Errorf("%s depends on etcd raft", path)
		}
	}
}
