package difftest

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/paddockhq/paddock/internal/zktest"
)

var (
	update = flag.Bool("update", false,
		"write the ZooKeeper transcripts of the scenarios run to testdata/golden/")
	withPaddock = flag.Bool("paddock", true,
		"also run every scenario against Paddock and compare (false: ZooKeeper against the golden files only)")
)

const (
	corpusDir = "testdata"
	goldenDir = "testdata/golden"
)

// serverConfig is what both servers get beyond zktest's defaults:
// no per-IP connection cap (scenarios open many connections) and no
// fsync, to keep the run short.
var serverConfig = []string{"maxClientCnxns=0", "forceSync=no"}

// TestDifferential runs every scenario of testdata/*.txt against one
// Apache ZooKeeper and one Paddock server, checks ZooKeeper's transcript
// against testdata/golden/, and checks that Paddock's transcript equals
// ZooKeeper's, except for the scenarios of knownDifferences, whose
// Paddock transcript is checked against testdata/golden/paddock/.
func TestDifferential(t *testing.T) {
	corpus, err := LoadCorpus(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	for name := range knownDifferences {
		if !hasScenario(corpus, name) {
			t.Errorf("knownDifferences names %q, which is not a scenario of %s", name, corpusDir)
		}
	}
	golden, err := readGoldenDir(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	paddockGolden, err := readGoldenDir(filepath.Join(goldenDir, "paddock"))
	if err != nil {
		t.Fatal(err)
	}

	// One server of each kind for the whole corpus: every scenario works
	// under its own root path and with its own sessions.
	zk := zktest.StartZooKeeper(t, zktest.ZKOptions{ExtraConfig: serverConfig})
	var pd *zktest.Process
	if *withPaddock {
		pd = zktest.StartPaddock(t, zktest.PaddockOptions{ExtraConfig: serverConfig})
	}

	var mu sync.Mutex
	zkOut := map[string][]string{}
	pdOut := map[string][]string{}
	for i, sc := range corpus {
		t.Run(sc.Name, func(t *testing.T) {
			root := fmt.Sprintf("/t%d", i)
			var zkLines, pdLines []string
			var zkErr, pdErr error
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				zkLines, zkErr = Run(zk.Addr, sc, RunOptions{Root: root})
			}()
			if pd != nil {
				// Paddock follows ZooKeeper 3.9 in sending the triggering
				// zxid in notifications, where 3.8 sends -1 (see
				// RunOptions.HideEventZxids); the known differences pin
				// Paddock's own transcript, zxids included.
				_, known := knownDifferences[sc.Name]
				pdLines, pdErr = Run(pd.Addr, sc, RunOptions{Root: root, HideEventZxids: !known})
			}
			wg.Wait()
			if zkErr != nil {
				t.Fatalf("ZooKeeper: %v", zkErr)
			}
			mu.Lock()
			zkOut[sc.Name] = zkLines
			if pd != nil && pdErr == nil {
				pdOut[sc.Name] = pdLines
			}
			mu.Unlock()
			zkText := strings.Join(zkLines, "\n")
			checkZooKeeperGolden(t, sc, zkText, golden, goldenDir)
			if pd == nil {
				return
			}
			if pdErr != nil {
				t.Fatalf("Paddock: %v", pdErr)
			}
			checkPaddock(t, sc, zkText, strings.Join(pdLines, "\n"), paddockGolden)
		})
	}
	if *update {
		if err := writeGolden(corpus, zkOut, golden, goldenDir, nil); err != nil {
			t.Fatal(err)
		}
		if pd != nil {
			if err := writeGolden(corpus, pdOut, paddockGolden, filepath.Join(goldenDir, "paddock"), knownDifferences); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// checkZooKeeperGolden compares ZooKeeper's transcript of sc with its
// golden file in dir (golden holds them by scenario), unless -update.
func checkZooKeeperGolden(t *testing.T, sc Scenario, zkText string, golden map[string]string, dir string) {
	t.Helper()
	if *update {
		return
	}
	want, ok := golden[sc.Name]
	switch {
	case !ok:
		t.Errorf("no golden transcript for %s in %s (run with -update)\nZooKeeper:\n%s", sc.Name, dir, zkText)
	case want != zkText:
		t.Errorf("ZooKeeper no longer matches %s/%s (-golden +zookeeper):\n%s",
			dir, sc.File, UnifiedDiff("golden", "zookeeper", want, zkText))
	}
}

// checkPaddock compares Paddock's transcript with ZooKeeper's, or with
// its own golden file for a known difference.
func checkPaddock(t *testing.T, sc Scenario, zkText, pdText string, paddockGolden map[string]string) {
	reason, known := knownDifferences[sc.Name]
	if !known {
		if zkText != pdText {
			t.Errorf("Paddock differs from ZooKeeper in %s:%d (-zookeeper +paddock):\n%s",
				sc.File, sc.Line, UnifiedDiff("zookeeper", "paddock", zkText, pdText))
		}
		return
	}
	if zkText == pdText {
		t.Errorf("%s is listed in knownDifferences (%s) but Paddock now matches ZooKeeper: remove the entry", sc.Name, reason)
		return
	}
	t.Logf("known difference (%s):\n%s", reason, UnifiedDiff("zookeeper", "paddock", zkText, pdText))
	if *update {
		return
	}
	want, ok := paddockGolden[sc.Name]
	switch {
	case !ok:
		t.Errorf("no Paddock golden transcript for known difference %s (run with -update)", sc.Name)
	case want != pdText:
		t.Errorf("Paddock no longer matches %s/paddock (-golden +paddock):\n%s",
			goldenDir, UnifiedDiff("golden", "paddock", want, pdText))
	}
}

func hasScenario(corpus []Scenario, name string) bool {
	for _, sc := range corpus {
		if sc.Name == name {
			return true
		}
	}
	return false
}

// readGoldenDir reads every golden file of dir into scenario name →
// transcript. A missing directory is empty.
func readGoldenDir(dir string) (map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		m, err := ParseGolden(string(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for k, v := range m {
			out[k] = v
		}
	}
	return out, nil
}

// writeGolden rewrites the golden files of dir: one per script file,
// holding the transcripts just produced and, for scenarios not run this
// time, the old ones. With only set, it writes just those scenarios.
func writeGolden(corpus []Scenario, fresh map[string][]string, old map[string]string, dir string, only map[string]string) error {
	byFile := map[string][]Scenario{}
	for _, sc := range corpus {
		if only != nil {
			if _, ok := only[sc.Name]; !ok {
				continue
			}
		}
		byFile[sc.File] = append(byFile[sc.File], sc)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := make([]string, 0, len(byFile))
	for f := range byFile {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		var b strings.Builder
		for _, sc := range byFile[f] {
			text, ok := old[sc.Name]
			if lines, ran := fresh[sc.Name]; ran {
				text, ok = strings.Join(lines, "\n"), true
			}
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "== %s\n%s\n\n", sc.Name, text)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}
