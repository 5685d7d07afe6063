package config

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
)

// maxFileSize bounds how much of a config source is read. zoo.cfg files are a
// few kilobytes; anything this large is not a config file.
const maxFileSize = 4 << 20

// property is one key/value pair of a Java properties source, unescaped.
type property struct {
	key   string
	value string
	line  int // 1-based line where the logical line starts
}

// readProperties reads r in the java.util.Properties text format: logical
// lines made of natural lines joined by a trailing odd run of backslashes,
// '#' and '!' comment lines, a key ended by the first unescaped '=', ':' or
// whitespace, and backslash escapes (\t \n \r \f \uXXXX, anything else
// stands for itself). Pairs are returned in file order; duplicates are kept,
// the caller lets the last one win as Properties does.
func readProperties(r io.Reader) ([]property, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading: %w", err)
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("larger than %d bytes", maxFileSize)
	}
	lines := splitNaturalLines(string(data))

	var props []property
	for i := 0; i < len(lines); i++ {
		start := i
		first := trimLeadingSpace(lines[i])
		if first == "" || first[0] == '#' || first[0] == '!' {
			continue
		}
		var logical strings.Builder
		part := first
		// A logical line spans at most the remaining natural lines.
		for {
			cont := endsWithOddBackslashes(part)
			if cont {
				part = part[:len(part)-1]
			}
			logical.WriteString(part)
			if !cont || i+1 >= len(lines) {
				break
			}
			i++
			part = trimLeadingSpace(lines[i])
		}
		p, err := splitKeyValue(logical.String())
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", start+1, err)
		}
		p.line = start + 1
		props = append(props, p)
	}
	return props, nil
}

// splitNaturalLines splits s at "\n", "\r" and "\r\n".
func splitNaturalLines(s string) []string {
	var lines []string
	for len(s) > 0 {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
	return lines
}

// isPropSpace reports the characters Properties treats as whitespace.
func isPropSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

func trimLeadingSpace(s string) string {
	i := 0
	for i < len(s) && isPropSpace(s[i]) {
		i++
	}
	return s[i:]
}

func endsWithOddBackslashes(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitKeyValue splits one logical line (leading whitespace removed) into an
// unescaped key and value.
func splitKeyValue(line string) (property, error) {
	keyEnd := len(line)
	valueStart := len(line)
	hasSep := false
	escaped := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		if escaped {
			escaped = false
			continue
		}
		if c == '\\' {
			escaped = true
			continue
		}
		if c == '=' || c == ':' {
			keyEnd, valueStart, hasSep = i, i+1, true
			break
		}
		if isPropSpace(c) {
			keyEnd, valueStart = i, i+1
			break
		}
	}
	for valueStart < len(line) {
		c := line[valueStart]
		if !isPropSpace(c) {
			if hasSep || (c != '=' && c != ':') {
				break
			}
			hasSep = true
		}
		valueStart++
	}
	key, err := unescape(line[:keyEnd])
	if err != nil {
		return property{}, err
	}
	value, err := unescape(line[valueStart:])
	if err != nil {
		return property{}, err
	}
	return property{key: key, value: value}, nil
}

var errMalformedUnicode = errors.New(`malformed \uxxxx escape`)

// unescape resolves Properties backslash escapes. \uXXXX escapes are UTF-16
// code units; a surrogate pair written as two escapes becomes one rune.
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	var pendingHigh rune = -1 // a high surrogate waiting for its low half
	flushHigh := func() {
		if pendingHigh >= 0 {
			b.WriteRune(utf16.DecodeRune(pendingHigh, 0)) // U+FFFD
			pendingHigh = -1
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			if c != '\\' {
				flushHigh()
				b.WriteByte(c)
			}
			continue
		}
		i++
		c = s[i]
		if c != 'u' {
			flushHigh()
			switch c {
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 'f':
				b.WriteByte('\f')
			default:
				b.WriteByte(c)
			}
			continue
		}
		if i+5 > len(s) {
			return "", errMalformedUnicode
		}
		r, ok := parseHex4(s[i+1 : i+5])
		if !ok {
			return "", errMalformedUnicode
		}
		i += 4
		switch {
		case utf16.IsSurrogate(r) && r < 0xDC00:
			flushHigh()
			pendingHigh = r
		case utf16.IsSurrogate(r) && pendingHigh >= 0:
			b.WriteRune(utf16.DecodeRune(pendingHigh, r))
			pendingHigh = -1
		default:
			flushHigh()
			b.WriteRune(r) // a lone low surrogate is written as U+FFFD
		}
	}
	flushHigh()
	return b.String(), nil
}

func parseHex4(s string) (rune, bool) {
	var r rune
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, len(s) == 4
}
