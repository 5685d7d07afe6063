package paddocktest_test

import (
	"testing"

	"github.com/paddockhq/paddock/paddocktest"
)

// A member paused and then killed comes back from Restart as a new process
// would: not paused, so it catches up and serves its clients.
func TestRestartAfterPauseServes(t *testing.T) {
	ens := paddocktest.Start(t, paddocktest.Options{})
	ctx := testCtx(t)
	leader, err := ens.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lc := connect(t, ctx, leader.ClientAddr())
	m := others(ens, leader)[0]
	m.Pause()
	if err := m.Kill(); err != nil {
		t.Fatal(err)
	}
	create(t, ctx, lc, "/while-down", "x")
	if err := m.Restart(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, catchUp, "the member paused, killed and restarted does not serve", func() bool { return m.Mode() == "follower" })
	mc := connect(t, ctx, m.ClientAddr())
	if got := readAfterSync(t, ctx, mc, "/while-down"); got != "x" {
		t.Fatalf("restarted member read %q", got)
	}
}
