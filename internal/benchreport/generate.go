package benchreport

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Where Generate writes, under Options.OutDir.
const (
	DocName  = "benchmarks.md" // the document holding the markers
	ChartDir = "benchmarks"    // the charts' directory
)

// Intro is the text ReplaceSection puts above the markers when it adds the
// section; it is not regenerated afterwards.
const Intro = "Run the comparison, then regenerate this section and its charts (`docs/benchmarks/`), with\n\n" +
	"```sh\n" +
	"scripts/bench-vs-zookeeper.sh     # about 30 minutes with the defaults; QUICK=1: a 2-minute smoke test\n" +
	"go run ./scripts/benchreport -in bench-results/results.jsonl -out docs\n" +
	"```\n\n" +
	"The script's header comment lists its knobs (DURATION, WARMUP, REPS, SESSIONS, INFLIGHT, WORKLOADS,\n" +
	"ZNODES, OUT, QUICK, ...); [bench.md](bench.md#side-by-side-with-apache-zookeeper) describes the method.\n" +
	"Everything between the markers below is generated: edit the generator (`internal/benchreport`), not the text.\n"

// Options say what Generate reads and writes.
type Options struct {
	// In is the results file (JSON Lines) of scripts/bench-vs-zookeeper.sh.
	In string
	// OutDir holds DocName and ChartDir ("docs").
	OutDir string
	// Command is the report command shown in the section; "" means
	// "go run ./scripts/benchreport -in <In> -out <OutDir>".
	Command string
}

// Generate reads the results, draws the charts into OutDir/ChartDir and
// rewrites the generated section of OutDir/DocName (a missing document is
// created). It returns the paths it wrote.
func Generate(opts Options) ([]string, error) {
	f, err := os.Open(opts.In)
	if err != nil {
		return nil, fmt.Errorf("benchreport: %w", err)
	}
	data, err := Read(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, opts.In)
	}
	sum := Summarize(data)

	chartDir := filepath.Join(opts.OutDir, ChartDir)
	if err := os.MkdirAll(chartDir, 0o755); err != nil {
		return nil, fmt.Errorf("benchreport: %w", err)
	}
	charts, err := Charts(sum, chartDir)
	var written []string
	for _, c := range charts {
		written = append(written, filepath.Join(chartDir, c))
	}
	if err != nil {
		return written, err
	}

	cmd := opts.Command
	if cmd == "" {
		cmd = fmt.Sprintf("go run ./scripts/benchreport -in %s -out %s", filepath.ToSlash(opts.In), filepath.ToSlash(opts.OutDir))
	}
	body := Markdown(sum, MarkdownOptions{ReportCommand: cmd, ChartDir: ChartDir})

	docPath := filepath.Join(opts.OutDir, DocName)
	doc, err := os.ReadFile(docPath)
	if errors.Is(err, fs.ErrNotExist) {
		doc, err = []byte("# Benchmarks\n"), nil
	}
	if err != nil {
		return written, fmt.Errorf("benchreport: %w", err)
	}
	out, err := ReplaceSection(doc, []byte(Intro), body)
	if err != nil {
		return written, fmt.Errorf("%w (in %s)", err, docPath)
	}
	if err := writeFileAtomic(docPath, out); err != nil {
		return written, err
	}
	return append(written, docPath), nil
}

// writeFileAtomic replaces path with data through a temporary file and a
// rename, keeping path's permissions.
func writeFileAtomic(path string, data []byte) error {
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("benchreport: %w", err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), mode)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("benchreport: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("benchreport: %w", err)
	}
	return nil
}
