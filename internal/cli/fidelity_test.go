package cli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/zktest"
	"github.com/paddockhq/paddock/zk"
)

// closedEvent is what zkCli's watcher prints when the session is closed.
const closedEvent = "\nWATCHER::\n\nWatchedEvent state:Closed type:None path:null\n"

// settled returns a connected shell whose SyncConnected event has been
// printed and taken.
func settled(t *testing.T, ctx context.Context, server string) (*cli.Shell, *lockedBuffer, *lockedBuffer) {
	t.Helper()
	sh, out, errOut := shell(t, ctx, server)
	if err := sh.Exec(ctx, "sync /"); err != nil {
		t.Fatal(err)
	}
	out.take()
	return sh, out, errOut
}

// TestCloseEventBeforeNextCommand checks that close, quit and connect print
// the old session's Closed event before they return, as zkCli does (its
// ZooKeeper.close queues the event before returning), so that it precedes
// the next command's output instead of coming after it or not at all.
func TestCloseEventBeforeNextCommand(t *testing.T) {
	srv := zktest.StartPaddock(t, zktest.PaddockOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	t.Run("close", func(t *testing.T) {
		sh, out, _ := settled(t, ctx, srv.Addr)
		if err := sh.Exec(ctx, "close"); err != nil {
			t.Fatal(err)
		}
		if got := out.take(); got != closedEvent {
			t.Fatalf("close printed %q, want %q", got, closedEvent)
		}
		if err := sh.Exec(ctx, "ls /"); err != nil {
			t.Fatal(err)
		}
		if got := out.take(); got != "Not connected\n" {
			t.Errorf("ls after close printed %q, want %q", got, "Not connected\n")
		}
	})
	t.Run("quit", func(t *testing.T) {
		sh, out, _ := settled(t, ctx, srv.Addr)
		if err := sh.Exec(ctx, "quit"); err != nil {
			t.Fatal(err)
		}
		if got := out.take(); got != closedEvent {
			t.Errorf("quit printed %q, want %q", got, closedEvent)
		}
	})
	t.Run("connect", func(t *testing.T) {
		sh, out, _ := settled(t, ctx, srv.Addr)
		if err := sh.Exec(ctx, "connect"); err != nil {
			t.Fatal(err)
		}
		if err := sh.Exec(ctx, "ls /zookeeper"); err != nil {
			t.Fatal(err)
		}
		want := closedEvent + "\nWATCHER::\n\nWatchedEvent state:SyncConnected type:None path:null\n[config, quota]\n"
		if got := out.take(); got != want {
			t.Errorf("connect then ls printed %q, want %q", got, want)
		}
	})
}

// TestOneShotHistory checks history run as a one-shot command, which is not
// recorded: zkCli prints the missing entry as Java prints a null String.
func TestOneShotHistory(t *testing.T) {
	srv := zktest.StartPaddock(t, zktest.PaddockOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sh, out, _ := shell(t, ctx, srv.Addr)
	if err := sh.ExecArgs(ctx, []string{"history"}); err != nil {
		t.Fatal(err)
	}
	if got := out.take(); got != "0 - null\n" {
		t.Errorf("history printed %q, want %q", got, "0 - null\n")
	}
}

// TestListQuotaInvalidPath checks that listquota reports an invalid quota
// path with the client's IllegalArgumentException message, as zkCli does.
func TestListQuotaInvalidPath(t *testing.T) {
	srv := zktest.StartPaddock(t, zktest.PaddockOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sh, _, errOut := shell(t, ctx, srv.Addr)
	exec(t, ctx, sh, errOut, "listquota /", 1,
		"absolute path is /zookeeper/quota//zookeeper_limits\n"+
			`Invalid path string "/zookeeper/quota//zookeeper_limits" caused by empty node name specified @17`+"\n")
}

// TestGetMalformedUTF8 checks that data which is not valid UTF-8 prints as
// Java's new String(data, UTF_8) decodes it: one U+FFFD for each maximal
// part of a sequence that could start a character, then one for each other
// byte.
func TestGetMalformedUTF8(t *testing.T) {
	srv := zktest.StartPaddock(t, zktest.PaddockOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := zk.Connect(ctx, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// What zkCli 3.8 on Java 17 prints for each, seen against ZooKeeper 3.8.
	const r = "\uFFFD"
	cases := []struct{ data, want string }{
		{"\xe2\x82", r},
		{"\xe2\x82A", r + "A"},
		{"\xf0\x9f\x98", r},
		{"\xf0\x9f\x98A", r + "A"},
		{"\xed\xa0\x80", r}, // an encoded surrogate is one sequence to Java
		{"\xed\xa0A", r + "A"},
		{"\xc0\x80", r + r},
		{"\xff\xfe", r + r},
		{"\xf4\x90\x80\x80", r + r + r + r},
		{"a\x00b", "a\x00b"},
		{"\xe0\x80\x80", r + r + r},
		{"\xf0\x80\x80\x80", r + r + r + r},
		{"\xf8\x88\x80\x80\x80", r + r + r + r + r},
		{"\xe2\x28\xa1", r + "(" + r},
		{"\x80\x80", r + r},
		{"\xe2\x82\xac\xe2", "€" + r},
	}
	sh, out, _ := settled(t, ctx, srv.Addr)
	for i, c := range cases {
		path := "/bytes" + string(rune('a'+i))
		if _, err := conn.Create(ctx, path, []byte(c.data), zk.OpenACL, zk.ModePersistent); err != nil {
			t.Fatal(err)
		}
		if err := sh.Exec(ctx, "get "+path); err != nil {
			t.Fatal(err)
		}
		if got := out.take(); got != c.want+"\n" {
			t.Errorf("get of %q printed %q, want %q", c.data, got, c.want+"\n")
		}
	}
}

// TestGetEphemeralsUnderChroot checks that getEphemerals prints the paths
// the server returns, chroot included, as zkCli does (the Java client does
// not strip the chroot from them), and that it takes a prefix as the Java
// client sends it, without the chroot: under /app, /a finds /app/e and /e
// finds nothing.
func TestGetEphemeralsUnderChroot(t *testing.T) {
	srv := zktest.StartPaddock(t, zktest.PaddockOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root, _, rootErr := shell(t, ctx, srv.Addr)
	exec(t, ctx, root, rootErr, "create /app", 0, "Created /app")
	sh, out, errOut := settled(t, ctx, srv.Addr+"/app")
	exec(t, ctx, sh, errOut, "create -e /e", 0, "Created /e")
	for _, c := range []struct{ line, want string }{
		{"getEphemerals", "[/app/e]\n"},
		{"getEphemerals /", "[/app/e]\n"},
		{"getEphemerals /a", "[/app/e]\n"},
		{"getEphemerals /app/e", "[/app/e]\n"},
		{"getEphemerals /e", "[]\n"},
	} {
		exec(t, ctx, sh, errOut, c.line, 0, "")
		if got := out.take(); got != c.want {
			t.Errorf("%q printed %q, want %q", c.line, got, c.want)
		}
	}
}

// TestJSONKeepsStandardErrorForACLWarnings checks the documented contract of
// --json: nothing goes to standard error but ACL-parsing warnings.
func TestJSONKeepsStandardErrorForACLWarnings(t *testing.T) {
	srv := zktest.StartPaddock(t, zktest.PaddockOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut lockedBuffer
	sh := cli.NewShell(cli.Options{Server: srv.Addr, SessionTimeout: 10 * time.Second, Out: &out, Err: &errOut, JSON: true})
	if err := sh.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	for _, c := range []struct {
		line, wantErr string
	}{
		{"create /j x", ""},
		{"get /j watch", ""},
		{"stat /j watch", ""},
		{"ls /j watch", ""},
		{"create /j/a x badacl", "badacl does not have the form scheme:id:perm\n"},
		{"create /j/b x auth::cdrwa", ""},
		{"delete /j 7", ""},
	} {
		_ = sh.Exec(ctx, c.line)
		if got := errOut.take(); got != c.wantErr {
			t.Errorf("%q wrote %q to standard error, want %q", c.line, got, c.wantErr)
		}
		if o := out.take(); !strings.HasPrefix(o, "{") {
			t.Errorf("%q printed %q", c.line, o)
		}
	}
}
