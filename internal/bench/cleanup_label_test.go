package bench

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
)

// TestCleanupLabelServerGone kills the server during a run: the cleanup
// cannot delete the root, and the table must not say it did.
func TestCleanupLabelServerGone(t *testing.T) {
	p := zktest.StartPaddock(t, zktest.PaddockOptions{})
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	var once sync.Once
	progress := &cancelWriter{cancel: func() { once.Do(func() { go p.Kill() }) }}
	cfg := DefaultConfig(p.Addr, WorkloadGet)
	cfg.Sessions, cfg.Inflight, cfg.Keys = 1, 2, 10
	cfg.Duration, cfg.SessionTimeout = time.Second, 2*time.Second
	cfg.Progress, cfg.ProgressInterval = progress, 20*time.Millisecond
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := res.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "(deleted)") || !strings.Contains(b.String(), res.Root+" (not deleted: ") {
		t.Errorf("cleanup failed, the table says:\n%s", b.String())
	}
}
