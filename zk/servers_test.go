package zk_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/zktest"
	"github.com/paddockhq/paddock/zk"
)

// serverTest is a test that runs against every server kind. Files add their
// tests to serverTests from init; TestAgainstServers starts Apache ZooKeeper
// 3.8 and Paddock once and runs each test against both, as
// TestAgainstServers/<server>/<name>.
type serverTest struct {
	name string
	run  func(t *testing.T, s *testServer)
}

var serverTests []serverTest

// addServerTests registers tests; call it from init.
func addServerTests(tests ...serverTest) { serverTests = append(serverTests, tests...) }

// testServer is one running server shared by the tests of a kind.
type testServer struct {
	kind string // "paddock" or "zookeeper"
	proc *zktest.Process
}

// root returns a fresh path for the test to work under, created on the
// server, so that tests sharing a server do not meet.
func (s *testServer) root(t *testing.T, c *zk.Conn) string {
	t.Helper()
	p := "/" + strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	if _, err := c.Create(testCtx(t), p, nil, zk.OpenACL, zk.ModePersistent); err != nil {
		t.Fatalf("create test root %s: %v", p, err)
	}
	return p
}

func TestAgainstServers(t *testing.T) {
	servers := []*testServer{
		{kind: "paddock", proc: zktest.StartPaddock(t, zktest.PaddockOptions{})},
		{kind: "zookeeper", proc: zktest.StartZooKeeper(t, zktest.ZKOptions{})},
	}
	for _, s := range servers {
		t.Run(s.kind, func(t *testing.T) {
			for _, st := range serverTests {
				t.Run(st.name, func(t *testing.T) { st.run(t, s) })
			}
		})
	}
}

// testCtx returns a context that ends with the test or after 30 s.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// connect opens a session to addr (a connect string) and closes it when the
// test ends.
func connect(t *testing.T, addr string, opts ...zk.Option) *zk.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := zk.Connect(ctx, addr, append([]zk.Option{zk.WithSessionTimeout(10 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatalf("connect %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
