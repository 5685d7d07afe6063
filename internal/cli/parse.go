package cli

import (
	"fmt"
	"strconv"
	"strings"
)

// Tokenize splits a command line into words with zkCli.sh's rules
// (ZooKeeperMain.MyCommandOptions.parseCommand): words are separated by
// ASCII white space; a word that starts with a double or single quote runs to
// the next matching quote, which may enclose spaces and is removed; a quote
// inside a word is kept ("a"b" is one word, a"b). An opening quote without its
// closing one is dropped and the rest of the word read as an unquoted word.
// There are no escapes. A line of white space only is one word, its last
// character: Java's regular expression gives that blank back to match a word
// (zkCli then reports "Command not found").
func Tokenize(line string) []string {
	if line != "" && skipSpace(line, 0) == len(line) {
		return []string{line[len(line)-1:]}
	}
	var words []string
	i := 0
	for i < len(line) {
		j := i
		for j < len(line) && isJavaSpace(line[j]) {
			j++
		}
		if j == len(line) {
			break
		}
		if q := line[j]; q == '"' || q == '\'' {
			if k := strings.IndexByte(line[j+1:], q); k >= 0 {
				words = append(words, line[j+1:j+1+k])
				i = skipSpace(line, j+2+k)
				continue
			}
			if j > i {
				// Java's regular expression gives back the last blank it
				// skipped and takes the word from there, quote and all.
				end := nextSpace(line, j)
				words = append(words, line[j-1:end])
				i = skipSpace(line, end)
				continue
			}
			i = j + 1 // the unmatched quote is skipped
			continue
		}
		end := nextSpace(line, j)
		words = append(words, line[j:end])
		i = skipSpace(line, end)
	}
	return words
}

// isJavaSpace reports whether c is white space for Java's regular
// expression class \s.
func isJavaSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\x0b', '\f', '\r':
		return true
	}
	return false
}

func skipSpace(s string, i int) int {
	for i < len(s) && isJavaSpace(s[i]) {
		i++
	}
	return i
}

func nextSpace(s string, i int) int {
	for i < len(s) && !isJavaSpace(s[i]) {
		i++
	}
	return i
}

// flagSpec describes a command's options as Apache Commons CLI declares
// them for zkCli: single letters, some taking a value, some in a group of
// which at most one may be given (and, when required, exactly one).
type flagSpec struct {
	// opts lists the letters in declaration order; a letter followed by ':'
	// takes a value.
	opts string
	// group lists the letters of the option group, if any, with their
	// descriptions (for the "Missing required option" message).
	group         []groupOpt
	groupRequired bool
}

type groupOpt struct {
	name byte
	desc string
}

// flags is the result of parsing a command's words.
type flags struct {
	set  map[byte]bool
	vals map[byte]string
	// args are the words that are not options, the command name first
	// (Commons CLI's CommandLine.getArgs()).
	args []string
}

func (f *flags) has(c byte) bool { return f.set[c] }

func (f *flags) value(c byte) string { return f.vals[c] }

// parseError is an error Commons CLI's DefaultParser reports; its message
// is the one zkCli prints (the exception's class and message).
type parseError struct{ msg string }

func (e *parseError) Error() string { return e.msg }

func (spec flagSpec) known(c byte) (known, hasArg bool) {
	i := strings.IndexByte(spec.opts, c)
	if i < 0 || c == ':' {
		return false, false
	}
	return true, i+1 < len(spec.opts) && spec.opts[i+1] == ':'
}

func (spec flagSpec) inGroup(c byte) bool {
	for _, g := range spec.group {
		if g.name == c {
			return true
		}
	}
	return false
}

// parseFlags parses words (the command name first) as Apache Commons CLI
// 1.5's DefaultParser does for zkCli's commands: options may appear anywhere;
// "-sw" bundles flags; "-v5" and "-v 5" give a value; a value may be a
// negative number; "--" ends the options; "-" is a word. Errors carry Commons
// CLI's messages.
func parseFlags(spec flagSpec, words []string) (*flags, error) {
	f := &flags{set: map[byte]bool{}, vals: map[byte]string{}}
	var pending byte // option waiting for its value
	var selected byte
	skip := false
	unrecognized := func(tok string) error {
		return &parseError{"org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: " + tok}
	}
	missingArg := func() error {
		return &parseError{"org.apache.commons.cli.MissingArgumentException: Missing argument for option: " + string(pending)}
	}
	handle := func(c byte) error {
		if pending != 0 {
			return missingArg()
		}
		if spec.inGroup(c) {
			if selected != 0 && selected != c {
				return &parseError{fmt.Sprintf("org.apache.commons.cli.AlreadySelectedException: The option '%c' was specified but an option from this group has already been selected: '%c'", c, selected)}
			}
			selected = c
		}
		f.set[c] = true
		if _, hasArg := spec.known(c); hasArg {
			pending = c // a repeated option takes a value again; the first is kept
		}
		return nil
	}
	setValue := func(v string) {
		if _, ok := f.vals[pending]; !ok {
			f.vals[pending] = v
		}
		pending = 0
	}
	for i, tok := range words {
		if i == 0 {
			f.args = append(f.args, tok) // the command name
			continue
		}
		switch {
		case skip:
			f.args = append(f.args, tok)
		case tok == "--":
			skip = true
		case pending != 0 && spec.isArgument(tok):
			setValue(tok)
		case strings.HasPrefix(tok, "--"):
			return nil, unrecognized(tok)
		case strings.HasPrefix(tok, "-") && tok != "-":
			t := tok[1:]
			if name, val, ok := strings.Cut(t, "="); ok {
				if len(name) == 1 {
					if known, hasArg := spec.known(name[0]); known && hasArg {
						if err := handle(name[0]); err != nil {
							return nil, err
						}
						setValue(val)
						continue
					}
				}
				return nil, unrecognized(tok)
			}
			if len(t) == 1 {
				if known, _ := spec.known(t[0]); !known {
					return nil, unrecognized(tok)
				}
				if err := handle(t[0]); err != nil {
					return nil, err
				}
				continue
			}
			// Concatenated options, or an option and its value.
			for k := 0; k < len(t); k++ {
				known, hasArg := spec.known(t[k])
				if !known {
					return nil, unrecognized(tok)
				}
				if err := handle(t[k]); err != nil {
					return nil, err
				}
				if hasArg && pending != 0 && k+1 < len(t) {
					setValue(t[k+1:])
					break
				}
			}
		default:
			f.args = append(f.args, tok)
		}
	}
	if pending != 0 {
		return nil, missingArg()
	}
	if spec.groupRequired && selected == 0 {
		parts := make([]string, len(spec.group))
		for i, g := range spec.group {
			parts[i] = "-" + string(g.name) + " " + g.desc
		}
		return nil, &parseError{"org.apache.commons.cli.MissingOptionException: Missing required option: [" + strings.Join(parts, ", ") + "]"}
	}
	return f, nil
}

