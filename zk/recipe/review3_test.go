package recipe_test

import (
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/paddockhq/paddock/zk"
	"github.com/paddockhq/paddock/zk/recipe"
)

func init() {
	addServerTests(
		serverTest{"OfferLateAttemptAfterRetry", testOfferLateAttemptAfterRetry},
	)
}

// queueData returns the data of dir's queue items ("qn-" nodes), in
// sequence order.
func queueData(t *testing.T, c *zk.Conn, dir string) []string {
	t.Helper()
	item := regexp.MustCompile(`^qn-\d{10}$`)
	var out []string
	for _, ch := range sortedChildren(t, c, dir) {
		if !item.MatchString(ch) {
			continue
		}
		data, _, err := c.Get(testCtx(t), dir+"/"+ch)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(data))
	}
	return out
}

func sortedChildren(t *testing.T, c *zk.Conn, dir string) []string {
	t.Helper()
	kids := children(t, c, dir)
	// Plain "qn-" items of one directory: names sort as sequence numbers
	// (below the counter's overflow).
	slices.Sort(kids)
	return kids
}

// testOfferLateAttemptAfterRetry: an Offer's multi is in flight when the
// connection is lost; Offer finds no marker, offers again and succeeds.
// The first attempt is then applied late (as a server may apply a request
// of a dropped connection; here the test applies it, on the producer's
// session, as testTakeSettlesAfterCtxEnds does for a take). It must fail
// on the marker: the item is in the queue once, not twice.
func testOfferLateAttemptAfterRetry(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	hold := newOpHolder(14) // multi
	c := connect(t, s.proc.Addr, hold.option())
	checker := connect(t, s.proc.Addr)
	dir := root(t)
	q := recipe.NewQueue(c, dir)
	if err := q.Offer(ctx, []byte("0")); err != nil { // makes the directory
		t.Fatal(err)
	}
	hold.arm()
	done := make(chan error, 1)
	go func() { done <- q.Offer(ctx, []byte("1")) }()
	select {
	case <-hold.hit:
	case <-time.After(10 * time.Second):
		t.Fatal("Offer sent no multi")
	}
	hold.cut()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Offer after its first answer was lost: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Offer did not return")
	}
	hold.mu.Lock()
	frame := hold.held
	hold.mu.Unlock()
	marker := heldString(t, frame, dir+"/offer-")
	_, lateErr := c.Multi(ctx,
		&zk.CreateOp{Path: dir + "/qn-", Data: []byte("1"), ACL: zk.OpenACL, Mode: zk.ModePersistentSequential},
		&zk.CreateOp{Path: marker, ACL: zk.OpenACL, Mode: zk.ModeEphemeral},
	)
	if got, want := queueData(t, checker, dir), []string{"0", "1"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("queue %q, want %q (the late attempt: %v)", got, want, lateErr)
	}
	// Consumers see the items only, whatever else the directory holds.
	if n, err := q.Len(ctx); err != nil || n != 2 {
		t.Errorf("Len = %d, %v; want 2", n, err)
	}
}
