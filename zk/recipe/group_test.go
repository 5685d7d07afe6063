package recipe_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/zk/recipe"
)

func init() {
	addServerTests(serverTest{"Group", testGroup})
}

// memberData returns the members' data, in order.
func memberData(ms []recipe.Member) []string {
	var out []string
	for _, m := range ms {
		out = append(out, string(m.Data))
	}
	return out
}

// awaitView waits until the view's membership is want.
func awaitView(t *testing.T, v *recipe.GroupView, want []string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if got := memberData(v.Members()); slices.Equal(got, want) {
			return
		}
		select {
		case _, ok := <-v.Updates():
			if !ok {
				t.Fatalf("view stopped (%v) before showing %v", v.Err(), want)
			}
		case <-deadline:
			t.Fatalf("view shows %v, want %v", memberData(v.Members()), want)
		}
	}
}

// testGroup: members join from four sessions, one after the other; a view
// opened before any of them lists them in the order they joined, and
// follows a Leave and a session that ends (its member leaves by itself).
func testGroup(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	cs := conns(t, s.proc.Addr, 4)
	dir := root(t)
	v, err := recipe.NewGroup(cs[0], dir).Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close(ctx)
	if got := v.Members(); len(got) != 0 {
		t.Fatalf("initial view %v, want empty", got)
	}
	var ms []*recipe.Membership
	var want []string
	for i, c := range cs {
		m, err := recipe.NewGroup(c, dir).Join(ctx, []byte(fmt.Sprint("m", i)))
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
		want = append(want, fmt.Sprint("m", i))
	}
	awaitView(t, v, want)
	got, err := recipe.NewGroup(cs[1], dir).Members(ctx)
	if err != nil || !slices.Equal(memberData(got), want) {
		t.Errorf("Members = %v, %v; want %v", memberData(got), err, want)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Seq <= got[i-1].Seq {
			t.Errorf("members not in sequence order: %+v", got)
		}
	}
	if err := ms[1].Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if !isClosed(ms[1].Lost()) {
		t.Error("Lost open after Leave")
	}
	awaitView(t, v, []string{"m0", "m2", "m3"})
	// A member whose session ends leaves by itself.
	cs[2].Close()
	awaitView(t, v, []string{"m0", "m3"})
	if !closedWithin(ms[2].Lost(), 10*time.Second) {
		t.Error("a member whose session was closed has Lost open")
	}
	if isClosed(ms[0].Lost()) {
		t.Error("a member still in the group has Lost closed")
	}

	// Many joins at once, from three sessions: the view ends with all of
	// them, in sequence order.
	var wg sync.WaitGroup
	for i := range 9 {
		g := recipe.NewGroup(cs[[]int{0, 1, 3}[i%3]], dir)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := g.Join(ctx, []byte(fmt.Sprint("x", i))); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	waitFor(t, 10*time.Second, "eleven members in the view", func() bool { return len(v.Members()) == 11 })
	all := v.Members()
	for i := 1; i < len(all); i++ {
		if all[i].Seq <= all[i-1].Seq {
			t.Errorf("view not in join order: %d after %d", all[i].Seq, all[i-1].Seq)
		}
	}
	if got, err := recipe.NewGroup(cs[0], dir).Members(ctx); err != nil || len(got) != 11 {
		t.Errorf("Members = %d members, %v; want 11", len(got), err)
	}

	v.Close(ctx)
	if _, ok := <-v.Updates(); ok {
		// One value may still be buffered; the channel closes after it.
		if _, ok := <-v.Updates(); ok {
			t.Error("Updates still open after Close")
		}
	}
}
