package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
)

const zkCli = "/usr/share/zookeeper/bin/zkCli.sh"

// session is a script covering every command. Watch-triggering commands
// are followed by "sync /": both shells deliver the sync's result through
// the same queue as watch events, so the events print before "Sync is OK".
// It cleans up after itself, so the second shell finds the server as the
// first did.
const session = `create /cli root
create /cli again
create -e /cli/eph edata
create -s /cli/seq- sdata
create -e -s /cli/eseq-
create -c /cli/cont
create -c /cli/cont/kid
create -t 600000 /cli/ttl tdata
create -s -t 600000 /cli/sttl-
create -c -e /cli/bad
create -t abc /cli/bad
create -t 5 -e /cli/bad
create -t 0 /cli/bad
create /cli/eph/child
create /cli/missing/child
create /cli/q "a b c"
create /cli/r a"b
create /cli/s ""
create /cli/u 'it is'
create
create nope
create /cli//x
get /cli/q
get /cli/r
get /cli/s
get /cli/cont
get -s /cli/ttl
get -s /cli/eph
get /cli/nope
get
get -x /cli
ls /cli
ls -s /cli
ls -R /cli
ls -R /cli/nope
ls /cli/nope
ls
ls /cli watch
ls -?
set /cli bye
set -s /cli again
set -v 0 /cli stale
set -v -1 /cli any
set -v
set /cli
stat /cli/cont
stat /cli/nope
stat
getEphemerals /cli/eph
getAllChildrenNumber /cli
getAllChildrenNumber
sync /cli
sync
config
config -s
config -c
whoami
get -w /cli/q
set /cli/q changed
sync /
stat -w /cli/q
delete /cli/q
sync /
ls -w /cli/cont
create /cli/cont/kid2
sync /
printwatches
printwatches off
ls -w /cli
create /cli/quiet
sync /
printwatches
printwatches on
addWatch /cli/r
set /cli/r x
sync /
removewatches /cli/r
sync /
removewatches /cli/r
removewatches /cli/r -d
removewatches
addWatch -m persistent /cli/u
addWatch -m bogus /cli/u
addWatch
set /cli/u y
sync /
removewatches /cli/u -a
sync /
create /cli/acl x world:anyone:rxz
getAcl /cli/acl
create /cli/acl2 x badacl
create /cli/acl3 x auth::cdrwa
setAcl /cli/acl world:anyone:cdrwa
setAcl /cli/nope world:anyone:r
setAcl /cli/acl
setAcl /cli/acl bad
create /cli/tree
create /cli/tree/a
create /cli/tree/a/b
setAcl -R /cli/tree world:anyone:cdrw
getAcl -s /cli/tree/a/b
setAcl -s -v 7 /cli/tree world:anyone:cdrwa
getAcl /zookeeper/config
create /cli/quota
create /cli/quota/a xx
setquota /cli/quota
setquota -n 0 /cli/quota
setquota -n abc /cli/quota
setquota -n 5 -b 10 /cli/quota
setquota -n 5 /cli/quota
listquota /cli/quota
get /zookeeper/quota/cli/quota/zookeeper_limits
setquota -N 1 /cli/quota
listquota /cli/quota
setquota -B 100 /cli/quota
setquota -n 2 /cli/quota/a
setquota -n 2 /zookeeper/quota
setquota -n 2 /cli/nope
delquota -N /cli/quota
listquota /cli/quota
delquota /cli/quota
listquota /cli/quota
delquota /cli/quota
listquota /cli/nope
delete /cli/nope
delete -v 3 /cli/r
delete /cli/r 7
delete /cli
deleteall /cli/nope
deleteall /cli/tree -b abc
deleteall /cli/tree -b 2
ls /cli
history
redo 2
redo 9999
redo
bogus
help
addauth
addauth digest alice:secret
create /cli/mine x auth::cdrwa
getAcl /cli/mine
deleteall /cli
ls /cli
close
ls /
history
connect
ls /cli
quit
ls /
`

// normalizers replace what must differ between runs and shells.
var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`(?m)^(ctime|mtime) = .*$`), "$1 = <date>"},
	{regexp.MustCompile(`(?m)^(cZxid|mZxid|pZxid) = 0x[0-9a-f]+$`), "$1 = <zxid>"},
	{regexp.MustCompile(`(?m)^ephemeralOwner = 0x[1-9a-f][0-9a-f]*$`), "ephemeralOwner = <session>"},
	// Session state changes arrive when they do, in both shells; zkCli's
	// event thread prints the "WATCHER::" line and the event line as two
	// writes, between which the shell's own output may come, so each goes
	// on its own.
	{regexp.MustCompile(`\nWatchedEvent state:\w+ type:None path:null\n`), ""},
	{regexp.MustCompile(`\nWATCHER::\n`), ""},
	// Banners: zkCli's, and the connect line both print.
	{regexp.MustCompile(`(?m)^(Connecting to .*|Welcome to ZooKeeper!|JLine support is (en|dis)abled)\n`), ""},
	// The JVM's logging noise.
	{regexp.MustCompile(`(?m)^SLF4J: .*\n`), ""},
	// zkCli treats help as an unknown command after printing the usage;
	// paddock cli only prints the usage.
	{regexp.MustCompile(`(?m)^Command not found: Command not found help\n`), ""},
}

