package term

import (
	"errors"
	"slices"
	"testing"
)

func TestComplete(t *testing.T) {
	tree := map[string][]string{
		"/":          {"zookeeper", "foo", "foobar", "bar", "ünï"},
		"/foo":       {"b", "baz", "qux"},
		"/foo/baz":   {"deep"},
		"/zookeeper": {"quota", "config"},
	}
	children := func(path string) ([]string, error) {
		names, ok := tree[path]
		if !ok {
			return nil, errors.New("no node")
		}
		return names, nil
	}
	commands := []string{"ls", "create", "close", "connect", "get", "getAcl", "getAllChildrenNumber", "quit", "get"}

	tests := []struct {
		name       string
		line       string
		pos        int // -1: end of line
		head       string
		candidates []string
		tail       string
	}{
		{"command unique", "cre", -1, "", []string{"create "}, ""},
		{"command several", "get", -1, "", []string{"get ", "getAcl ", "getAllChildrenNumber "}, ""},
		{"command prefix c", "c", -1, "", []string{"close ", "connect ", "create "}, ""},
		{"command none", "xyz", -1, "", nil, ""},
		{"empty line lists all commands", "", -1, "", []string{"close ", "connect ", "create ", "get ", "getAcl ", "getAllChildrenNumber ", "ls ", "quit "}, ""},
		{"leading blanks", "  qu", -1, "  ", []string{"quit "}, ""},
		{"command before cursor only", "crXYZ /a", 2, "", []string{"create "}, "XYZ /a"},
		{"root children", "ls /", -1, "ls ", []string{"/bar", "/foo", "/foobar", "/zookeeper", "/ünï"}, ""},
		{"root prefix", "ls /fo", -1, "ls ", []string{"/foo", "/foobar"}, ""},
		{"root unique", "ls /z", -1, "ls ", []string{"/zookeeper"}, ""},
		{"exact name is a candidate", "ls /foobar", -1, "ls ", []string{"/foobar"}, ""},
		{"nested", "get /foo/b", -1, "get ", []string{"/foo/b", "/foo/baz"}, ""},
		{"deeper", "get -s /foo/baz/", -1, "get -s ", []string{"/foo/baz/deep"}, ""},
		{"after flags", "create -e -s /foo/q", -1, "create -e -s ", []string{"/foo/qux"}, ""},
		{"tab separated", "ls\t/z", -1, "ls\t", []string{"/zookeeper"}, ""},
		{"path before cursor", "get /fo -s", 7, "get ", []string{"/foo", "/foobar"}, " -s"},
		{"multibyte path, pos in runes", "ls /ü x", 5, "ls ", []string{"/ünï"}, " x"},
		{"no such parent", "ls /nope/a", -1, "ls ", nil, ""},
		{"no match", "ls /foo/z", -1, "ls ", nil, ""},
		{"flag", "ls -", -1, "ls ", nil, ""},
		{"data argument", "set /foo da", -1, "set /foo ", nil, ""},
		{"empty argument", "ls ", -1, "ls ", nil, ""},
		{"pos beyond end", "cre", 99, "", []string{"create "}, ""},
		{"negative pos", "cre", -5, "", []string{"close ", "connect ", "create ", "get ", "getAcl ", "getAllChildrenNumber ", "ls ", "quit "}, "cre"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pos := tt.pos
			if pos == -1 {
				pos = len([]rune(tt.line))
			}
			head, candidates, tail := Complete(tt.line, pos, commands, children)
			if head != tt.head || !slices.Equal(candidates, tt.candidates) || tail != tt.tail {
				t.Errorf("Complete(%q, %d) = %q, %q, %q; want %q, %q, %q",
					tt.line, pos, head, candidates, tail, tt.head, tt.candidates, tt.tail)
			}
		})
	}
}

func TestCompleteNilChildren(t *testing.T) {
	head, candidates, tail := Complete("ls /a", 5, nil, nil)
	if head != "ls " || candidates != nil || tail != "" {
		t.Errorf("Complete with nil children = %q, %q, %q", head, candidates, tail)
	}
}

func FuzzComplete(f *testing.F) {
	for _, s := range []string{"", "cre", "ls /fo", "get -s /a/b c", "ls /ü\t/x"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, line string, pos int) {
		children := func(string) ([]string, error) { return []string{"a", "ab", ""}, nil }
		head, candidates, tail := Complete(line, pos, []string{"ls", "get"}, children)
		before := []rune(line)
		pos = min(max(pos, 0), len(before))
		if len(head) > len(string(before[:pos])) || tail != string(before[pos:]) {
			t.Fatalf("Complete(%q, %d) = %q, %q, %q: head and tail do not frame the cursor", line, pos, head, candidates, tail)
		}
	})
}
