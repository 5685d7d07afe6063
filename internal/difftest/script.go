package difftest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Scenario is one named script: a list of steps run in order.
type Scenario struct {
	Name  string
	File  string // base name of the file it came from
	Line  int    // line of its "== name" header
	Steps []Step
}

// Step is one script line: a client name, a command and its arguments.
type Step struct {
	Line   int
	Text   string // the line as written, trimmed
	Client string
	Cmd    string
	Args   []Token
}

// Token is one word of a script line: a bare word, a double-quoted Go
// string (Quoted, with Text unquoted), or a bracketed group of tokens.
type Token struct {
	Text   string
	Quoted bool
	Group  []Token // non-nil for a [ ... ] group
	IsList bool    // the token was a [ ... ] group
}

// String renders the token back in script syntax.
func (t Token) String() string {
	switch {
	case t.IsList:
		parts := make([]string, len(t.Group))
		for i, g := range t.Group {
			parts[i] = g.String()
		}
		return "[" + strings.Join(parts, " ") + "]"
	case t.Quoted:
		return strconv.Quote(t.Text)
	}
	return t.Text
}

// maxGroupDepth bounds the nesting of [ ... ] groups.
const maxGroupDepth = 4

// Tokenize splits a script line into tokens: words separated by blanks,
// double-quoted Go strings, and [ ... ] groups (nested at most
// maxGroupDepth deep).
func Tokenize(line string) ([]Token, error) {
	toks, rest, err := tokenize(line, 0)
	if err != nil {
		return nil, err
	}
	if rest != "" {
		return nil, fmt.Errorf("unbalanced ']' at %q", rest)
	}
	return toks, nil
}

// tokenize reads tokens until the end of s or a ']' closing the current
// group, and returns what follows that ']' (with the ']' itself when the
// caller is at depth 0, so the caller can report it).
func tokenize(s string, depth int) ([]Token, string, error) {
	toks := []Token{}
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			if depth > 0 {
				return nil, "", fmt.Errorf("missing ']'")
			}
			return toks, "", nil
		}
		switch s[0] {
		case ']':
			if depth == 0 {
				return toks, s, nil
			}
			return toks, s[1:], nil
		case '[':
			if depth >= maxGroupDepth {
				return nil, "", fmt.Errorf("groups nested deeper than %d", maxGroupDepth)
			}
			group, rest, err := tokenize(s[1:], depth+1)
			if err != nil {
				return nil, "", err
			}
			toks = append(toks, Token{Group: group, IsList: true})
			s = rest
		case '"':
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return nil, "", fmt.Errorf("bad quoted string at %q: %v", s, err)
			}
			text, err := strconv.Unquote(q)
			if err != nil {
				return nil, "", fmt.Errorf("bad quoted string %s: %v", q, err)
			}
			toks = append(toks, Token{Text: text, Quoted: true})
			s = s[len(q):]
		default:
			end := strings.IndexAny(s, " \t[]\"")
			if end < 0 {
				end = len(s)
			}
			toks = append(toks, Token{Text: s[:end]})
			s = s[end:]
		}
	}
}

// ParseScenarios parses a script file: "== name" starts a scenario, "#"
// starts a comment line, blank lines are skipped, and every other line is
// a step "<client> <command> [args...]".
func ParseScenarios(file, text string) ([]Scenario, error) {
	var out []Scenario
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		case strings.HasPrefix(line, "=="):
			name := strings.TrimSpace(strings.TrimPrefix(line, "=="))
			if name == "" || strings.ContainsAny(name, " \t/") {
				return nil, fmt.Errorf("%s:%d: scenario name %q must be one word without '/'", file, n, name)
			}
			out = append(out, Scenario{Name: name, File: file, Line: n})
			continue
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%s:%d: step before the first \"== name\" header", file, n)
		}
		toks, err := Tokenize(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", file, n, err)
		}
		if len(toks) < 2 || toks[0].IsList || toks[0].Quoted || toks[1].IsList || toks[1].Quoted {
			return nil, fmt.Errorf("%s:%d: want \"<client> <command> [args...]\", got %q", file, n, line)
		}
		if !isClientName(toks[0].Text) {
			return nil, fmt.Errorf("%s:%d: client name %q must be c<number>", file, n, toks[0].Text)
		}
		last := &out[len(out)-1]
		last.Steps = append(last.Steps, Step{
			Line: n, Text: line, Client: toks[0].Text, Cmd: toks[1].Text, Args: toks[2:],
		})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return out, nil
}

func isClientName(s string) bool {
	if len(s) < 2 || s[0] != 'c' {
		return false
	}
	_, err := strconv.Atoi(s[1:])
	return err == nil
}

// LoadCorpus parses every *.txt file of dir (sorted by name) and checks
// that scenario names are unique.
func LoadCorpus(dir string) ([]Scenario, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, fmt.Errorf("difftest: list %s: %w", dir, err)
	}
	sort.Strings(files)
	var all []Scenario
	seen := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("difftest: %w", err)
		}
		base := filepath.Base(f)
		scs, err := ParseScenarios(base, string(b))
		if err != nil {
			return nil, fmt.Errorf("difftest: %w", err)
		}
		for _, s := range scs {
			if prev, dup := seen[s.Name]; dup {
				return nil, fmt.Errorf("difftest: %s:%d: scenario %q already defined in %s", base, s.Line, s.Name, prev)
			}
			seen[s.Name] = fmt.Sprintf("%s:%d", base, s.Line)
		}
		all = append(all, scs...)
	}
	return all, nil
}
