package recipe_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/zk/recipe"
)

func init() {
	addServerTests(
		serverTest{"QueueFIFO", testQueueFIFO},
		serverTest{"QueueContention", testQueueContention},
		serverTest{"QueueTakeWaits", testQueueTakeWaits},
		serverTest{"PriorityQueue", testPriorityQueue},
		serverTest{"QueueOfferAnswerLost", testQueueOfferAnswerLost},
	)
}

// testQueueFIFO: one consumer takes the items in the order they were
// offered; Poll on an empty (or missing) queue reports nothing.
func testQueueFIFO(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	q := recipe.NewQueue(c, root(t)+"/q")
	if _, ok, err := q.Poll(ctx); err != nil || ok {
		t.Fatalf("Poll on a missing queue = %v, %v", ok, err)
	}
	const n = 20
	for i := range n {
		if err := q.Offer(ctx, []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := q.Len(ctx); err != nil || got != n {
		t.Errorf("Len = %d, %v; want %d", got, err, n)
	}
	for i := range n {
		data, ok, err := q.Poll(ctx)
		if err != nil || !ok {
			t.Fatalf("Poll %d = %v, %v", i, ok, err)
		}
		if string(data) != fmt.Sprint(i) {
			t.Fatalf("Poll %d took %q: not FIFO", i, data)
		}
	}
	if _, ok, err := q.Poll(ctx); err != nil || ok {
		t.Errorf("Poll on an empty queue = %v, %v", ok, err)
	}
	if left := children(t, c, root(t)+"/q"); len(left) != 0 {
		t.Errorf("queue nodes left (claims included): %v", left)
	}
}

// testQueueContention: three producers and three consumers on separate
// sessions. Every item is taken exactly once, and each consumer takes any
// one producer's items in the order they were offered.
func testQueueContention(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	cs := conns(t, s.proc.Addr, 4)
	dir := root(t)
	const producers, perProducer, consumers = 3, 15, 3
	total := producers * perProducer
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for p := range producers {
		q := recipe.NewQueue(cs[p%2], dir)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perProducer {
				if err := q.Offer(ctx, fmt.Appendf(nil, "%d-%03d", p, i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var mu sync.Mutex
	taken := map[string]int{}
	left := total
	perConsumer := make([][]string, consumers)
	for k := range consumers {
		q := recipe.NewQueue(cs[2+k%2], dir)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if left == 0 {
					mu.Unlock()
					return
				}
				left--
				mu.Unlock()
				data, err := q.Take(ctx)
				if err != nil {
					errs <- fmt.Errorf("consumer %d: %w", k, err)
					return
				}
				mu.Lock()
				taken[string(data)]++
				perConsumer[k] = append(perConsumer[k], string(data))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for p := range producers {
		for i := range perProducer {
			item := fmt.Sprintf("%d-%03d", p, i)
			if n := taken[item]; n != 1 {
				t.Errorf("item %s taken %d times", item, n)
			}
		}
	}
	if len(taken) != total {
		t.Errorf("%d distinct items taken, want %d", len(taken), total)
	}
	for k, items := range perConsumer {
		for p := range producers {
			var mine []string
			for _, it := range items {
				if it[0] == byte('0'+p) {
					mine = append(mine, it)
				}
			}
			if !slices.IsSorted(mine) {
				t.Errorf("consumer %d took producer %d's items out of order: %v", k, p, mine)
			}
		}
	}
}

// testQueueTakeWaits: Take on an empty queue waits for the next Offer,
// from another session; a Take whose ctx ends returns ctx's error.
func testQueueTakeWaits(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	cs := conns(t, s.proc.Addr, 2)
	dir := root(t)
	q := recipe.NewQueue(cs[0], dir)
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := q.Take(short); err == nil {
		t.Fatal("Take on an empty queue returned before any Offer")
	}
	got := make(chan string, 1)
	go func() {
		data, err := q.Take(ctx)
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- string(data)
	}()
	cs[0].Sync(ctx, dir)
	if err := recipe.NewQueue(cs[1], dir).Offer(ctx, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	select {
	case g := <-got:
		if g != "hello" {
			t.Errorf("Take = %s", g)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Take did not return after an Offer")
	}
}

// testPriorityQueue: items come out by priority (lower first, negative
// included), equal priorities in the order offered; plain Queue items
// sharing the directory have priority 0.
func testPriorityQueue(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	c := connect(t, s.proc.Addr)
	dir := root(t)
	pq := recipe.NewPriorityQueue(c, dir)
	offers := []struct {
		data string
		prio int32
	}{
		{"c1", 5}, {"a1", -3}, {"b1", 0}, {"d1", 1 << 30}, {"c2", 5}, {"a2", -3}, {"min", -1 << 31}, {"b2", 0},
	}
	for _, o := range offers {
		if err := pq.Offer(ctx, []byte(o.data), o.prio); err != nil {
			t.Fatal(err)
		}
	}
	if err := recipe.NewQueue(c, dir).Offer(ctx, []byte("b3")); err != nil {
		t.Fatal(err)
	}
	want := []string{"min", "a1", "a2", "b1", "b2", "b3", "c1", "c2", "d1"}
	var got []string
	for range want {
		data, err := pq.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(data))
	}
	if !slices.Equal(got, want) {
		t.Errorf("taken %v, want %v", got, want)
	}
}

// replyDropper is a connection that, once armed, drops itself at the first
// read after it has written a request with opcode op: the server has the
// request, and the client loses its answer.
type replyDropper struct {
	net.Conn
	op uint32

	mu       sync.Mutex
	armed    bool
	dropping bool
	started  bool // the ConnectRequest went first
	pending  []byte
}

func (c *replyDropper) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.pending = append(c.pending, p...)
	for len(c.pending) >= 4 {
		n := int(binary.BigEndian.Uint32(c.pending))
		if len(c.pending) < 4+n {
			break
		}
		if c.started && c.armed && n >= 8 && binary.BigEndian.Uint32(c.pending[8:12]) == c.op {
			c.armed, c.dropping = false, true
		}
		c.started = true
		c.pending = c.pending[4+n:]
	}
	c.mu.Unlock()
	return c.Conn.Write(p)
}

func (c *replyDropper) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	drop := c.dropping
	c.mu.Unlock()
	if drop {
		c.Conn.Close()
		return 0, net.ErrClosed
	}
	return n, err
}

func (c *replyDropper) arm() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed = true
}

// testQueueOfferAnswerLost: the answer to each Offer's multi is lost (the
// connection drops once the request is written), though the server
// applies it: Offer looks for its marker rather than offer again, and the
// queue ends with every item once, each a bare "qn-" node. The markers
// stay while the session lives (the lost attempts could still be applied:
// testOfferLateAttemptAfterRetry), and go with it.
func testQueueOfferAnswerLost(t *testing.T, s *testServer) {
	ctx := testCtx(t)
	var last lastConn[*replyDropper]
	c := connect(t, s.proc.Addr, last.option(func(nc net.Conn) *replyDropper {
		return &replyDropper{Conn: nc, op: 14} // multi
	}))
	checker := connect(t, s.proc.Addr)
	dir := root(t)
	q := recipe.NewQueue(c, dir)
	const n = 10
	for i := range n {
		last.with((*replyDropper).arm)
		if err := q.Offer(ctx, fmt.Appendf(nil, "%d", i)); err != nil {
			t.Fatalf("Offer %d: %v", i, err)
		}
	}
	if got, err := q.Len(ctx); err != nil || got != n {
		t.Errorf("Len = %d, %v; want %d", got, err, n)
	}
	c.Close()
	item := regexp.MustCompile(`^qn-\d{10}$`)
	seen := map[string]int{}
	for _, ch := range children(t, checker, dir) {
		if !item.MatchString(ch) {
			t.Errorf("node %s in the queue is not an item", ch)
			continue
		}
		data, _, err := checker.Get(ctx, dir+"/"+ch)
		if err != nil {
			t.Fatal(err)
		}
		seen[string(data)]++
	}
	for i := range n {
		if k := seen[fmt.Sprint(i)]; k != 1 {
			t.Errorf("item %d is in the queue %d times", i, k)
		}
	}
}
