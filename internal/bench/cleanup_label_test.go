package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestCleanupLabelServerGone kills the server during a run: the cleanup
// cannot delete the root, and the table must not say it did.
func TestCleanupLabelServerGone(t *testing.T) {
	res := runServerKilled(t, 1, 2, time.Second)
	var b bytes.Buffer
	if err := res.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "(deleted)") || !strings.Contains(b.String(), res.Root+" (not deleted: ") {
		t.Errorf("cleanup failed, the table says:\n%s", b.String())
	}
}
