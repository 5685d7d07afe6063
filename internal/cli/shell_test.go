package cli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/zktest"
)

// shell connects a text-mode shell to server and returns it with its
// standard output and error buffers.
func shell(t *testing.T, ctx context.Context, server string) (*cli.Shell, *lockedBuffer, *lockedBuffer) {
	t.Helper()
	var out, errOut lockedBuffer
	sh := cli.NewShell(cli.Options{
		Server:         server,
		SessionTimeout: 10 * time.Second,
		Out:            &out,
		Err:            &errOut,
		Version:        "test",
		Location:       time.UTC,
	})
	if err := sh.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
	out.take()
	errOut.take()
	return sh, &out, &errOut
}

// exec runs line and checks its exit status and that its standard error
// contains wantErr.
func exec(t *testing.T, ctx context.Context, sh *cli.Shell, errOut *lockedBuffer, line string, wantStatus int, wantErr string) {
	t.Helper()
	st := cli.Status(sh.Exec(ctx, line))
	got := errOut.take()
	if st != wantStatus || !strings.Contains(got, wantErr) {
		t.Errorf("%q: status %d, stderr %q; want %d and %q", line, st, got, wantStatus, wantErr)
	}
}

// TestShellAgainstServer checks commands whose behaviour depends on the
// server's answers: config under a chroot, and deleteall's batch sizes.
func TestShellAgainstServer(t *testing.T) {
	srv := zktest.StartPaddock(t, zktest.PaddockOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root, _, rootErr := shell(t, ctx, srv.Addr)

	// ZooKeeper's getConfig reads the absolute /zookeeper/config: a chroot
	// does not apply to it.
	t.Run("config under a chroot", func(t *testing.T) {
		exec(t, ctx, root, rootErr, "create /app", 0, "Created /app")
		sh, out, errOut := shell(t, ctx, srv.Addr+"/app")
		for _, line := range []string{"config", "config -w", "config -s -c"} {
			exec(t, ctx, sh, errOut, line, 0, "")
			if o := out.take(); strings.Contains(o, "does not exist") {
				t.Errorf("%q printed %q", line, o)
			}
		}
	})

	// ZKUtil.deleteRecursive with a batch size of 0 or less deletes one
	// znode at a time and fails at the first it cannot delete; in batches,
	// a failure is only a warning.
	t.Run("deleteall batch sizes", func(t *testing.T) {
		exec(t, ctx, root, rootErr, "create /del x world:anyone:crwa", 0, "Created /del")
		exec(t, ctx, root, rootErr, "create /del/y", 0, "Created /del/y")
		exec(t, ctx, root, rootErr, "deleteall /del -b 0", 1, "Insufficient permission : /del/y\n")
		exec(t, ctx, root, rootErr, "deleteall /del -b -3", 1, "Insufficient permission : /del/y\n")
		exec(t, ctx, root, rootErr, "deleteall /del", 0, "Failed to delete some node(s) in the subtree!\n")
		exec(t, ctx, root, rootErr, "setAcl /del world:anyone:cdrwa", 0, "")
		exec(t, ctx, root, rootErr, "deleteall /del -b 0", 0, "")
		exec(t, ctx, root, rootErr, "stat /del", 1, "Node does not exist: /del")
	})
}