// isArgument reports whether tok can be an option's value: it is not one of
// the options (alone or bundled), or it is a negative number.
func (spec flagSpec) isArgument(tok string) bool {
	if strings.HasPrefix(tok, "-") && len(tok) > 1 {
		if _, err := strconv.ParseFloat(tok, 64); err == nil {
			return true
		}
		if strings.HasPrefix(tok, "--") {
			return true // no command has long options
		}
		name, _, _ := strings.Cut(tok[1:], "=")
		if name != "" {
			if known, _ := spec.known(name[0]); known {
				return false
			}
		}
	}
	return true
}

// parseJavaInt parses s as Java's Integer.parseInt does: an optional sign
// and decimal digits, within 32 bits.
func parseJavaInt(s string) (int32, bool) {
	if s == "" || strings.ContainsAny(s, "_") {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}

// parseJavaLong parses s as Java's Long.parseLong does.
func parseJavaLong(s string) (int64, bool) {
	if s == "" || strings.ContainsAny(s, "_") {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// decodeJavaInt parses s as Java's Integer.decode does: a sign, then
// decimal, "0x"/"0X"/"#" hexadecimal or "0" octal digits.
func decodeJavaInt(s string) (int32, bool) {
	neg := false
	body := s
	if strings.HasPrefix(body, "-") || strings.HasPrefix(body, "+") {
		neg = body[0] == '-'
		body = body[1:]
	}
	base := 10
	switch {
	case strings.HasPrefix(body, "0x"), strings.HasPrefix(body, "0X"):
		base, body = 16, body[2:]
	case strings.HasPrefix(body, "#"):
		base, body = 16, body[1:]
	case len(body) > 1 && body[0] == '0':
		base, body = 8, body[1:]
	}
	if body == "" || strings.ContainsAny(body, "+-_") {
		return 0, false
	}
	n, err := strconv.ParseInt(body, base, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	if n < -1<<31 || n > 1<<31-1 {
		return 0, false
	}
	return int32(n), true
}

// validatePath checks a znode path with Apache ZooKeeper's client rules
// (PathUtils.validatePath) and returns the message its
// IllegalArgumentException carries, which zkCli prints.
func validatePath(path string, sequential bool) error {
	p := path
	if sequential {
		p += "1"
	}
	fail := func(msg string) error { return &pathError{msg} }
	if p == "" {
		return fail("Path length must be > 0")
	}
	if p[0] != '/' {
		return fail("Path must start with / character")
	}
	if len(p) == 1 {
		return nil
	}
	if p[len(p)-1] == '/' {
		return fail("Path must not end with / character")
	}
	chars := []rune(p) // Java indexes UTF-16 units; runes are close enough for the message
	reason := ""
	last := '/'
	for i := 1; i < len(chars); i++ {
		c := chars[i]
		switch {
		case c == 0:
			reason = fmt.Sprintf("null character not allowed @%d", i)
		case c == '/' && last == '/':
			reason = fmt.Sprintf("empty node name specified @%d", i)
		case c == '.' && last == '.':
			if chars[i-2] == '/' && (i+1 == len(chars) || chars[i+1] == '/') {
				reason = fmt.Sprintf("relative paths not allowed @%d", i)
			}
		case c == '.':
			if chars[i-1] == '/' && (i+1 == len(chars) || chars[i+1] == '/') {
				reason = fmt.Sprintf("relative paths not allowed @%d", i)
			}
		case c > 0 && c <= 0x1f, c >= 0x7f && c <= 0x9f, c >= 0xd800 && c <= 0xf8ff, c >= 0xfff0 && c <= 0xffff:
			reason = fmt.Sprintf("invalid character @%d", i)
		}
		if reason != "" {
			return fail(fmt.Sprintf("Invalid path string \"%s\" caused by %s", p, reason))
		}
		last = c
	}
	return nil
}

// pathError is a path the client refuses before sending anything.
type pathError struct{ msg string }

func (e *pathError) Error() string { return e.msg }
