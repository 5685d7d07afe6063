package curator_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// staticMethod matches the declaration of a static method and captures its
// name ("    static <T> List<T> parallel(long limitSeconds, ...").
var staticMethod = regexp.MustCompile(`(?m)^\s*(?:(?:public|private|protected)\s+)?static\s+[^=;(]*?\b(\w+)\s*\(`)

// TestJavaHelpersShared checks that the helpers of testdata/shared/Helpers.java
// have one copy: no file of TestCurator's or TestInterop's program declares
// a static method of the same name (compile adds Helpers.java to both).
func TestJavaHelpersShared(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(sharedDir, "Helpers.java"))
	if err != nil {
		t.Fatalf("the shared Java helpers: %v", err)
	}
	helpers := map[string]bool{}
	for _, m := range staticMethod.FindAllStringSubmatch(string(src), -1) {
		helpers[m[1]] = true
	}
	for _, name := range []string{"check", "equal", "parallel", "bytes", "str"} {
		if !helpers[name] {
			t.Errorf("Helpers.java declares no %s", name)
		}
	}
	for _, dir := range []string{"testdata", filepath.Join("testdata", "interop")} {
		files, err := filepath.Glob(filepath.Join(dir, "*.java"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Java sources in %s: %v", dir, err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range staticMethod.FindAllStringSubmatch(string(b), -1) {
				if helpers[m[1]] {
					t.Errorf("%s declares %s, a copy of Helpers.%s; use the shared one", f, m[1], m[1])
				}
			}
		}
	}
}
