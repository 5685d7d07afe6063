package term

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

func TestConsoleWriter(t *testing.T) {
	tests := []struct {
		name      string
		prompting bool
		write     string
		want      string
	}{
		{"passes through while a command runs", false, "a\nb", "a\nb"},
		{"redraws the prompt after a line", true, "WATCHER::\n", clearLine + "WATCHER::\n[zk: x 1] "},
		{"ends an unterminated line", true, "partial", clearLine + "partial\n[zk: x 1] "},
		{"empty write", true, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var screen bytes.Buffer
			c := NewConsole(&screen)
			w := c.Writer(&screen)
			if tt.prompting {
				c.beginPrompt("[zk: x 1] ")
			}
			n, err := fmt.Fprint(w, tt.write)
			if err != nil || n != len(tt.write) {
				t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(tt.write))
			}
			if got := screen.String(); got != tt.want {
				t.Errorf("screen = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestConsoleEndPrompt(t *testing.T) {
	var screen bytes.Buffer
	c := NewConsole(&screen)
	w := c.Writer(&screen)
	c.beginPrompt("> ")
	c.endPrompt()
	fmt.Fprint(w, "out\n")
	if got := screen.String(); got != "out\n" {
		t.Errorf("after endPrompt screen = %q, want plain output", got)
	}
}

func TestConsoleNil(t *testing.T) {
	var c *Console
	c.beginPrompt("> ") // must not panic
	var screen bytes.Buffer
	fmt.Fprint(c.Writer(&screen), "out")
	c.endPrompt()
	if screen.String() != "out" {
		t.Errorf("nil Console's writer wrote %q, want \"out\"", screen.String())
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// TestConsoleConcurrent checks that concurrent writers never split each
// other's output (run with -race).
func TestConsoleConcurrent(t *testing.T) {
	var screen lockedBuffer
	c := NewConsole(&screen)
	c.beginPrompt("> ")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			w := c.Writer(&screen)
			for range 50 {
				fmt.Fprintf(w, "line from %d\n", i)
			}
		})
	}
	wg.Wait()
	unit := func(i int) string { return fmt.Sprintf("%sline from %d\n> ", clearLine, i) }
	rest := screen.b.String()
	for len(rest) > 0 {
		matched := false
		for i := range 8 {
			if u := unit(i); len(rest) >= len(u) && rest[:len(u)] == u {
				rest, matched = rest[len(u):], true
				break
			}
		}
		if !matched {
			t.Fatalf("interleaved output at %q", rest[:min(len(rest), 40)])
		}
	}
}
