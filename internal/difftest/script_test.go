package difftest

import (
	"reflect"
	"strings"
	"testing"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		line string
		want string // tokens rendered back with Token.String, joined by "|"
		err  string
	}{
		{line: "c1 create /a data persistent", want: "c1|create|/a|data|persistent"},
		{line: `c1 create "/a b" "" x`, want: `c1|create|"/a b"|""|x`},
		{line: `c1 set /a "\x00\u00e9" -1`, want: `c1|set|/a|"\x00é"|-1`},
		{line: "c1 multi [create /x \"\" persistent] [check /a 5]", want: `c1|multi|[create /x "" persistent]|[check /a 5]`},
		{line: "c1 multi []", want: "c1|multi|[]"},
		{line: "  c1\tget  /a  ", want: "c1|get|/a"},
		{line: "c1 multi [a [b]]", want: "c1|multi|[a [b]]"},
		{line: "c1 multi [create", err: "missing ']'"},
		{line: "c1 multi ]", err: "unbalanced"},
		{line: `c1 set "unterminated`, err: "quoted string"},
		{line: "c1 [[[[[x]]]]]", err: "nested deeper"},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			toks, err := Tokenize(tc.line)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Tokenize(%q) error = %v, want one containing %q", tc.line, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Tokenize(%q): %v", tc.line, err)
			}
			parts := make([]string, len(toks))
			for i, tok := range toks {
				parts[i] = tok.String()
			}
			if got := strings.Join(parts, "|"); got != tc.want {
				t.Errorf("Tokenize(%q) = %s, want %s", tc.line, got, tc.want)
			}
		})
	}
}

func TestParseScenarios(t *testing.T) {
	text := `# leading comment

== first
c1 connect
  # indented comment
c1 get /a watch
== second
c2 ls /
`
	got, err := ParseScenarios("f.txt", text)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "first" || got[1].Name != "second" {
		t.Fatalf("scenarios = %+v, want first and second", got)
	}
	if got[0].Line != 3 || len(got[0].Steps) != 2 {
		t.Errorf("first: line %d, %d steps; want line 3, 2 steps", got[0].Line, len(got[0].Steps))
	}
	st := got[0].Steps[1]
	want := Step{Line: 6, Text: "c1 get /a watch", Client: "c1", Cmd: "get",
		Args: []Token{{Text: "/a"}, {Text: "watch"}}}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("step = %+v, want %+v", st, want)
	}

	bad := []struct{ text, err string }{
		{"c1 connect\n", "before the first"},
		{"== \n", "one word"},
		{"== a b\n", "one word"},
		{"== a/b\n", "one word"},
		{"== s\nclient1 connect\n", "must be c<number>"},
		{"== s\nc1\n", "want \"<client> <command>"},
		{"== s\nc1 [x]\n", "want \"<client> <command>"},
		{"== s\nc1 get [x\n", "missing"},
	}
	for _, tc := range bad {
		if _, err := ParseScenarios("f.txt", tc.text); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ParseScenarios(%q) error = %v, want one containing %q", tc.text, err, tc.err)
		}
	}
}

// TestCorpus checks, without servers, that the corpus parses, is large
// enough, has a golden transcript for every scenario and none for
// scenarios that are gone, and that every known difference names a
// scenario with a pinned Paddock transcript.
func TestCorpus(t *testing.T) {
	corpus, err := LoadCorpus(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(corpus) < 150 {
		t.Errorf("corpus has %d scenarios, want at least 150", len(corpus))
	}
	golden, err := readGoldenDir(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, sc := range corpus {
		names[sc.Name] = true
		if len(sc.Steps) == 0 {
			t.Errorf("%s:%d: scenario %s has no steps", sc.File, sc.Line, sc.Name)
		}
		if _, ok := golden[sc.Name]; !ok {
			t.Errorf("%s:%d: scenario %s has no golden transcript (run TestDifferential with -update)", sc.File, sc.Line, sc.Name)
		}
	}
	for name := range golden {
		if !names[name] {
			t.Errorf("golden transcript for %s, which is not in the corpus", name)
		}
	}
	pinned, err := readGoldenDir(goldenDir + "/paddock")
	if err != nil {
		t.Fatal(err)
	}
	for name, reason := range knownDifferences {
		if reason == "" {
			t.Errorf("known difference %s has no reason", name)
		}
		if !names[name] {
			t.Errorf("known difference %s is not a scenario", name)
		}
		if _, ok := pinned[name]; !ok {
			t.Errorf("known difference %s has no pinned Paddock transcript", name)
		}
	}
	for name := range pinned {
		if _, ok := knownDifferences[name]; !ok {
			t.Errorf("pinned Paddock transcript for %s, which is not a known difference", name)
		}
	}
}

func TestLoadCorpusDuplicateName(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir+"/a.txt", "== same\nc1 connect\n")
	writeFile(t, dir+"/b.txt", "== same\nc1 connect\n")
	if _, err := LoadCorpus(dir); err == nil || !strings.Contains(err.Error(), "already defined in a.txt:1") {
		t.Fatalf("LoadCorpus error = %v, want a duplicate-name error", err)
	}
}
