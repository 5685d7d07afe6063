package config

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestReadPropertiesMatchesJava compares readProperties with what
// java.util.Properties read from the same file (testdata/properties, made by
// PropDump.java).
func TestReadPropertiesMatchesJava(t *testing.T) {
	f, err := os.Open("testdata/properties/tricky.properties")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	props, err := readProperties(f)
	if err != nil {
		t.Fatalf("readProperties: %v", err)
	}
	got := make(map[string]string)
	for _, p := range props {
		got[p.key] = p.value // last wins, as in Properties
	}

	golden, err := os.Open("testdata/properties/tricky.golden")
	if err != nil {
		t.Fatal(err)
	}
	defer golden.Close()
	want := make(map[string]string)
	sc := bufio.NewScanner(golden)
	for sc.Scan() {
		var kv struct{ Key, Value string }
		if err := json.Unmarshal(sc.Bytes(), &kv); err != nil {
			t.Fatalf("golden line %q: %v", sc.Text(), err)
		}
		want[kv.Key] = kv.Value
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("empty golden file")
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("key %q: got %q (present %v), Java read %q", k, g, ok, v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("extra key %q = %q that Java did not read", k, v)
		}
	}
}

func TestReadPropertiesLines(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []property
	}{
		{"empty", "", nil},
		{"comments only", "# a\n! b\n\n   \n", nil},
		{"line numbers", "# c\na=1\n\nb=2\\\n  3\nc=4", []property{
			{"a", "1", 2}, {"b", "23", 4}, {"c", "4", 6}}},
		{"crlf and cr", "a=1\r\nb=2\rc=3", []property{{"a", "1", 1}, {"b", "2", 2}, {"c", "3", 3}}},
		{"duplicates kept in order", "k=1\nk=2", []property{{"k", "1", 1}, {"k", "2", 2}}},
		{"lone low surrogate", `k=\uDE00`, []property{{"k", "\uFFFD", 1}}},
		{"lone high surrogate", `k=\uD83Dx`, []property{{"k", "\uFFFDx", 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readProperties(strings.NewReader(tt.in))
			if err != nil {
				t.Fatalf("readProperties: %v", err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d properties %+v, want %+v", len(got), got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("property %d: got %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestReadPropertiesErrors(t *testing.T) {
	tests := []struct {
		name, in, wantErr string
	}{
		{"short unicode escape", "a=1\nbad=\\u12", `line 2: malformed \uxxxx escape`},
		{"non-hex unicode escape", "bad=\\uzzzz", `line 1: malformed \uxxxx escape`},
		{"bad escape in key", "b\\u1=x", `line 1: malformed \uxxxx escape`},
		{"too large", strings.Repeat("#", maxFileSize+1), "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readProperties(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
