package difftest

import (
	"fmt"
	"strings"
)

// ParseGolden reads a golden file: "== name" lines start a scenario's
// transcript, which runs to the next header; the blank lines that
// separate scenarios are not part of the transcripts.
func ParseGolden(text string) (map[string]string, error) {
	out := map[string]string{}
	name := ""
	var cur []string
	flush := func() {
		if name != "" {
			for len(cur) > 0 && cur[len(cur)-1] == "" {
				cur = cur[:len(cur)-1]
			}
			out[name] = strings.Join(cur, "\n")
		}
	}
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "== ") {
			flush()
			name, cur = strings.TrimSpace(line[3:]), nil
			if _, dup := out[name]; dup {
				return nil, fmt.Errorf("line %d: scenario %q appears twice", i+1, name)
			}
			continue
		}
		if name == "" {
			if strings.TrimSpace(line) != "" {
				return nil, fmt.Errorf("line %d: text before the first \"== name\" header", i+1)
			}
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return out, nil
}
