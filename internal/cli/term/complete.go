package term

import (
	"slices"
	"strings"
)

// Complete returns the completion candidates for the word that ends at the
// cursor, in the form liner's WordCompleter wants: the line becomes
// head+candidate+tail. pos is the cursor position in runes.
//
//   - The first word completes to the command names starting with it, each
//     followed by a space ("cre" → "create ").
//   - A word starting with "/" completes to the paths of the children of its
//     parent znode whose names start with the rest ("/fo" → "/foo", "/foo/b" →
//     "/foo/bar"), listed with children(parent). A candidate is the full path
//     with nothing after it, as zkCli completes: no trailing "/" (which would
//     make the path invalid) and no space, so typing "/" goes on to the next
//     level.
//   - Other words (flags, data, versions) complete to nothing, as does a path
//     whose parent cannot be listed.
//
// Candidates are sorted. Complete does no I/O besides calling children.
func Complete(line string, pos int, commands []string, children func(path string) ([]string, error)) (head string, candidates []string, tail string) {
	runes := []rune(line)
	pos = min(max(pos, 0), len(runes))
	before := string(runes[:pos])
	tail = string(runes[pos:])
	start := strings.LastIndexAny(before, " \t") + 1
	head, word := before[:start], before[start:]

	switch {
	case strings.TrimSpace(head) == "":
		for _, c := range commands {
			if strings.HasPrefix(c, word) {
				candidates = append(candidates, c+" ")
			}
		}
	case strings.HasPrefix(word, "/"):
		slash := strings.LastIndex(word, "/")
		parent, prefix := word[:slash], word[slash+1:]
		if parent == "" {
			parent = "/"
		}
		if children == nil {
			return head, nil, tail
		}
		names, err := children(parent)
		if err != nil {
			return head, nil, tail
		}
		for _, name := range names {
			if strings.HasPrefix(name, prefix) {
				candidates = append(candidates, word[:slash+1]+name)
			}
		}
	}
	slices.Sort(candidates)
	return head, slices.Compact(candidates), tail
}
