package proto

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsStayPure keeps the package free of I/O and non-stdlib
// dependencies: its non-test files may import only these packages.
func TestImportsStayPure(t *testing.T) {
	allowed := map[string]bool{"encoding/binary": true, "errors": true, "fmt": true, "io": true, "math": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !allowed[path] {
				t.Errorf("%s imports %q; package proto may import only %v", f, path, allowed)
			}
		}
	}
}
