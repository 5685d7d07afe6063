package consistency_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/paddockhq/paddock/zk"
)

// seqClient creates sequential znodes /seq/n-… whose data, "c<id>-<n>",
// is unique, and remembers which creates were acknowledged (with the name
// they got) and which had an unknown outcome.
type seqClient struct {
	e      *env
	id     int
	prefer int

	acked    map[string]string // name -> data
	maybe    map[string]bool   // data of creates of unknown outcome
	sessions int
}

func (c *seqClient) run(ctx context.Context) {
	c.acked, c.maybe = map[string]string{}, map[string]bool{}
	var conn *zk.Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	for n := 0; ctx.Err() == nil; n++ {
		if conn == nil {
			dctx, cancel := context.WithTimeout(ctx, callTimeout)
			var err error
			conn, err = c.e.dial(dctx, c.prefer)
			cancel()
			if err != nil {
				conn = nil
				continue
			}
			c.sessions++
		}
		data := fmt.Sprintf("c%d-%d", c.id, n)
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
		name, err := conn.Create(cctx, "/seq/n-", []byte(data), zk.OpenACL, zk.ModePersistentSequential)
		cancel()
		if err == nil {
			c.acked[name] = data
		} else {
			c.maybe[data] = true
		}
		if sessionLost(err) {
			conn.Close()
			conn = nil
		}
	}
}

// checkSeq lists /seq through every member after a Sync and checks that
// each holds every acknowledged create, under its name and with its data,
// and no data twice; and that all members hold the same children.
func checkSeq(t *testing.T, e *env, clients []*seqClient) {
	acked, maybe := map[string]string{}, map[string]bool{}
	for _, c := range clients {
		for name, data := range c.acked {
			acked[name] = data
		}
		for data := range c.maybe {
			maybe[data] = true
		}
	}
	t.Logf("%d acknowledged creates, %d of unknown outcome", len(acked), len(maybe))
	if len(acked) < 20 {
		t.Errorf("only %d creates acknowledged: the workload made too little progress to tell anything", len(acked))
	}
	for _, v := range seqOrderViolations(acked) {
		t.Error(v)
	}
	var first []string
	for _, m := range e.ens.Members() {
		conn, err := e.dialOnly(callCtx(t), m.ID())
		if err != nil {
			t.Fatalf("connect to %v: %v", m, err)
		}
		if _, err := conn.Sync(callCtx(t), "/seq"); err != nil {
			t.Fatalf("sync through %v: %v", m, err)
		}
		names, _, err := conn.Children(callCtx(t), "/seq")
		if err != nil {
			t.Fatalf("list /seq through %v: %v", m, err)
		}
		slices.Sort(names)
		data := readData(t, conn, "/seq", names)
		conn.Close()

		for _, v := range seqViolations(acked, maybe, names, data) {
			t.Errorf("%v: %s", m, v)
		}
		if first == nil {
			first = names
		} else if !slices.Equal(first, names) {
			t.Errorf("%v lists %d children of /seq, member 1 %d: members differ", m, len(names), len(first))
		}
	}
}

// seqViolations checks the children of /seq one member lists (names, with
// their data) against the creates: each acknowledged create is present
// under its name with its data, no data is in two children (a create
// applied twice), and every child was written by an acknowledged create
// or one of unknown outcome (maybe, by data).
func seqViolations(acked map[string]string, maybe map[string]bool, names, data []string) []string {
	var out []string
	present := map[string]string{} // name -> data
	owner := map[string]string{}   // data -> name
	for i, name := range names {
		d := data[i]
		present["/seq/"+name] = d
		if prev, dup := owner[d]; dup {
			out = append(out, fmt.Sprintf("data %q in both %s and %s: a create applied twice", d, prev, name))
		}
		owner[d] = name
		if _, ok := acked["/seq/"+name]; !ok && !maybe[d] {
			out = append(out, fmt.Sprintf("%s holds %q, which no create of unknown outcome wrote", name, d))
		}
	}
	for name, d := range acked {
		got, ok := present[name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("acknowledged create %s (%q) is missing", name, d))
		case got != d:
			out = append(out, fmt.Sprintf("acknowledged create %s holds %q, want %q", name, got, d))
		}
	}
	return out
}

// seqOrderViolations checks that each client's acknowledged creates got
// sequence numbers in the order the client made them (their data,
// "c<id>-<n>", numbers them): a create is made only after the one before it
// was answered, so it must apply after it, whichever session made it.
func seqOrderViolations(acked map[string]string) []string {
	type create struct {
		n    int
		name string
	}
	byClient := map[int][]create{}
	for name, data := range acked {
		var id, n int
		if _, err := fmt.Sscanf(data, "c%d-%d", &id, &n); err != nil {
			return []string{fmt.Sprintf("acknowledged create %s holds %q, not c<id>-<n>", name, data)}
		}
		byClient[id] = append(byClient[id], create{n, name})
	}
	var out []string
	for _, id := range slices.Sorted(maps.Keys(byClient)) {
		cs := byClient[id]
		slices.SortFunc(cs, func(a, b create) int { return a.n - b.n })
		for i := 1; i < len(cs); i++ {
			// Names are the prefix and %010d: same length, so they
			// compare as their numbers do (before any wrap-around).
			if cs[i].name <= cs[i-1].name {
				out = append(out, fmt.Sprintf("client %d: create %d got %s, after its create %d got %s: out of order",
					id, cs[i].n, cs[i].name, cs[i-1].n, cs[i-1].name))
			}
		}
	}
	return out
}

// readData reads the data of dir's children names, a batch per MultiRead.
func readData(t *testing.T, conn *zk.Conn, dir string, names []string) []string {
	t.Helper()
	out := make([]string, 0, len(names))
	for batch := range slices.Chunk(names, 256) {
		ops := make([]zk.Op, len(batch))
		for i, n := range batch {
			ops[i] = &zk.GetDataOp{Path: dir + "/" + n}
		}
		res, err := conn.MultiRead(callCtx(t), ops...)
		if err != nil {
			t.Fatalf("read children of %s: %v", dir, err)
		}
		for i, r := range res {
			if r.Err != nil {
				t.Fatalf("read %s/%s: %v", dir, batch[i], r.Err)
			}
			out = append(out, string(r.Data))
		}
	}
	return out
}