func normalize(s string) string {
	for _, n := range normalizers {
		s = n.re.ReplaceAllString(s, n.with)
	}
	return s
}

// result is what a shell printed and its exit status.
type result struct {
	stdout, stderr string
	code           int
}

func run(t *testing.T, stdin string, argv ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := runShell(t, stdin, &out, &errOut, argv...)
	return result{stdout: normalize(out.String()), stderr: normalize(errOut.String()), code: code}
}

// runShell runs a shell (zkCli.sh or paddock cli) with stdin, its output
// going to stdout and stderr, and returns its exit status.
func runShell(t *testing.T, stdin string, stdout, stderr io.Writer, argv ...string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	// A small, quick JVM for zkCli; zkEnv.sh passes CLIENT_JVMFLAGS on.
	// Java 17 writes System.out in the locale's charset: UTF-8 whatever the
	// locale, as paddock cli writes.
	cmd.Env = append(os.Environ(), "CLIENT_JVMFLAGS=-Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData -Dfile.encoding=UTF-8",
		"ZOO_LOG_DIR="+t.TempDir())
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("%q: %v", argv, err)
	return 0
}

func compare(t *testing.T, what string, want, got result) {
	t.Helper()
	if got.code != want.code {
		t.Errorf("%s: exit status: paddock cli %d, zkCli.sh %d", what, got.code, want.code)
	}
	for _, s := range []struct{ name, want, got string }{{"stdout", want.stdout, got.stdout}, {"stderr", want.stderr, got.stderr}} {
		if s.want != s.got {
			t.Errorf("%s: %s differs (- zkCli.sh, + paddock cli):\n%s", what, s.name, diff(s.want, s.got))
		}
	}
}

// diff is a small line diff: the common prefix and suffix are left out.
func diff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	i := 0
	for i < len(al) && i < len(bl) && al[i] == bl[i] {
		i++
	}
	j := 0
	for j < len(al)-i && j < len(bl)-i && al[len(al)-1-j] == bl[len(bl)-1-j] {
		j++
	}
	var sb strings.Builder
	for k := max(0, i-3); k < i; k++ {
		sb.WriteString("  " + al[k] + "\n")
	}
	for _, l := range al[i : len(al)-j] {
		sb.WriteString("- " + l + "\n")
	}
	for _, l := range bl[i : len(bl)-j] {
		sb.WriteString("+ " + l + "\n")
	}
	return sb.String()
}

// servers are the two servers the shells are compared against.
var servers = []struct {
	name  string
	start func(t *testing.T) *zktest.Process
}{
	{"zookeeper", func(t *testing.T) *zktest.Process { return zktest.StartZooKeeper(t, zktest.ZKOptions{}) }},
	{"paddock", func(t *testing.T) *zktest.Process { return zktest.StartPaddock(t, zktest.PaddockOptions{}) }},
}

// needZkCli fails t when zkCli.sh is missing.
func needZkCli(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(zkCli); err != nil {
		t.Fatalf("this test needs %s (Debian's zookeeper package): %v", zkCli, err)
	}
}

// TestSameAsZkCli runs the session and some one-shot commands through
// zkCli.sh and paddock cli against Apache ZooKeeper and against Paddock, and
// compares what they print and their exit statuses.
func TestSameAsZkCli(t *testing.T) {
	needZkCli(t)
	paddock := zktest.BuildPaddock(t)
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			p := srv.start(t)
			zk := []string{zkCli, "-server", p.Addr}
			pd := []string{paddock, "cli", "-server", p.Addr}

			want := run(t, session, zk...)
			if !strings.Contains(want.stdout, "Output quota for /cli/quota count=5") {
				t.Fatalf("zkCli.sh did not run the session:\n%s\n%s", want.stdout, want.stderr)
			}
			got := run(t, session, pd...)
			compare(t, "session", want, got)

			// One-shot commands. A write is done by zkCli.sh, undone, and
			// done again by paddock cli.
			one := func(cmd ...string) (result, result) {
				return run(t, "", append(zk, cmd...)...), run(t, "", append(pd, cmd...)...)
			}
			want = run(t, "", append(zk, "create", "/one", "a b")...)
			run(t, "", append(pd, "delete", "/one")...)
			got = run(t, "", append(pd, "create", "/one", "a b")...)
			compare(t, "create", want, got)
			for _, cmd := range [][]string{{"get", "-s", "/one"}, {"ls", "/nope"}, {"bogus"}, {"set", "-v", "9", "/one", "x"}} {
				want, got := one(cmd...)
				compare(t, strings.Join(cmd, " "), want, got)
			}
			want = run(t, "", append(zk, "delete", "/one")...)
			run(t, "", append(pd, "create", "/one")...)
			got = run(t, "", append(pd, "delete", "/one")...)
			compare(t, "delete", want, got)
		})
	}
}
