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
	for _, pkg := range []string{"proto", "zpath", "javastr", "tree", "acl", "fsm"} {
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

// TestOnlyRaftPackagesImportRaft checks that etcd raft stays behind
// internal/raftnode, internal/storage and internal/transport.
func TestOnlyRaftPackagesImportRaft(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "github.com/paddockhq/paddock/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := map[string]bool{}
	for _, p := range []string{"raftnode", "storage", "transport"} {
		allowed["github.com/paddockhq/paddock/internal/"+p] = true
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		checked++
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, "go.etcd.io/raft/") && !allowed[fields[0]] {
				t.Errorf("%s imports %s; only internal/raftnode, storage and transport may", fields[0], imp)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("go list returned only %d packages", checked)
	}
}
