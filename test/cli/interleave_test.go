package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/zktest"
)

// interleaveScript has commands that print on both standard error and
// standard output: deprecation and ACL warnings before the output,
// listquota's "absolute path is" line before the quota.
const interleaveScript = `create /il x
ls /il watch
get /il watch
stat /il watch
setAcl -s /il world:anyone:cdrwaq
setquota -n 5 /il
listquota /il
delquota /il
ls -? /il
delete /il
`

// runMerged runs a shell with its standard output and error on one pipe,
// as on a terminal, and returns what it printed, normalised, and its exit
// status.
func runMerged(t *testing.T, stdin string, argv ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	code := runShell(t, stdin, &out, &out, argv...)
	return normalize(out.String()), code
}

// TestInterleavingSameAsZkCli compares the order of what zkCli.sh and
// paddock cli print on standard output and standard error together, against
// Apache ZooKeeper and Paddock: zkCli prints each line as it goes, so a
// warning on standard error precedes the output after it.
func TestInterleavingSameAsZkCli(t *testing.T) {
	needZkCli(t)
	paddock := zktest.BuildPaddock(t)
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			p := srv.start(t)
			want, wantCode := runMerged(t, interleaveScript, zkCli, "-server", p.Addr)
			if !strings.Contains(want, "Output quota for /il count=5") {
				t.Fatalf("zkCli.sh did not run the script:\n%s", want)
			}
			got, gotCode := runMerged(t, interleaveScript, paddock, "cli", "-server", p.Addr)
			if gotCode != wantCode {
				t.Errorf("exit status: paddock cli %d, zkCli.sh %d", gotCode, wantCode)
			}
			if got != want {
				t.Errorf("output differs (- zkCli.sh, + paddock cli):\n%s", diff(want, got))
			}
			// One-shot, with a deprecated form.
			want, wantCode = runMerged(t, "", zkCli, "-server", p.Addr, "ls", "/zookeeper", "watch")
			got, gotCode = runMerged(t, "", paddock, "cli", "-server", p.Addr, "ls", "/zookeeper", "watch")
			if gotCode != wantCode || got != want {
				t.Errorf("ls /zookeeper watch: status %d, zkCli.sh %d; output (- zkCli.sh, + paddock cli):\n%s", gotCode, wantCode, diff(want, got))
			}
		})
	}
}
