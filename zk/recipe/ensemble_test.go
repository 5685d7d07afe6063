package recipe_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/paddocktest"
	"github.com/paddockhq/paddock/zk"
	"github.com/paddockhq/paddock/zk/recipe"
)

// orderedHosts tries the hosts in the order given (the default provider
// shuffles them), so that a test knows which member a session starts on.
type orderedHosts struct {
	mu     sync.Mutex
	hosts  []string
	next   int
	failed int
}

func (o *orderedHosts) Next(context.Context) (string, bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	h := o.hosts[o.next%len(o.hosts)]
	o.next++
	o.failed++
	return h, o.failed > len(o.hosts), nil
}

func (o *orderedHosts) Connected() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.failed = 0
	o.next-- // stay on the server that answered
}

func (o *orderedHosts) Len() int { return len(o.hosts) }

func withOrderedHosts() zk.Option {
	return zk.WithHostProvider(func(hosts []string) zk.HostProvider { return &orderedHosts{hosts: hosts} })
}

// TestLockEnsembleKill runs a lock under contention on a three-member
// in-process Paddock ensemble and kills the member the holder is connected
// to: first a follower, then the leader. Mutual exclusion holds throughout
// (checked on the recorded history and on a read-modify-write counter), and
// the holder either keeps the lock, with its node still first, or learns
// from Lost that it lost it. Moving to another follower is quick, so there
// the holder must keep the lock.
func TestLockEnsembleKill(t *testing.T) {
	ens := paddocktest.Start(t, paddocktest.Options{})
	ctx := testCtx(t)
	leader, err := ens.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var followers []*paddocktest.Member
	for _, m := range ens.Members() {
		if m != leader {
			followers = append(followers, m)
		}
	}
	t.Run("follower", func(t *testing.T) {
		killHolderMember(t, ens, followers[0], []*paddocktest.Member{followers[1], leader}, true)
	})
	if err := followers[0].Restart(); err != nil {
		t.Fatal(err)
	}
	if err := ens.WaitServing(ctx); err != nil {
		t.Fatal(err)
	}
	t.Run("leader", func(t *testing.T) {
		killHolderMember(t, ens, leader, followers, false)
	})
}

func addrs(ms []*paddocktest.Member) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ClientAddr())
	}
	return strings.Join(out, ",")
}

// killHolderMember: the holder's session starts on victim (and may move to
// the others); two contenders on the others wait for the lock three times
// each. victim is killed while the holder holds.
func killHolderMember(t *testing.T, ens *paddocktest.Ensemble, victim *paddocktest.Member, others []*paddocktest.Member, mustKeep bool) {
	ctx := testCtx(t)
	rest := addrs(others)
	holder := connect(t, victim.ClientAddr()+","+rest, withOrderedHosts())
	if got := holder.Server(); got != victim.ClientAddr() {
		t.Fatalf("holder connected to %s, want %s", got, victim.ClientAddr())
	}
	cs := []*zk.Conn{connect(t, rest), connect(t, rest)}
	dir := "/" + strings.ReplaceAll(t.Name(), "/", "_")
	counter := dir + "-counter"
	if _, err := cs[0].Create(ctx, counter, []byte("0"), zk.OpenACL, zk.ModePersistent); err != nil {
		t.Fatal(err)
	}
	h := newHistory()
	lh := recipe.NewLock(holder, dir)
	if err := lh.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	h.acquire("holder", true)
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { h.release("holder", true) }) }
	go func() {
		<-lh.Lost()
		release()
	}()

	const rounds = 3
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i, c := range cs {
		who := fmt.Sprint("c", i)
		l := recipe.NewLock(c, dir)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				if err := l.Lock(ctx); err != nil {
					errs <- fmt.Errorf("%s: %w", who, err)
					return
				}
				h.acquire(who, true)
				if err := increment(ctx, c, counter); err != nil {
					errs <- fmt.Errorf("%s: increment: %w", who, err)
				}
				h.release(who, true)
				if err := l.Unlock(ctx); err != nil {
					errs <- fmt.Errorf("%s: Unlock: %w", who, err)
					return
				}
			}
		}()
	}
	waitFor(t, 10*time.Second, "the contenders' nodes", func() bool { return len(children(t, cs[0], dir)) == 3 })

	if err := victim.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the holder to reconnect elsewhere or lose the lock", func() bool {
		s := holder.Server()
		return isClosed(lh.Lost()) || (s != "" && s != victim.ClientAddr() && holder.State() == zk.StateSyncConnected)
	})
	kept := !closedWithin(lh.Lost(), 2*holder.SessionTimeout()/4)
	t.Logf("holder kept the lock: %v (server %s)", kept, holder.Server())
	increments := 2 * rounds
	if kept {
		// The hold is guaranteed: the node is still first, and the
		// holder can work under the lock.
		if _, err := cs[0].Sync(ctx, dir); err != nil {
			t.Fatal(err)
		}
		ch := children(t, cs[0], dir)
		first := ""
		for _, c := range ch {
			if first == "" || c[len(c)-10:] < first[len(first)-10:] {
				first = c
			}
		}
		if dir+"/"+first != lh.Node() {
			t.Errorf("holder says it holds with %s, but the first node is %s (of %v)", lh.Node(), first, ch)
		}
		if err := increment(ctx, holder, counter); err != nil {
			t.Errorf("holder's increment after the move: %v", err)
		}
		increments++
	} else if mustKeep {
		t.Errorf("the holder lost the lock when its follower was killed (it should move to another member within the grace)")
	}
	release()
	if err := lh.Unlock(ctx); err != nil {
		t.Errorf("holder Unlock: %v", err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	h.check(t, 1+2*rounds)
	data, _, err := cs[0].Get(ctx, counter)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != strconv.Itoa(increments) {
		t.Errorf("counter = %s, want %d", data, increments)
	}
}
