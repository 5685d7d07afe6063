package benchreport

import (
	"bytes"
	"errors"
	"fmt"
)

// The markers around the generated section, each on a line of its own.
const (
	BeginMarker = "<!-- BEGIN GENERATED: bench-vs-zookeeper -->"
	EndMarker   = "<!-- END GENERATED: bench-vs-zookeeper -->"
)

// SectionHeading heads the section ReplaceSection inserts when the document
// has no markers yet.
const SectionHeading = "## Side by side with Apache ZooKeeper (generated)"

// ReplaceSection returns doc with the lines between BeginMarker and
// EndMarker replaced by body; every byte outside them, the markers'
// lines included, stays as it was. A document without markers gets them,
// under SectionHeading and intro, before its first "## " heading outside a
// code block (or at its end when there is none). Markers out of order,
// missing one of a pair or repeated are an error.
func ReplaceSection(doc, intro, body []byte) ([]byte, error) {
	if len(body) > 0 && body[len(body)-1] != '\n' {
		body = append(body[:len(body):len(body)], '\n')
	}
	begins, ends := markerLines(doc, BeginMarker), markerLines(doc, EndMarker)
	switch {
	case len(begins) == 0 && len(ends) == 0:
		return insertSection(doc, intro, body), nil
	case len(begins) != 1 || len(ends) != 1:
		return nil, fmt.Errorf("benchreport: want one %q line and one %q line, found %d and %d",
			BeginMarker, EndMarker, len(begins), len(ends))
	case begins[0].start > ends[0].start:
		return nil, errors.New("benchreport: the END marker comes before the BEGIN marker")
	}
	var out bytes.Buffer
	out.Write(doc[:begins[0].end])
	out.Write(body)
	out.Write(doc[ends[0].start:])
	return out.Bytes(), nil
}

// line is a line's byte range, its newline included in end.
type line struct{ start, end int }

// markerLines returns the lines that consist of marker, give or take
// surrounding blanks and a carriage return.
func markerLines(doc []byte, marker string) []line {
	var out []line
	for l := range lines(doc) {
		if string(bytes.TrimSpace(doc[l.start:l.end])) == marker {
			out = append(out, l)
		}
	}
	return out
}

// lines yields every line of doc.
func lines(doc []byte) func(yield func(line) bool) {
	return func(yield func(line) bool) {
		for start := 0; start < len(doc); {
			end := len(doc)
			if i := bytes.IndexByte(doc[start:], '\n'); i >= 0 {
				end = start + i + 1
			}
			if !yield(line{start, end}) {
				return
			}
			start = end
		}
	}
}

// insertSection puts the heading, intro, markers and body before the
// first level-2 heading outside a fenced code block.
func insertSection(doc, intro, body []byte) []byte {
	at := len(doc)
	inFence := false
	for l := range lines(doc) {
		text := doc[l.start:l.end]
		trimmed := bytes.TrimLeft(text, " ")
		if bytes.HasPrefix(trimmed, []byte("```")) || bytes.HasPrefix(trimmed, []byte("~~~")) {
			inFence = !inFence
			continue
		}
		if !inFence && bytes.HasPrefix(text, []byte("## ")) {
			at = l.start
			break
		}
	}
	var sec bytes.Buffer
	if at == len(doc) && at > 0 {
		if doc[at-1] != '\n' {
			sec.WriteByte('\n')
		}
		sec.WriteByte('\n')
	}
	sec.WriteString(SectionHeading + "\n\n")
	if len(intro) > 0 {
		sec.Write(bytes.TrimRight(intro, "\n"))
		sec.WriteString("\n\n")
	}
	sec.WriteString(BeginMarker + "\n")
	sec.Write(body)
	sec.WriteString(EndMarker + "\n")
	if at < len(doc) {
		sec.WriteByte('\n')
	}
	var out bytes.Buffer
	out.Write(doc[:at])
	out.Write(sec.Bytes())
	out.Write(doc[at:])
	return out.Bytes()
}
