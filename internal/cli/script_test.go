package cli_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/zktest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txt with the output produced")

// lockedBuffer is a bytes.Buffer shared by the shell and its event
// printer.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// take returns and clears what was written.
func (b *lockedBuffer) take() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	b.buf.Reset()
	return s
}

// scriptCase is one command of a script and the output expected of it.
type scriptCase struct {
	cmd  string
	want []string
}

// parseScript reads a golden script: "> command" lines, each followed by
// its expected output: standard output as is, standard error prefixed "! ",
// a non-zero exit status as "[exit N]". Lines starting with "#" before the
// first command are comments.
func parseScript(text string) (header []string, cases []scriptCase) {
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if cmd, ok := strings.CutPrefix(line, "> "); ok {
			cases = append(cases, scriptCase{cmd: cmd})
			continue
		}
		if len(cases) == 0 {
			header = append(header, line)
			continue
		}
		cases[len(cases)-1].want = append(cases[len(cases)-1].want, line)
	}
	return header, cases
}

// normalizers replace what differs between runs: times, zxids, session ids.
var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`^(ctime|mtime) = .*$`), "$1 = <date>"},
	{regexp.MustCompile(`^(cZxid|mZxid|pZxid) = 0x[0-9a-f]+$`), "$1 = <zxid>"},
	{regexp.MustCompile(`^ephemeralOwner = 0x[1-9a-f][0-9a-f]*$`), "ephemeralOwner = <session>"},
	{regexp.MustCompile(`"(czxid|mzxid|pzxid|ctime|mtime)":\d+`), `"$1":0`},
	{regexp.MustCompile(`"ephemeralOwner":[1-9]\d*`), `"ephemeralOwner":1`},
}

func normalize(line string) string {
	for _, n := range normalizers {
		line = n.re.ReplaceAllString(line, n.with)
	}
	return line
}

// sessionEvent matches the block zkCli prints for a change of session
// state, which arrives at a time of its own.
var sessionEvent = regexp.MustCompile(`\nWATCHER::\n\nWatchedEvent state:\w+ type:None path:null\n|\{"event":\{"state":"\w+","type":"None"\}\}\n`)

func lines(s string, prefix string) []string {
	s = sessionEvent.ReplaceAllString(s, "")
	if s == "" {
		return nil
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		out = append(out, prefix+normalize(l))
	}
	return out
}

// TestScripts runs testdata/*.txt against a Paddock server: each file
// with a fresh shell (in JSON mode for *_json.txt), checking every
// command's output.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in testdata: %v", err)
	}
	srv := zktest.StartPaddock(t, zktest.PaddockOptions{})
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			runScriptFile(t, file, srv.Addr)
		})
	}
}

func runScriptFile(t *testing.T, file, addr string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	header, cases := parseScript(string(data))
	var out, errOut lockedBuffer
	sh := cli.NewShell(cli.Options{
		Server:         addr,
		SessionTimeout: 10 * time.Second,
		Out:            &out,
		Err:            &errOut,
		JSON:           strings.HasSuffix(file, "_json.txt"),
		Version:        "test",
		Location:       time.UTC,
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := sh.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	out.take()

	var got strings.Builder
	for _, l := range header {
		got.WriteString(l + "\n")
	}
	for _, c := range cases {
		err := sh.Exec(ctx, c.cmd)
		res := append(lines(out.take(), ""), lines(errOut.take(), "! ")...)
		if st := cli.Status(err); st != 0 {
			res = append(res, "[exit "+strconv.Itoa(st)+"]")
		}
		got.WriteString("> " + c.cmd + "\n")
		for _, l := range res {
			got.WriteString(l + "\n")
		}
		if !*update && strings.Join(res, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s: %q:\n--- got\n%s\n--- want\n%s", file, c.cmd, strings.Join(res, "\n"), strings.Join(c.want, "\n"))
		}
	}
	if *update {
		if err := os.WriteFile(file, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
