package fsm

import (
	"fmt"
	"slices"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// TestFailedMultiKeepsChildOrder deletes children of a parent in a multi
// that fails afterwards and checks that the parent lists its children in
// the order it did before: a failed multi leaves no trace, the order of
// children included.
func TestFailedMultiKeepsChildOrder(t *testing.T) {
	h := newHarness(t, Options{})
	h.openSession(sess1)
	h.must(sess1, nil, create("/p", "", 0))
	for i := range 20 {
		h.must(sess1, nil, create(fmt.Sprintf("/p/c%02d", (i*7)%20), "", 0))
	}
	before := h.node("/p").Children()
	r := h.multi(sess1, nil,
		del("/p/c03", -1),
		del("/p/c00", -1),
		create("/p/new", "", 0),
		del("/p/c10", -1),
		check("/p/missing", 0), // fails: every op is undone
	)
	if len(r.Ops) != 5 || r.Ops[4].Err != proto.ErrNoNode || len(r.Changes) != 0 {
		t.Fatalf("the multi did not fail at the check: %+v", r)
	}
	for range 5 {
		if got := h.node("/p").Children(); !slices.Equal(got, before) {
			t.Fatalf("after the failed multi /p lists\n%v\nbefore it\n%v", got, before)
		}
	}
}
