package benchreport_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/benchreport"
)

const (
	begin = benchreport.BeginMarker
	end   = benchreport.EndMarker
)

// TestReplaceSectionKeepsSurroundings checks that everything up to the end
// of the BEGIN line and from the start of the END line stays byte for byte,
// for documents with odd bytes around the markers.
func TestReplaceSectionKeepsSurroundings(t *testing.T) {
	body := []byte("new line 1\n\nnew | table |\n")
	for _, tc := range []struct {
		name, before, old, after string
	}{
		{"plain", "# Doc\n\ntext\n" + begin + "\n", "old\n", end + "\n\n## Next\n"},
		{"empty section", begin + "\n", "", end + "\n"},
		{"no newline at the end", "# Doc\n" + begin + "\n", "old\nold\n", end},
		{"CRLF and trailing blanks", "# Doc\r\n\r\n" + begin + "  \r\n", "old\r\n", end + "\r\n\r\n## Go client\r\nappended\r\n"},
		{"indented markers", "text\n  " + begin + "\n", "x\n", "\t" + end + "\n```sh\n## not a heading\n```\n"},
		{"unicode and markers in prose", "µs ÷ × — `" + begin[:10] + "`\n" + begin + "\n", "ü\n", end + "\ntrailing ✓ text without newline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := tc.before + tc.old + tc.after
			got, err := benchreport.ReplaceSection([]byte(doc), []byte("intro\n"), body)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.before + string(body) + tc.after
			if string(got) != want {
				t.Fatalf("ReplaceSection:\n got %q\nwant %q", got, want)
			}
			// Idempotent, and reversible byte for byte.
			again, err := benchreport.ReplaceSection(got, nil, body)
			if err != nil || !bytes.Equal(again, got) {
				t.Errorf("second replacement changed the document: %q, %v", again, err)
			}
			back, err := benchreport.ReplaceSection(got, nil, []byte(tc.old))
			if tc.old != "" && (err != nil || string(back) != doc) {
				t.Errorf("putting the old text back gave %q, %v; want the original %q", back, err, doc)
			}
		})
	}
}

// TestReplaceSectionBodyNewline: a body without a final newline gets one, so
// the END marker stays on a line of its own.
func TestReplaceSectionBodyNewline(t *testing.T) {
	got, err := benchreport.ReplaceSection([]byte(begin+"\n"+end+"\n"), nil, []byte("no newline"))
	if err != nil {
		t.Fatal(err)
	}
	if want := begin + "\nno newline\n" + end + "\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestReplaceSectionInserts: without markers the section goes before the
// first level-2 heading outside code blocks, and the document's own bytes
// stay, split at that point.
func TestReplaceSectionInserts(t *testing.T) {
	body := "generated\n"
	section := benchreport.SectionHeading + "\n\nintro\n\n" + begin + "\n" + body + end + "\n"
	for _, tc := range []struct {
		name, head, tail, sep string
	}{
		{"before the first heading", "# Benchmarks\n\nIntro.\n\n", "## Machine\n\n* 2 CPUs\n\n## Memory\n", "\n"},
		{"skips headings in code blocks", "# B\n\n```md\n## not this\n```\n\n~~~\n## nor this\n~~~\n", "## This one\n", "\n"},
		{"### is not level 2", "# B\n\n### Sub\n\n", "## Two\n", "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := benchreport.ReplaceSection([]byte(tc.head+tc.tail), []byte("intro\n\n\n"), []byte(body))
			if err != nil {
				t.Fatal(err)
			}
			if want := tc.head + section + tc.sep + tc.tail; string(got) != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
	for _, doc := range []string{"# Only a title\n", "# No newline", ""} {
		got, err := benchreport.ReplaceSection([]byte(doc), []byte("intro"), []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(got), doc) || !strings.HasSuffix(string(got), section) {
			t.Errorf("ReplaceSection(%q) = %q, want the document then the section", doc, got)
		}
		if rest := strings.TrimSuffix(strings.TrimPrefix(string(got), doc), section); strings.Trim(rest, "\n") != "" {
			t.Errorf("ReplaceSection(%q) put %q between document and section", doc, rest)
		}
	}
}

func TestReplaceSectionErrors(t *testing.T) {
	for _, tc := range []struct{ name, doc string }{
		{"BEGIN only", "a\n" + begin + "\nb\n"},
		{"END only", "a\n" + end + "\n"},
		{"END before BEGIN", end + "\n" + begin + "\n"},
		{"two sections", begin + "\n" + end + "\n" + begin + "\n" + end + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := benchreport.ReplaceSection([]byte(tc.doc), nil, []byte("x\n")); err == nil {
				t.Errorf("ReplaceSection = %q, want an error", got)
			}
		})
	}
}
