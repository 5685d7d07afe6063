package term

import (
	"bytes"
	"io"
	"sync"
)

// Console keeps output that a shell writes at any time (watch events) from
// garbling the line being edited. Create one with NewConsole on the terminal,
// give its writers to the shell, and pass it to Run in Options.Console.
// A nil *Console does nothing (its Writer returns w itself). Its methods are safe for concurrent use.
type Console struct {
	terminal io.Writer

	mu        sync.Mutex
	prompting bool
	prompt    string
}

// clearLine moves to the start of the line and erases it (ANSI CR + EL).
const clearLine = "\r\x1b[K"

// NewConsole returns a Console that redraws the prompt on terminal, the
// writer the line editor also draws on (os.Stdout).
func NewConsole(terminal io.Writer) *Console {
	return &Console{terminal: terminal}
}

// Writer returns a writer that writes to w: unchanged while no line is being
// edited, and while one is, after erasing the prompt line and followed by the
// prompt drawn again. Output is forced to end its last line, so that the
// prompt stays on a line of its own.
func (c *Console) Writer(w io.Writer) io.Writer {
	if c == nil {
		return w
	}
	return &consoleWriter{c: c, w: w}
}

type consoleWriter struct {
	c *Console
	w io.Writer
}

func (cw *consoleWriter) Write(p []byte) (int, error) {
	c := cw.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.prompting || len(p) == 0 {
		return cw.w.Write(p)
	}
	io.WriteString(c.terminal, clearLine)
	n, err := cw.w.Write(p)
	if !bytes.HasSuffix(p, []byte("\n")) {
		io.WriteString(c.terminal, "\n")
	}
	io.WriteString(c.terminal, c.prompt)
	return n, err
}

// beginPrompt records that prompt is being shown and a line edited.
func (c *Console) beginPrompt(prompt string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.prompting, c.prompt = true, prompt
	c.mu.Unlock()
}

// endPrompt records that the line has been entered.
func (c *Console) endPrompt() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.prompting = false
	c.mu.Unlock()
}
