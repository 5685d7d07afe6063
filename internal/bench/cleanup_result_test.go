package bench

import (
	"bytes"
	"strings"
	"testing"
)

// TestCleanupLabel checks the root's row of the table against the cleanup's
// outcome.
func TestCleanupLabel(t *testing.T) {
	for _, tt := range []struct {
		res  Result
		want string
	}{
		{Result{Root: "/bench-00", Kept: true}, "/bench-00 (kept)"},
		{Result{Root: "/bench-00", CleanupDeleted: 12}, "/bench-00 (deleted)"},
		{Result{Root: "/bench-00", CleanupErrors: 2, CleanupError: "zk: connection loss"},
			"/bench-00 (not deleted: zk: connection loss)"},
		{Result{Root: "/bench-00", CleanupErrors: 1, CleanupDeleted: 500, CleanupError: "zk: connection loss"},
			"/bench-00 (partly deleted, 500 znodes: zk: connection loss)"},
	} {
		var b bytes.Buffer
		if err := tt.res.WriteTable(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tt.want+"\n") {
			t.Errorf("table lacks %q:\n%s", tt.want, b.String())
		}
	}
}
