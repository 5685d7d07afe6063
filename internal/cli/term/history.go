package term

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/peterh/liner"
)

// maxHistoryLine is the longest line written to the history file: liner
// refuses to read a file with a line longer than its 4096-byte buffer.
const maxHistoryLine = 4000

// historyLines returns the editor's history, oldest first.
func historyLines(ed *liner.State) []string {
	var buf bytes.Buffer
	ed.WriteHistory(&buf) // writes to a bytes.Buffer do not fail
	s := strings.TrimSuffix(buf.String(), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// trimHistory keeps the last limit lines of the editor's history.
func trimHistory(ed *liner.State, limit int) {
	if limit >= liner.HistoryLimit {
		return // liner bounds it itself
	}
	lines := historyLines(ed)
	if len(lines) <= limit {
		return
	}
	ed.ClearHistory()
	for _, l := range lines[len(lines)-limit:] {
		ed.AppendHistory(l)
	}
}

// loadHistory reads the history file into the editor. A missing file is
// not an error.
func loadHistory(ed *liner.State, path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := ed.ReadHistory(f); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	return nil
}

// saveHistory writes the last limit lines of the editor's history to path,
// replacing the file atomically, readable by its owner only.
func saveHistory(ed *liner.State, path string, limit int) error {
	var kept []string // newest first
	lines := historyLines(ed)
	for i := len(lines) - 1; i >= 0 && len(kept) < limit; i-- {
		if len(lines[i]) <= maxHistoryLine {
			kept = append(kept, lines[i])
		}
	}
	var buf bytes.Buffer
	for i := len(kept) - 1; i >= 0; i-- {
		buf.WriteString(kept[i])
		buf.WriteByte('\n')
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename this fails harmlessly
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
