package main

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestShutdownDeadline checks waitShutdown, which bounds how long
// "paddock server" waits for its shutdown after SIGINT/SIGTERM: a shutdown
// that returns in time gives its own error and no stack dump; one that blocks
// past the limit makes waitShutdown log, dump every goroutine's stack and
// return an error.
func TestShutdownDeadline(t *testing.T) {
	const limit = 50 * time.Millisecond
	errBoom := errors.New("boom")
	for _, tc := range []struct {
		name      string
		block     bool  // shutdown blocks until the test releases it
		err       error // what shutdown returns
		wantErr   error // what waitShutdown returns, unless block
		wantStack bool
	}{
		{name: "returns nil in time"},
		{name: "returns an error in time", err: errBoom, wantErr: errBoom},
		{name: "blocks past the limit", block: true, wantStack: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			returned := make(chan struct{})
			shutdown := func() error {
				defer close(returned)
				if tc.block {
					<-release
				}
				return tc.err
			}
			// Release a blocked shutdown and wait for it, so no goroutine
			// outlives the test.
			defer func() {
				close(release)
				select {
				case <-returned:
				case <-time.After(5 * time.Second):
					t.Errorf("shutdown goroutine did not return after its release")
				}
			}()

			var out syncBuffer
			logger := slog.New(slog.NewTextHandler(&out, nil))
			start := time.Now()
			err := waitShutdown(shutdown, limit, logger, &out)
			elapsed := time.Since(start)
			text := out.String()

			if tc.block {
				if err == nil || !strings.Contains(err.Error(), "did not finish within "+limit.String()) {
					t.Errorf("waitShutdown = %v, want a \"did not finish within %v\" error", err, limit)
				}
				if elapsed < limit {
					t.Errorf("waitShutdown returned after %v, before the %v limit", elapsed, limit)
				}
				if !strings.Contains(text, "exiting anyway") {
					t.Errorf("output has no \"exiting anyway\" log line:\n%s", text)
				}
			} else if !errors.Is(err, tc.wantErr) { // errors.Is(err, nil) only for a nil err
				t.Errorf("waitShutdown = %v, want %v", err, tc.wantErr)
			}
			// The blocked shutdown goroutine must be in the dump.
			hasStack := strings.Contains(text, "goroutine ") && strings.Contains(text, "paddock.waitShutdown")
			if hasStack != tc.wantStack {
				t.Errorf("goroutine stacks in output: %v, want %v; output:\n%s", hasStack, tc.wantStack, text)
			}
		})
	}
}
